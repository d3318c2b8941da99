import type { DumpedFlow } from '../../southbound/openflow/codec/flow-dump.js';
import { decodeMatch } from '../../southbound/openflow/codec/match.js';
import { readValue } from '../../southbound/openflow/codec/oxm.js';
import { fieldByHeader, type OxmField } from '../../southbound/openflow/codec/oxm-fields.js';
import { OfReader } from '../../southbound/openflow/codec/reader.js';
import { flowKey, valueText } from './canonical.js';

/**
 * flowKey straight from a match's wire bytes: the same text flowKey prints for the decoded match
 * (`table=T,priority=P,` + each field's `name=value[/mask]` sorted), without building TLV objects.
 * The key is written as ASCII into a scratch buffer (values printed from their bytes as
 * canonical.ts's valueText prints the decoded value: hex numbers without leading zeros, MACs in
 * lower-case pairs, dotted IPv4, canonical IPv6), the fields sorted by their text's bytes (for
 * ASCII, the order of `sort()`), and made into one flat string by a single latin1 read. A mask of
 * all one bits is dropped, as isAllOnes drops it (for every field kind that is exactly "every
 * mask byte 0xff"). Anything else (experimenter or unknown OXMs, lengths that do not fit the
 * field, matches of more than MAX_TLVS fields) falls back to decoding the match and calling
 * flowKey, so the result is always flowKey's.
 */

const MAX_TLVS = 32;
const HEX = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102];
const COMMA = 44;

/** `name=` per field as ASCII bytes, made once. */
const namePrefix = new Map<OxmField, Uint8Array>();

function prefixOfField(f: OxmField): Uint8Array {
  let p = namePrefix.get(f);
  if (p === undefined) {
    p = Buffer.from(`${f.name}=`, 'latin1');
    namePrefix.set(f, p);
  }
  return p;
}

/** `table=T,priority=P,` per (table, priority) as ASCII bytes. */
const tablePrefixes = new Map<number, Uint8Array>();

function tablePrefix(tableId: number, priority: number): Uint8Array {
  const id = tableId * 0x10000 + priority;
  let p = tablePrefixes.get(id);
  if (p === undefined) {
    p = Buffer.from(`table=${tableId},priority=${priority},`, 'latin1');
    if (tablePrefixes.size < 65536) tablePrefixes.set(id, p);
  }
  return p;
}

interface Latin1 {
  latin1Slice(start: number, end: number): string;
}

/** Scratch for the fields' texts (in wire order) and for the key assembled from them. */
let text = Buffer.allocUnsafe(4096);
let key = Buffer.allocUnsafe(4096);
const starts = new Int32Array(MAX_TLVS);
const ends = new Int32Array(MAX_TLVS);
const order = new Int32Array(MAX_TLVS);

function allOnes(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i] !== 0xff) return false;
  return true;
}

/** Hex digits of the 32-bit word v at out[o], `pad` digits at least; returns the new offset. */
function putHex32(out: Buffer, o: number, v: number, pad: number): number {
  let digits = (35 - Math.clz32(v)) >> 2; // hex digits of v (0 for 0)
  if (digits < pad) digits = pad;
  for (let i = digits - 1; i >= 0; i--) {
    out[o + i] = HEX[v & 15]!;
    v >>>= 4;
  }
  return o + digits;
}

/** `0x` + the big-endian unsigned value of `width` bytes at buf[at], without leading zeros. */
function putHexValue(out: Buffer, o: number, buf: Buffer, at: number, width: number): number {
  out[o++] = 48;
  out[o++] = 120;
  // Words from the most significant; the first non-zero one unpadded, the rest 8 digits.
  let lead = width % 4;
  let started = false;
  for (let i = 0; i < width; ) {
    const n = lead === 0 ? 4 : lead;
    lead = 0;
    let v = 0;
    for (let j = 0; j < n; j++) v = v * 256 + buf[at + i + j]!;
    i += n;
    if (started) o = putHex32(out, o, v, 8);
    else if (v !== 0 || i === width) {
      o = putHex32(out, o, v, 1);
      started = true;
    }
  }
  return o;
}

function putDecimal(out: Buffer, o: number, v: number): number {
  if (v >= 100) out[o++] = 48 + ((v / 100) | 0);
  if (v >= 10) out[o++] = 48 + (((v / 10) | 0) % 10);
  out[o++] = 48 + (v % 10);
  return o;
}

/** One value of f at buf[at], printed as valueText prints its decoded form. */
function putValue(out: Buffer, o: number, buf: Buffer, at: number, f: OxmField): number {
  switch (f.kind) {
    case 'uint':
    case 'u64':
    case 'u128':
      return putHexValue(out, o, buf, at, f.width);
    case 'mac':
      for (let i = 0; i < 6; i++) {
        if (i > 0) out[o++] = 58;
        const v = buf[at + i]!;
        out[o++] = HEX[v >> 4]!;
        out[o++] = HEX[v & 15]!;
      }
      return o;
    case 'ipv4':
      for (let i = 0; i < 4; i++) {
        if (i > 0) out[o++] = 46;
        o = putDecimal(out, o, buf[at + i]!);
      }
      return o;
    default: {
      const s = valueText(readValue(buf, at, f)); // IPv6: the codec's canonical text (ASCII)
      for (let i = 0; i < s.length; i++) out[o++] = s.charCodeAt(i);
      return o;
    }
  }
}

