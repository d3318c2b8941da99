import { OfpCodecError } from './errors.js';
import { decodeOxm, encodeOxm, type OxmTlv, put16 } from './oxm.js';
import type { OfReader } from './reader.js';
import { decodeSharedOxm } from './shared-actions.js';
import type { OfWriter } from './writer.js';

export type { OxmTlv, OxmValue } from './oxm.js';
export { OPAQUE_FIELD } from './oxm.js';

/** An OXM match: TLVs in wire order (kept, so decode -> encode is byte-exact). */
export type Match = OxmTlv[];

export const OFPMT_OXM = 1;

/** Writes a whole ofp_match: type=OXM, length (header + TLVs, without padding), TLVs, zero pad to 8. */
export function encodeMatch(w: OfWriter, m: Match): void {
  const start = w.offset;
  w.ensure(8);
  put16(w.buf, start, OFPMT_OXM);
  w.offset = start + 4;
  for (let i = 0; i < m.length; i++) encodeOxm(w, m[i]!, 'match');
  const len = w.offset - start;
  put16(w.buf, start + 2, len);
  const pad = ((len + 7) & ~7) - len;
  w.ensure(pad);
  for (let i = 0; i < pad; i++) w.buf[w.offset + i] = 0;
  w.offset += pad;
}

/** Reads a whole ofp_match including its padding. */
export function decodeMatch(r: OfReader): Match {
  const start = r.offset;
  const type = r.u16('match type');
  const length = r.u16('match length');
  if (type !== OFPMT_OXM) r.fail('bad-value', `match type ${type}, only OXM (1) is OpenFlow 1.3`, start);
  if (length < 4) r.fail('bad-length', `match length ${length} is below its 4-byte header`, start + 2);
  if (r.remaining < length - 4) {
    r.fail(
      'truncated',
      `match length ${length} runs past the end (${r.remaining + 4} bytes left)`,
      start + 2,
    );
  }
  // TLVs are read in place (no sub-reader per match); one running past the match length fails.
  const end = start + length;
  // Sized up front from the TLV headers: a pushed-to [] would reserve 17 slots per match, and a
  // dump keeps 100k of them alive.
  const m: Match = new Array(countTlvs(r.buf, r.offset, end));
  let n = 0;
  while (r.offset < end) {
    const at = r.offset;
    const t = r.shared ? decodeSharedOxm(r) : decodeOxm(r);
    if (r.offset > end) {
      throw new OfpCodecError(
        'truncated',
        `${r.context}/match`,
        at,
        `oxm ${t.field} is cut off by the match length (${r.offset - end} bytes short)`,
      );
    }
    m[n++] = t;
  }
  if (n !== m.length) m.length = n;
  r.pad(((length + 7) & ~7) - length, 'match padding');
  return m;
}

/** How many TLVs start in buf[at, end), by their length bytes; a lying one is caught by decodeOxm. */
function countTlvs(buf: Buffer, at: number, end: number): number {
  let n = 0;
  while (end - at >= 4) {
    at += 4 + buf[at + 3]!;
    n++;
  }
  return n;
}
