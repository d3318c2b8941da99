import { APP, cookieFor } from '../../controller/pipeline/cookies.js';
import { type Desired, type DesiredFlow, goto, TO_CONTROLLER } from '../../controller/pipeline/flow.js';
import { REG_VIA_NEXTHOP } from '../../controller/pipeline/registers.js';
import { type MissAction, PIPELINE, TABLE } from '../../controller/pipeline/tables.js';

/**
 * Above every endpoint's l3-neighbor flow (100), below the next hops weft learned (110): a packet
 * a static route sends to a next hop whose MAC is not learned goes up to the controller, which
 * resolves it by ARP (controller/router), rather than to an endpoint that happens to hold its
 * destination address.
 */
export const NEXTHOP_UNRESOLVED_PRIORITY = 105;

function missInstructions(miss: MissAction): DesiredFlow['instructions'] {
  if (miss.kind === 'goto') return [goto(miss.table)];
  return miss.kind === 'controller' ? TO_CONTROLLER : [];
}

/** The table-miss flow of every table, straight from the pipeline declaration, and the unresolved next hop's. */
export function compute(): Desired {
  const flows: DesiredFlow[] = PIPELINE.map((t) => ({
    tableId: t.id,
    priority: 0,
    cookie: cookieFor('pipeline', `table-miss/${t.id}`),
    match: [],
    instructions: missInstructions(t.miss),
  }));
  flows.push({
    tableId: TABLE.L3_NEIGHBOR,
    priority: NEXTHOP_UNRESOLVED_PRIORITY,
    cookie: cookieFor('pipeline', 'nexthop-unresolved'),
    match: [{ field: REG_VIA_NEXTHOP, value: 1 }],
    instructions: TO_CONTROLLER,
  });
  return { flows, groups: [] };
}

export const appId = APP.pipeline;
