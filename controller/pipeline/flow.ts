import type { Action } from '../../southbound/openflow/codec/actions.js';
import type { Bucket } from '../../southbound/openflow/codec/buckets.js';
import type { Instruction } from '../../southbound/openflow/codec/instructions.js';
import type { Match } from '../../southbound/openflow/codec/match.js';
import { canonicalFieldName as canonicalField } from '../../southbound/openflow/codec/oxm-fields.js';
import { type TableId, tableDecl } from './tables.js';

const allowedCache = new Map<number, Set<string>>();

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

/** What every app returns for one datapath. */
export interface Desired {
  flows: DesiredFlow[];
  groups: DesiredGroup[];
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
  for (const t of f.match) {
    if (!allowed.has(canonicalField(t.field))) {
      throw new PipelineViolation(`table ${decl.name} (${decl.id}) does not allow a match on ${t.field}`);
    }
  }
  // A frozen instruction list (shared by many flows, apps/interned.ts) is checked once per table.
  const frozen = Object.isFrozen(f.instructions);
  if (frozen && checkedInstructions.get(f.instructions) === decl.id) return;
  for (const ins of f.instructions) {
    if (ins.type === 'goto_table') checkNext(decl.id, decl.name, decl.next, ins.tableId);
    if (ins.type === 'apply_actions' || ins.type === 'write_actions') {
      for (const a of ins.actions) checkAction(decl.id, decl.name, decl.next, a);
    }
  }
  if (frozen) checkedInstructions.set(f.instructions, decl.id);
}

/** Frozen instruction lists already found valid, with the table they were checked for. */
const checkedInstructions = new WeakMap<readonly Instruction[], number>();

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
