import { type Action, OFPAT } from '../../southbound/openflow/codec/actions.js';
import { DumpedFlow } from '../../southbound/openflow/codec/flow-dump.js';
import { type Instruction, OFPIT } from '../../southbound/openflow/codec/instructions.js';
import { get32 } from '../../southbound/openflow/codec/msg-common.js';
import { type OxmValue, readValue } from '../../southbound/openflow/codec/oxm.js';
import { canonicalFieldName, fieldByHeader } from '../../southbound/openflow/codec/oxm-fields.js';
import { isAllOnes, lower, sameInstructions } from './canonical.js';

/**
 * Whether a flow the switch has carries the instructions we want, exactly as `sameInstructions`
 * decides it, without decoding a dumped flow's instructions into objects. For the shapes
 * sameInstructions decides field by field (apply/write actions of output and set_field,
 * goto_table) the dumped bytes are walked in step with the wanted list: each value is read from
 * its bytes (interned strings, small bigints) and compared with sameInstructions' own rules
 * (field names by canonical name, strings case-blind, all-ones masks as none). The walk answers
 * true or false only where sameInstructions would answer the same without printing; anything else
 * (another instruction or action type, OVS's NXAST_REG_LOAD2 spelling, counts that differ)
 * decodes the dumped instructions and asks sameInstructions.
 */

const u16 = (b: Buffer, o: number) => (b[o]! << 8) | b[o + 1]!;

/** canonical.ts's sameScalar for what a decoded value can be; undefined when only printing can tell. */
function sameScalar(a: unknown, b: unknown): boolean | undefined {
  if (a === b) return true;
  const t = typeof a;
  if (t !== typeof b) return false;
  if (t === 'string') return lower(a as string) === lower(b as string);
  if (t === 'number') return String(a) === String(b);
  if (t === 'bigint') return false; // two bigints print alike only when equal, and === said no
  return undefined;
}

/** How many TLVs (u16 length at +2) lie in b[at, end); -1 if their lengths do not add up. */
function countTlvs(b: Buffer, at: number, end: number): number {
  let n = 0;
  while (at < end) {
    if (end - at < 4) return -1;
    const len = u16(b, at + 2);
    if (len < 8) return -1;
    at += len;
    n++;
  }
  return at === end ? n : -1;
}

/** sameAction(decoded action at b[at], want) of canonical.ts, on the bytes. */
function sameActionAt(b: Buffer, at: number, want: Action): boolean | undefined {
  const type = u16(b, at);
  if (type === OFPAT.OUTPUT) {
    if (want.type !== 'output') return undefined;
    const port = sameScalar(get32(b, at + 4), want.port);
    if (port !== true) return port;
    return sameScalar(u16(b, at + 8), want.maxLen);
  }
  if (type !== OFPAT.SET_FIELD) return undefined;
  // A set_field we want, or a reg_load2 that prints as one.
  let wantMask: OxmValue | undefined;
  if (want.type === 'set_field') wantMask = want.mask;
  else if (want.type === 'reg_load2' && (want.mask === undefined || isAllOnes(want.field, want.mask)))
    wantMask = undefined;
  else return undefined;
  const h = get32(b, at + 4);
  if (h >>> 16 === 0xffff) return undefined;
  const f = fieldByHeader(h);
  if (f === undefined) return undefined;
  if (want.field !== f.name && lower(canonicalFieldName(want.field)) !== f.name) return false;
  const valueAt = at + 8;
  const value = sameScalar(readValue(b, valueAt, f), want.value);
  if (value !== true) return value;
  // Masks as printed: an all-ones mask counts as none on either side.
  let haveMask: OxmValue | undefined;
  if ((h & 0x100) !== 0) {
    let ones = true;
    for (let i = valueAt + f.width; i < valueAt + 2 * f.width && ones; i++) ones = b[i] === 0xff;
    if (!ones) haveMask = readValue(b, valueAt + f.width, f);
  }
  if (want.type === 'set_field' && wantMask !== undefined && isAllOnes(want.field, wantMask))
    wantMask = undefined;
  if (haveMask === wantMask) return true;
  return sameScalar(haveMask, wantMask);
}

/** sameInstruction(decoded instruction at b[at], want) of canonical.ts, on the bytes. */
function sameInstructionAt(b: Buffer, at: number, want: Instruction): boolean | undefined {
  const type = u16(b, at);
  const len = u16(b, at + 2);
  if (type === OFPIT.GOTO_TABLE)
    return want.type === 'goto_table' ? sameScalar(b[at + 4]!, want.tableId) : undefined;
  const name =
    type === OFPIT.APPLY_ACTIONS ? 'apply_actions' : type === OFPIT.WRITE_ACTIONS ? 'write_actions' : '';
  if (want.type !== name || (want.type !== 'apply_actions' && want.type !== 'write_actions'))
    return undefined;
  const actions = want.actions;
  const end = at + len;
  if (countTlvs(b, at + 8, end) !== actions.length) return undefined;
  let a = at + 8;
  for (let i = 0; i < actions.length; i++) {
    const same = sameActionAt(b, a, actions[i]!);
    if (same !== true) return same;
    a += u16(b, a + 2);
  }
  return true;
}

/** sameInstructions(flow.instructions, wanted) answered on the bytes; undefined when not sure. */
function sameOnBytes(flow: DumpedFlow, wanted: readonly Instruction[]): boolean | undefined {
  const b = flow.buf;
  const end = flow.end;
  let at = flow.instructionsAt;
  if (countTlvs(b, at, end) !== wanted.length) return undefined;
  for (let i = 0; i < wanted.length; i++) {
    const same = sameInstructionAt(b, at, wanted[i]!);
    if (same !== true) return same;
    at += u16(b, at + 2);
  }
  return true;
}

/** sameInstructions(actual.instructions, wanted), on the bytes when actual is a dumped flow. */
export function sameActualInstructions(
  actual: { readonly instructions: readonly Instruction[] },
  wanted: readonly Instruction[],
): boolean {
  if (actual instanceof DumpedFlow) {
    const same = sameOnBytes(actual, wanted);
    if (same !== undefined) return same;
  }
  return sameInstructions(actual.instructions, wanted);
}
