import type { DropsAnswer, ObjectCounters, RouterCounters } from '../../northbound/counters-schema.js';
import type { MultipartReplyBody, MultipartRequestBody } from '../../southbound/openflow/codec/index.js';
import { ofpg, ofpp, ofptt } from '../../southbound/openflow/codec/index.js';
import { OfpErrorReply } from '../../southbound/openflow/session/session-errors.js';
import {
  dropCounters,
  objectCounters,
  objectSelector,
  portCounters,
  SG_DENIED_SELECTORS,
  type SwitchFlows,
  TABLE_MISS_SELECTOR,
  type Unreachable,
} from './counters.js';
import { type LimitedPort, meterStatsRequest, portLimits, qosCounters } from './meter-counters.js';
import { routerCounters, routerSelector } from './router-counters.js';

/** What the counters read of a connected switch. */
export interface CounterSwitch {
  datapathId: string;
  chassis?: string;
  multipart(body: MultipartRequestBody, timeoutMs?: number): Promise<MultipartReplyBody[]>;
}

/** A switch that does not answer within this is reported unreachable, not waited for. */
const TIMEOUT_MS = 3000;

/** Flows by cookie (and mask), in one table when `tableId` is given. */
type FlowSelector = { cookie: bigint; cookieMask: bigint; tableId?: number };

const flowsOf = (selector: FlowSelector): MultipartRequestBody => ({
  kind: 'FLOW',
  tableId: ofptt.ALL,
  outPort: ofpp.ANY,
  outGroup: ofpg.ANY,
  match: [],
  ...selector,
});

/** The same FLOW stats request to every switch at once; who answered and who did not. */
async function askAll(
  switches: readonly CounterSwitch[],
  selectors: ReadonlyArray<FlowSelector>,
): Promise<{ answered: SwitchFlows[]; unreachable: Unreachable[] }> {
  const answered: SwitchFlows[] = [];
  const unreachable: Unreachable[] = [];
  await Promise.all(
    switches.map(async (sw) => {
      const where = { datapathId: sw.datapathId, ...(sw.chassis ? { chassis: sw.chassis } : {}) };
      try {
        const replies = await Promise.all(selectors.map((s) => sw.multipart(flowsOf(s), TIMEOUT_MS)));
        const flows = replies.flat().flatMap((b) => (b.kind === 'FLOW' ? b.flows : []));
        answered.push({ ...where, flows });
      } catch (err) {
        unreachable.push({ ...where, error: err instanceof Error ? err.message : String(err) });
      }
    }),
  );
  answered.sort((a, b) => a.datapathId.localeCompare(b.datapathId));
  return { answered, unreachable };
}

/**
 * Counters of the flows owned by any of `objectKeys` (cookie hashes), on every switch; with a
 * bound endpoint's `port`, its port stats, and with its limits (`port.qos`) its meters' stats.
 */
export async function readObjectCounters(
  switches: readonly CounterSwitch[],
  kind: ObjectCounters['kind'],
  id: string,
  objectKeys: readonly string[],
  port?: { chassis: string; ofport: number; qos?: LimitedPort['qos'] | undefined },
): Promise<ObjectCounters> {
  const [{ answered, unreachable }, portStats, qos] = await Promise.all([
    askAll(switches, objectKeys.map(objectSelector)),
    port ? readPort(switches, port.chassis, port.ofport) : undefined,
    port?.qos ? readQos(switches, { ...port, qos: port.qos }) : undefined,
  ]);
  return objectCounters(kind, id, answered, unreachable, portStats, qos);
}

/**
 * The endpoint's meters, with one METER stats request to its own hypervisor (the only switch that
 * has them); undefined when it has no limit. Never fails: what cannot be read is a note.
 */
async function readQos(switches: readonly CounterSwitch[], port: LimitedPort) {
  const limits = portLimits(port);
  if (limits.length === 0) return undefined;
  const { chassis } = port;
  const sw = switches.find((s) => s.chassis === chassis);
  if (!sw) return qosCounters(limits, chassis, { note: `${chassis} is not connected: no meter counts` });
  try {
    const replies = await sw.multipart(meterStatsRequest(limits), TIMEOUT_MS);
    const meters = replies.flatMap((b) => (b.kind === 'METER' ? b.meters : []));
    return qosCounters(limits, chassis, { meters });
  } catch (err) {
    // OVS refuses the stats of one meter it does not have: the same as an answer without it.
    if (err instanceof OfpErrorReply && err.codeName === 'OFPMMFC_UNKNOWN_METER') {
      return qosCounters(limits, chassis, { meters: [] });
    }
    const why = err instanceof Error ? err.message : String(err);
    return qosCounters(limits, chassis, { note: `no answer from ${chassis}: ${why}` });
  }
}

async function readPort(switches: readonly CounterSwitch[], chassis: string, ofport: number) {
  const sw = switches.find((s) => s.chassis === chassis);
  if (!sw) return undefined;
  try {
    const replies = await sw.multipart({ kind: 'PORT_STATS', portNo: ofport }, TIMEOUT_MS);
    const stats = replies
      .flatMap((b) => (b.kind === 'PORT_STATS' ? b.ports : []))
      .find((p) => p.portNo === ofport);
    return stats ? portCounters(sw.datapathId, chassis, stats) : undefined;
  } catch {
    return undefined; // the flow counters still answer; the switch is listed unreachable there
  }
}

/** Table-miss drops of every switch, and the security-group denials logged instead (the same drops). */
export async function readDrops(switches: readonly CounterSwitch[]): Promise<DropsAnswer> {
  const { answered, unreachable } = await askAll(switches, [TABLE_MISS_SELECTOR, ...SG_DENIED_SELECTORS]);
  return dropCounters(answered, unreachable);
}

/** A router's own flows on every switch, summed by what they did (routed, answered, dropped). */
export async function readRouterCounters(
  switches: readonly CounterSwitch[],
  routerId: string,
): Promise<RouterCounters> {
  const { answered, unreachable } = await askAll(switches, [routerSelector(routerId)]);
  return routerCounters(routerId, answered, unreachable);
}
