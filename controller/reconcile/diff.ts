import { Interner } from '../../apps/interned.js';
import { ofpfc as OFPFC, ofpgc as OFPGC, ofpg, ofpp } from '../../southbound/openflow/codec/constants.js';
import type { FlowMod, GroupMod } from '../../southbound/openflow/codec/messages.js';
import { isOwned } from '../pipeline/cookies.js';
import type { DesiredFlow, DesiredGroup, DesiredMeter } from '../pipeline/flow.js';
import { isOwnedGroup } from '../pipeline/groups.js';
import type { ActualMeter } from '../pipeline/meters.js';
import { bucketsKey, flowKey } from './canonical.js';
import { flowHash, sameIdentity } from './flow-identity.js';
import { sameActualInstructions } from './wire-instructions.js';

/**
 * A flow as the switch reports it in a flow-stats dump. A keyed dump (the codec's DumpedFlow)
 * gives `match` and `instructions` as accessors that decode on demand, and its flowKey in `key`.
 */
export interface ActualFlow {
  readonly tableId: number;
  readonly priority: number;
  readonly cookie: bigint;
  readonly match: DesiredFlow['match'];
  readonly instructions: DesiredFlow['instructions'];
  /** flowKey(this) when the source computed it already (a keyed dump); absent or '' otherwise. */
  readonly key?: string;
}

/** The flow's key: the one it carries, else flowKey. */
export const actualKey = (f: ActualFlow): string => f.key || flowKey(f);

export interface ActualGroup {
  groupId: number;
  type: DesiredGroup['type'];
  buckets: DesiredGroup['buckets'];
}

export interface FlowDiff {
  add: DesiredFlow[];
  /** Same table+priority+match, other instructions or cookie: rewritten in place (no gap). */
  modify: DesiredFlow[];
  /** Owned flows the desired state no longer has. Flows without weft's cookie are never here. */
  remove: ActualFlow[];
}

export interface GroupDiff {
  add: DesiredGroup[];
  modify: DesiredGroup[];
  remove: ActualGroup[];
}

/** Meters to change (controller/reconcile/meter-diff.ts); only owned meters are ever removed. */
export interface MeterDiff {
  add: DesiredMeter[];
  /** Same id, other rate, burst or flags. */
  modify: DesiredMeter[];
  remove: ActualMeter[];
}

interface HaveEntry {
  flow: ActualFlow;
  wanted: boolean;
  /** Another flow whose identity hashes alike but differs (rare). */
  next: HaveEntry | undefined;
}

export function diffFlows(desired: readonly DesiredFlow[], actual: readonly ActualFlow[]): FlowDiff {
  // A keyed dump carries each flow's key: index by it instead of decoding every match to hash it.
  if (actual.length > 0 && actual.every((f) => f.key)) return diffFlowsByKey(desired, keyFlows(actual));
  // Own index by a numeric hash of each flow's identity (see flow-identity.ts): no key strings
  // are printed and hashed for 100k dumped flows, and a match is marked in place.
  const have = new Map<number, HaveEntry>();
  const entries: HaveEntry[] = [];
  for (let i = 0; i < actual.length; i++) {
    const flow = actual[i]!;
    const h = flowHash(flow);
    let e = have.get(h);
    if (e === undefined) {
      e = { flow, wanted: false, next: undefined };
      have.set(h, e);
      entries.push(e);
      continue;
    }
    // As with a Map by flowKey: a later flow with the same identity replaces the earlier one.
    for (;;) {
      if (sameIdentity(e.flow, flow)) {
        e.flow = flow;
        break;
      }
      if (e.next === undefined) {
        e.next = { flow, wanted: false, next: undefined };
        entries.push(e.next);
        break;
      }
      e = e.next;
    }
  }
  const out: FlowDiff = { add: [], modify: [], remove: [] };
  for (let i = 0; i < desired.length; i++) {
    const f = desired[i]!;
    let e = have.get(flowHash(f));
    while (e !== undefined && !sameIdentity(e.flow, f)) e = e.next;
    if (e === undefined) {
      out.add.push(f);
      continue;
    }
    e.wanted = true;
    const cur = e.flow;
    if (cur.cookie !== f.cookie || !sameActualInstructions(cur, f.instructions)) out.modify.push(f);
  }
  for (const { flow, wanted } of entries) if (!wanted && isOwned(flow.cookie)) out.remove.push(flow);
  return out;
}

/** The switch's flows by flowKey (a later flow with the same key replaces an earlier one). */
export function keyFlows(actual: Iterable<ActualFlow>): Map<string, ActualFlow> {
  const have = new Map<string, ActualFlow>();
  for (const f of actual) have.set(actualKey(f), f);
  return have;
}