/** The TLV (header h) at buf[at] printed at text[o]; -1 when only a decode can print it. */
function putTlv(buf: Buffer, at: number, h: number, o: number): number {
  if (h >>> 16 === 0xffff) return -1;
  const f = fieldByHeader(h);
  if (f === undefined) return -1;
  const len = h & 0xff;
  const w = f.width;
  const hasMask = (h & 0x100) !== 0;
  if (len !== (hasMask ? 2 * w : w) || (hasMask && !f.maskable)) return -1;
  const name = prefixOfField(f);
  for (let i = 0; i < name.length; i++) text[o++] = name[i]!;
  o = putValue(text, o, buf, at + 4, f);
  if (hasMask && !allOnes(buf, at + 4 + w, at + 4 + 2 * w)) {
    text[o++] = 47;
    o = putValue(text, o, buf, at + 4 + w, f);
  }
  return o;
}

/** Whether text[starts[x], ends[x]) sorts before text[starts[y], ends[y]) (byte order). */
function before(x: number, y: number): boolean {
  const ax = starts[x]!;
  const ay = starts[y]!;
  const lx = ends[x]! - ax;
  const ly = ends[y]! - ay;
  const n = Math.min(lx, ly);
  for (let i = 0; i < n; i++) {
    const c = text[ax + i]! - text[ay + i]!;
    if (c !== 0) return c < 0;
  }
  return lx < ly;
}

/** flowKey of the match decoded from the ofp_match at buf[matchAt] (bounded by end). */
function decodedKey(buf: Buffer, matchAt: number, end: number, tableId: number, priority: number): string {
  const match = decodeMatch(new OfReader(buf, matchAt, end, 'match'));
  return flowKey({ tableId, priority, match });
}

/**
 * flowKey({tableId, priority, match}) for the match encoded as an ofp_match (type, length, TLVs,
 * padding) at buf[matchAt], whose bytes end by `end`. Bytes it cannot print go to the codec's
 * decoder, which raises its error for malformed ones.
 */
export function wireFlowKey(
  buf: Buffer,
  matchAt: number,
  end: number,
  tableId: number,
  priority: number,
): string {
  if (end - matchAt < 4 || !(tableId >= 0 && tableId < 256 && priority >= 0 && priority < 0x10000))
    return decodedKey(buf, matchAt, end, tableId, priority);
  const tlvEnd = matchAt + ((buf[matchAt + 2]! << 8) | buf[matchAt + 3]!);
  if (tlvEnd > end || buf[matchAt] !== 0 || buf[matchAt + 1] !== 1)
    return decodedKey(buf, matchAt, end, tableId, priority);
  // Room for the longest text per wire byte (an IPv6 value + mask: 2 x 39 characters for 36 bytes).
  const room = 64 + (tlvEnd - matchAt) * 4;
  if (text.length < room) text = Buffer.allocUnsafe(room * 2);
  let at = matchAt + 4;
  let n = 0;
  let o = 0;
  while (at < tlvEnd) {
    if (tlvEnd - at < 4 || n === MAX_TLVS) return decodedKey(buf, matchAt, end, tableId, priority);
    const h = buf[at]! * 0x1000000 + ((buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!);
    const next = at + 4 + (h & 0xff);
    if (next > tlvEnd) return decodedKey(buf, matchAt, end, tableId, priority);
    starts[n] = o;
    o = putTlv(buf, at, h, o);
    if (o < 0) return decodedKey(buf, matchAt, end, tableId, priority);
    ends[n] = o;
    // Insertion sort of the field texts as they come (a match has a few).
    const added = n++;
    let i = added;
    while (i > 0 && before(added, order[i - 1]!)) {
      order[i] = order[i - 1]!;
      i--;
    }
    order[i] = added;
    at = next;
  }
  const prefix = tablePrefix(tableId, priority);
  if (key.length < prefix.length + o + n) key = Buffer.allocUnsafe((prefix.length + o + n) * 2);
  let k = 0;
  for (let i = 0; i < prefix.length; i++) key[k++] = prefix[i]!;
  for (let j = 0; j < n; j++) {
    if (j > 0) key[k++] = COMMA;
    const x = order[j]!;
    for (let i = starts[x]!; i < ends[x]!; i++) key[k++] = text[i]!;
  }
  // Buffer's own latin1Slice (what toString('latin1') ends in), without toString's argument checks.
  return (key as unknown as Latin1).latin1Slice(0, k);
}

/** The flow key of a dumped flow, from its match bytes (the `keyOf` for a keyed dump). */
export function dumpedFlowKey(f: DumpedFlow): string {
  return wireFlowKey(f.buf, f.matchAt, f.instructionsAt, f.tableId, f.priority);
}
