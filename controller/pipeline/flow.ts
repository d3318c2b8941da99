import type { Action } from '../../southbound/openflow/codec/actions.js';
import type { Bucket } from '../../southbound/openflow/codec/buckets.js';
import { OFPCML_NO_BUFFER, ofpp } from '../../southbound/openflow/codec/constants.js';
import type { Instruction } from '../../southbound/openflow/codec/instructions.js';
import type { Match } from '../../southbound/openflow/codec/match.js';
import { canonicalFieldName as canonicalField } from '../../southbound/openflow/codec/oxm-fields.js';
import { type TableId, tableDecl } from './tables.js';

const OFPP_CONTROLLER = ofpp.CONTROLLER;

const allowedCache = new Map<number, Set<string>>();
/** table -> match field name (any spelling) -> whether the table allows it. */
const fieldVerdicts = new Map<number, Map<string, boolean>>();

function entryOf(map: Map<number, Map<string, boolean>>, id: number): Map<string, boolean> {
  let m = map.get(id);
  if (m === undefined) {
    m = new Map();
    map.set(id, m);
  }
  return m;
}

/** A flow an app wants on a datapath. Field names match the codec's FlowMod and text form. */
export interface DesiredFlow {
  tableId: TableId;
  priority: number;
  cookie: bigint;
  match: Match;
  instructions: Instruction[];
}

export type GroupType = 'all' | 'select' | 'indirect' | 'ff';

export interface DesiredGroup {
  groupId: number;
  type: GroupType;
  buckets: Bucket[];
}

/**
 * A policer (an OpenFlow 1.3 meter with one drop band): traffic above `kbps` (kbit/s), past a
 * burst of `burstKb` kbit, is dropped. With `unit: 'pktps'` the same two numbers count packets
 * (per second, and a burst of packets): the security-group log's meters (apps/acl). Ids come
 * from controller/pipeline/meters.ts.
 */
export interface DesiredMeter {
  meterId: number;
  kbps: number;
  burstKb: number;
  unit?: 'pktps';
}

/** What every app returns for one datapath. */
export interface Desired {
  flows: DesiredFlow[];
  groups: DesiredGroup[];
  /** Absent: none (most units have none). */
  meters?: DesiredMeter[];
}

export class PipelineViolation extends Error {
  override name = 'PipelineViolation';
}

/** Throws PipelineViolation naming the table and the offending match or target. */
export function checkFlow(f: DesiredFlow): void {
  const decl = tableDecl(f.tableId);
  if (!decl) throw new PipelineViolation(`flow in undeclared table ${f.tableId}`);
  let allowed = allowedCache.get(decl.id);
  if (!allowed) {
    allowed = new Set([...decl.matches, 'eth_type', 'ip_proto'].map(canonicalField));
    allowedCache.set(decl.id, allowed);
  }
  const verdicts = entryOf(fieldVerdicts, decl.id);
  const match = f.match;
  for (let i = 0; i < match.length; i++) {
    const t = match[i]!;
    // The answer per table and field name as spelled, so a flow costs one lookup per field.
    let ok = verdicts.get(t.field);
    if (ok === undefined) {
      ok = allowed.has(canonicalField(t.field));
      if (verdicts.size < 256) verdicts.set(t.field, ok);
    }
    if (!ok) {
      throw new PipelineViolation(`table ${decl.name} (${decl.id}) does not allow a match on ${t.field}`);
    }
  }
  // Walked every time, with no cache of lists already seen: the walk is a few comparisons per
  // flow, and a cache (a WeakMap of every shared list) cost a multi-millisecond rehash each time
  // it doubled, in the middle of some small change (docs/BENCHMARKS.md).
  for (let i = 0; i < f.instructions.length; i++) {
    const ins = f.instructions[i]!;
    if (ins.type === 'goto_table') checkNext(decl.id, decl.name, decl.next, ins.tableId);
    if (ins.type === 'apply_actions' || ins.type === 'write_actions') {
      for (let j = 0; j < ins.actions.length; j++)
        checkAction(decl.id, decl.name, decl.next, ins.actions[j]!);
    }
  }
}

function checkAction(id: number, name: string, next: readonly number[], a: Action): void {
  if (a.type === 'resubmit') checkNext(id, name, next, a.table);
  if (a.type === 'ct' && a.table !== undefined && a.table !== 255) checkNext(id, name, next, a.table);
}

function checkNext(id: number, name: string, next: readonly number[], target: number): void {
  if (!next.includes(target)) {
    throw new PipelineViolation(`table ${name} (${id}) may not continue to table ${target}`);
  }
}

// ---- small builders the apps share, so flows read like ovs-ofctl text ----

export const goto = (tableId: number): Instruction => ({ type: 'goto_table', tableId });
export const apply = (...actions: Action[]): Instruction => ({ type: 'apply_actions', actions });
export const output = (port: number): Action => ({ type: 'output', port, maxLen: 0 });
export const setField = (field: string, value: number | bigint | string): Action => ({
  type: 'set_field',
  field,
  value,
});
export const writeMetadata = (metadata: bigint, mask: bigint): Instruction => ({
  type: 'write_metadata',
  metadata,
  mask,
});
export const group = (groupId: number): Action => ({ type: 'group', groupId });
/**
 * The whole packet up to the controller (no buffering on the switch), which answers its sender
 * with a PACKET_OUT (DHCP, the router's ICMP errors). Frozen: many flows share it.
 */
export const TO_CONTROLLER: DesiredFlow['instructions'] = Object.freeze([
  apply({ type: 'output', port: OFPP_CONTROLLER, maxLen: OFPCML_NO_BUFFER }),
]) as DesiredFlow['instructions'];
/** `move:SRC[0..n)->DST[0..n)` (Nicira reg_move) of the low `nBits` bits. */
export const move = (src: string, dst: string, nBits: number): Action => ({
  type: 'reg_move',
  src: { field: src, ofs: 0, nBits },
  dst: { field: dst, ofs: 0, nBits },
});
