import type { OxmTlv, OxmValue } from '../../southbound/openflow/codec/match.js';
import { canonicalFieldName as canonicalField } from '../../southbound/openflow/codec/oxm-fields.js';
import { isAllOnes, lower, matchKey, valueText } from './canonical.js';

/**
 * A flow's identity (what flowKey prints: table, priority, match fields sorted, all-ones masks
 * dropped, one spelling per value) as a number and an equality test, so diffFlows can index 100k
 * dumped flows without printing and hashing 100k key strings. `flowHash` is equal for flows whose
 * flowKeys are equal; `sameIdentity` decides equality field by field, falling back to the printed
 * keys for shapes it does not handle. Both read a match field as its (field, value, mask) triple,
 * which is what the key text spells for every field name and string value free of '=', '/' and
 * ','; a string spelling a number (a uint field given "0x5") hashes apart from the number.
 */

const SMI = 0x3fffffff;

function mix(h: number, v: number): number {
  h = Math.imul(h ^ v, 0x85ebca6b);
  return h ^ (h >>> 13);
}

function stringHash(s: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix(h, s.length);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Equal for values whose valueText is equal (numbers and bigints of one value alike). */
function valueHash(v: OxmValue): number {
  if (typeof v === 'number') {
    if (v >= 0 && v <= Number.MAX_SAFE_INTEGER && v % 1 === 0) return mix(v >>> 0, (v / 0x100000000) >>> 0);
    return stringHash(valueText(v), 7);
  }
  if (typeof v === 'bigint') {
    if (v >= 0n && v <= MAX_SAFE) {
      const n = Number(v);
      return mix(n >>> 0, (n / 0x100000000) >>> 0);
    }
    return stringHash(valueText(v), 7);
  }
  if (typeof v === 'string') return stringHash(lower(v), 11);
  return stringHash(valueText(v), 13);
}

const fieldHashes = new Map<string, number>();

function fieldHash(field: string): number {
  let h = fieldHashes.get(field);
  if (h === undefined) {
    if (fieldHashes.size >= 4096) fieldHashes.clear();
    h = stringHash(canonicalField(field), 3);
    fieldHashes.set(field, h);
  }
  return h;
}

/** The mask as the key prints it: none when absent or all ones. */
const printedMask = (t: OxmTlv): OxmValue | undefined =>
  t.mask === undefined || isAllOnes(t.field, t.mask) ? undefined : t.mask;

export function flowHash(f: { tableId: number; priority: number; match: readonly OxmTlv[] }): number {
  let sum = 0;
  const m = f.match;
  for (let i = 0; i < m.length; i++) {
    const t = m[i]!;
    const mask = printedMask(t);
    let h = mix(fieldHash(t.field), valueHash(t.value));
    if (mask !== undefined) h = mix(h ^ 0x5bd1e995, valueHash(mask));
    sum = (sum + h) | 0; // a sum: the key sorts the fields, so their order must not matter
  }
  return mix(mix(sum, f.tableId), f.priority) & SMI;
}

function sameValue(a: OxmValue, b: OxmValue): boolean {
  if (a === b) return true;
  if (typeof a === 'string' && typeof b === 'string') return lower(a) === lower(b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return false;
  return valueText(a) === valueText(b);
}

/** Whether the two fields print alike in a key. */
function sameTlv(a: OxmTlv, b: OxmTlv): boolean {
  if (a === b) return true;
  if (a.field !== b.field && canonicalField(a.field) !== canonicalField(b.field)) return false;
  if (!sameValue(a.value, b.value)) return false;
  const ma = printedMask(a);
  const mb = printedMask(b);
  if (ma === undefined || mb === undefined) return ma === mb;
  return sameValue(ma, mb);
}

/** flowKey(a) === flowKey(b), without printing for matches of up to two fields. */
export function sameIdentity(
  a: { tableId: number; priority: number; match: readonly OxmTlv[] },
  b: { tableId: number; priority: number; match: readonly OxmTlv[] },
): boolean {
  if (a.tableId !== b.tableId || a.priority !== b.priority) return false;
  const x = a.match;
  const y = b.match;
  if (x === y) return true;
  if (x.length === y.length) {
    if (x.length === 0) return true;
    if (x.length === 1) return sameTlv(x[0]!, y[0]!);
    if (x.length === 2) {
      return (
        (sameTlv(x[0]!, y[0]!) && sameTlv(x[1]!, y[1]!)) || (sameTlv(x[0]!, y[1]!) && sameTlv(x[1]!, y[0]!))
      );
    }
  }
  return matchKey(x as OxmTlv[]) === matchKey(y as OxmTlv[]);
}
