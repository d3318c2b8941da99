import { APP, cookieFor } from '../../controller/pipeline/cookies.js';
import { type Desired, type DesiredFlow, goto, TO_CONTROLLER } from '../../controller/pipeline/flow.js';
import { type MissAction, PIPELINE } from '../../controller/pipeline/tables.js';

function missInstructions(miss: MissAction): DesiredFlow['instructions'] {
  if (miss.kind === 'goto') return [goto(miss.table)];
  return miss.kind === 'controller' ? TO_CONTROLLER : [];
}

/** The table-miss flow of every table, straight from the pipeline declaration. */
export function compute(): Desired {
  const flows: DesiredFlow[] = PIPELINE.map((t) => ({
    tableId: t.id,
    priority: 0,
    cookie: cookieFor('pipeline', `table-miss/${t.id}`),
    match: [],
    instructions: missInstructions(t.miss),
  }));
  return { flows, groups: [] };
}

export const appId = APP.pipeline;