/**
 * diffFlows against flows already keyed by flowKey (as a caller caching the switch's tables holds
 * them), so a reconnect keys each of 100k dumped flows once, not once per step. `have` is only read.
 */
export function diffFlowsByKey(
  desired: readonly DesiredFlow[],
  have: ReadonlyMap<string, ActualFlow>,
): FlowDiff {
  const out: FlowDiff = { add: [], modify: [], remove: [] };
  const wanted = new Set<string>();
  for (let i = 0; i < desired.length; i++) {
    const f = desired[i]!;
    const key = flowKey(f);
    wanted.add(key);
    const cur = have.get(key);
    if (!cur) out.add.push(f);
    else if (cur.cookie !== f.cookie || !sameActualInstructions(cur, f.instructions)) {
      out.modify.push(f);
    }
  }
  for (const [key, f] of have) if (!wanted.has(key) && isOwned(f.cookie)) out.remove.push(f);
  return out;
}

export function diffGroups(desired: readonly DesiredGroup[], actual: readonly ActualGroup[]): GroupDiff {
  const have = new Map(actual.map((g) => [g.groupId, g]));
  const out: GroupDiff = { add: [], modify: [], remove: [] };
  const wanted = new Set<number>();
  for (const g of desired) {
    wanted.add(g.groupId);
    const cur = have.get(g.groupId);
    if (!cur) out.add.push(g);
    else if (cur.type !== g.type || bucketsKey(cur.buckets) !== bucketsKey(g.buckets)) out.modify.push(g);
  }
  for (const g of actual) if (!wanted.has(g.groupId) && isOwnedGroup(g.groupId)) out.remove.push(g);
  return out;
}

export const isEmptyDiff = (f: FlowDiff, g: GroupDiff, m?: MeterDiff): boolean =>
  f.add.length + f.modify.length + f.remove.length + g.add.length + g.modify.length + g.remove.length === 0 &&
  (!m || m.add.length + m.modify.length + m.remove.length === 0);

const ALL_ONES_64 = 0xffffffffffffffffn;

/** The FLOW_MOD of a flow: ADD/MODIFY with its instructions, DELETE_STRICT limited to its exact cookie. */
export const flowMod = (command: number, x: DesiredFlow | ActualFlow): FlowMod => ({
  type: 'FLOW_MOD',
  xid: 0,
  command,
  tableId: x.tableId,
  priority: x.priority,
  match: x.match,
  instructions: command === OFPFC.DELETE_STRICT ? [] : x.instructions,
  cookie: x.cookie,
  cookieMask: command === OFPFC.DELETE_STRICT ? ALL_ONES_64 : 0n,
  outPort: ofpp.ANY,
  outGroup: ofpg.ANY,
});

/**
 * The ADD of a desired flow: one frozen message per flow object, so a flow that goes to every
 * chassis of its network is one message, encoded once (session/encoded-once.ts). Desired flows are
 * never mutated once built (apps), which is what makes sharing their message safe.
 */
const addFlowMod = new Interner((x: DesiredFlow) => Object.freeze(flowMod(OFPFC.ADD, x)), 32_768);

/**
 * The messages that turn actual into desired, in the one safe order: groups appear before flows
 * that point at them, new flows before stale ones go (a moved MAC is never unreachable), and a
 * group goes only after the flows using it. Sent inside one bundle, the switch applies them
 * atomically anyway; the order still matters for switches without bundles and for readability.
 * Deletes are strict and carry the exact cookie, so they can never hit a flow weft does not own.
 */
export function planMessages(f: FlowDiff, g: GroupDiff): Array<FlowMod | GroupMod> {
  const msgs: Array<FlowMod | GroupMod> = [];
  const groupMod = (command: number, x: DesiredGroup | ActualGroup): GroupMod => ({
    type: 'GROUP_MOD',
    xid: 0,
    command,
    groupType: x.type,
    groupId: x.groupId,
    buckets: command === OFPGC.DELETE ? [] : x.buckets,
  });
  for (const x of g.add) msgs.push(groupMod(OFPGC.ADD, x));
  for (const x of g.modify) msgs.push(groupMod(OFPGC.MODIFY, x));
  for (const x of f.add) msgs.push(addFlowMod.get(x));
  // MODIFY_STRICT keeps counters and replaces instructions; the cookie is replaced as well by OVS
  // only through ADD, so a cookie change is sent as ADD (which overwrites the same match).
  for (const x of f.modify) msgs.push(addFlowMod.get(x));
  for (const x of f.remove) msgs.push(flowMod(OFPFC.DELETE_STRICT, x));
  for (const x of g.remove) msgs.push(groupMod(OFPGC.DELETE, x));
  return msgs;
}
