import { OfpCodecError } from './errors.js';
import { ipv4Text, macText, readU64 } from './intern.js';
import { fieldByExperimenter, fieldByHeader, fieldByName, type OxmField } from './oxm-fields.js';
import type { OfReader } from './reader.js';
import { canonicalIpv6, parseIpv4, readIpv6, writeIpv4, writeIpv6, writeMac } from './values.js';
import type { OfWriter } from './writer.js';

/**
 * One OXM TLV: `value` (and `mask`) typed per the field's kind (see oxm-fields.ts). A TLV the
 * table does not know (incl. experimenter-class OXMs) decodes as field 'opaque' whose value is
 * the whole TLV, header included, and re-encodes to those exact bytes.
 */
export type OxmValue = number | bigint | string | Buffer;
export interface OxmTlv {
  field: string;
  value: OxmValue;
  mask?: OxmValue;
}

export const OPAQUE_FIELD = 'opaque';

const U64_MAX = (1n << 64n) - 1n;
const U128_MAX = (1n << 128n) - 1n;

function badValue(w: OfWriter, what: string, reason: string): never {
  throw new OfpCodecError('bad-value', what, w.offset, reason);
}

/**
 * Byte-level writes for the hot paths: the caller has reserved room with w.ensure(), so these
 * skip Buffer's per-call argument validation.
 */
export function put32(buf: Buffer, o: number, v: number): void {
  buf[o] = v >>> 24;
  buf[o + 1] = (v >>> 16) & 0xff;
  buf[o + 2] = (v >>> 8) & 0xff;
  buf[o + 3] = v & 0xff;
}

export function put16(buf: Buffer, o: number, v: number): void {
  buf[o] = (v >>> 8) & 0xff;
  buf[o + 1] = v & 0xff;
}

const U32_LIMIT = 0xffffffffn;

/** A 64-bit bigint (already range-checked) at buf[o]; one BigInt op for values below 2^32. */
export function put64(buf: Buffer, o: number, v: bigint): void {
  if (v <= U32_LIMIT) {
    put32(buf, o, 0);
    put32(buf, o + 4, Number(v));
  } else {
    put32(buf, o, Number(v >> 32n));
    put32(buf, o + 4, Number(v & U32_LIMIT));
  }
}

export function get64(buf: Buffer, o: number): bigint {
  const hi = buf[o]! * 0x1000000 + ((buf[o + 1]! << 16) | (buf[o + 2]! << 8) | buf[o + 3]!);
  const lo = buf[o + 4]! * 0x1000000 + ((buf[o + 5]! << 16) | (buf[o + 6]! << 8) | buf[o + 7]!);
  return hi === 0 ? BigInt(lo) : (BigInt(hi) << 32n) | BigInt(lo);
}

/** Writes one value of `f` at w.offset (w has room); throws naming the field if it does not fit. */
function putValue(w: OfWriter, f: OxmField, v: OxmValue, what: string): void {
  const buf = w.buf;
  const off = w.offset;
  switch (f.kind) {
    case 'uint': {
      if (typeof v !== 'number' || !(v >= 0 && v <= f.max) || v % 1 !== 0) {
        badValue(w, what, `${f.name} needs an integer 0..${f.max}, got ${String(v)}`);
      }
      const width = f.width;
      if (width === 4) put32(buf, off, v);
      else if (width === 2) put16(buf, off, v);
      else if (width === 1) buf[off] = v;
      else buf.writeUIntBE(v, off, width);
      break;
    }
    case 'u64': {
      const b = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : -1n;
      if (b < 0n || b > U64_MAX)
        badValue(w, what, `${f.name} needs a 64-bit unsigned value, got ${String(v)}`);
      put64(buf, off, b);
      break;
    }
    case 'u128': {
      const b = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : -1n;
      if (b < 0n || b > U128_MAX)
        badValue(w, what, `${f.name} needs a 128-bit unsigned value, got ${String(v)}`);
      put64(buf, off, b >> 64n);
      put64(buf, off + 8, b & U64_MAX);
      break;
    }
    case 'mac':
      if (typeof v !== 'string' || !writeMac(buf, off, v))
        badValue(w, what, `${f.name} needs a MAC, got ${String(v)}`);
      break;
    case 'ipv4':
      if (typeof v !== 'string' || !writeIpv4(buf, off, v)) {
        badValue(w, what, `${f.name} needs an IPv4 address, got ${String(v)}`);
      }
      break;
    case 'ipv6':
      if (typeof v !== 'string' || !writeIpv6(buf, off, v)) {
        badValue(w, what, `${f.name} needs an IPv6 address, got ${String(v)}`);
      }
      break;
  }
  w.offset = off + f.width;
}

/** Reads one value of `f` at buf[off] (bounds already checked). */
export function readValue(buf: Buffer, off: number, f: OxmField): OxmValue {
  switch (f.kind) {
    case 'uint': {
      const width = f.width;
      if (width === 4)
        return buf[off]! * 0x1000000 + ((buf[off + 1]! << 16) | (buf[off + 2]! << 8) | buf[off + 3]!);
      if (width === 2) return (buf[off]! << 8) | buf[off + 1]!;
      if (width === 1) return buf[off]!;
      return buf.readUIntBE(off, width);
    }
    case 'u64':
      return readU64(buf, off);
    case 'u128':
      return (get64(buf, off) << 64n) | get64(buf, off + 8);
    case 'mac':
      return macText(buf, off);
    case 'ipv4':
      return ipv4Text(buf, off);
    case 'ipv6':
      return readIpv6(buf, off);
  }
}

/** Writes value (+mask) of a known field at w.offset, growing w; used by OXM TLVs and NX actions. */
export function writeFieldValue(
  w: OfWriter,
  f: OxmField,
  value: OxmValue,
  mask: OxmValue | undefined,
  what: string,
) {
  w.ensure(f.width * 2);
  putValue(w, f, value, what);
  if (mask !== undefined) putValue(w, f, mask, what);
}

/** Encodes one TLV (header + value [+ mask]). */
export function encodeOxm(w: OfWriter, t: OxmTlv, what = 'oxm'): void {
  const f = fieldByName(t.field);
  if (f === undefined) {
    if (t.field === OPAQUE_FIELD && Buffer.isBuffer(t.value)) {
      w.bytes(t.value);
      return;
    }
    throw new OfpCodecError('bad-value', what, w.offset, `unknown OXM field '${t.field}'`);
  }
  const mask = t.mask;
  if (mask !== undefined && !f.maskable) {
    throw new OfpCodecError('bad-value', `${what} ${f.name}`, w.offset, `${f.name} cannot be masked`);
  }
  w.ensure(8 + f.width * 2);
  put32(w.buf, w.offset, mask === undefined ? f.header : f.header + 0x100 + f.width);
  w.offset += 4;
  if (f.experimenter) {
    put32(w.buf, w.offset, f.experimenter);
    w.offset += 4;
  }
  putValue(w, f, t.value, what);
  if (mask !== undefined) putValue(w, f, mask, what);
}

/** Decodes one TLV at r.offset. */
export function decodeOxm(r: OfReader): OxmTlv {
  const start = r.offset;
  if (r.end - start < 4) r.fail('truncated', `oxm header needs 4 bytes, ${r.end - start} left`);
  const buf = r.buf;
  const header =
    buf[start]! * 0x1000000 + ((buf[start + 1]! << 16) | (buf[start + 2]! << 8) | buf[start + 3]!);
  const len = header & 0xff;
  const off = start + 4;
  if (r.end - off < len) {
    r.fail(
      'truncated',
      `oxm 0x${header.toString(16)} declares ${len} value bytes, ${r.end - off} left`,
      start,
    );
  }
  r.offset = off + len;
  let f: OxmField | undefined;
  let valueAt = off;
  if (header >>> 16 === 0xffff) {
    // Experimenter OXM: the experimenter id comes first and counts in the length.
    if (len >= 4) {
      const exp = buf[off]! * 0x1000000 + ((buf[off + 1]! << 16) | (buf[off + 2]! << 8) | buf[off + 3]!);
      f = fieldByExperimenter(exp, (header >>> 9) & 0x7f);
      valueAt = off + 4;
    }
  } else {
    f = fieldByHeader(header);
  }
  if (f === undefined) return { field: OPAQUE_FIELD, value: Buffer.from(buf.subarray(start, r.offset)) };
  const hasMask = (header & 0x100) !== 0;
  const expected = (hasMask ? f.width * 2 : f.width) + (valueAt - off);
  if (len !== expected) {
    r.fail(
      'bad-length',
      `oxm ${f.name} length ${len}, expected ${expected}${hasMask ? ' (value+mask)' : ''}`,
      start,
    );
  }
  if (hasMask && !f.maskable) r.fail('bad-value', `oxm ${f.name} has a mask but is not maskable`, start);
  const value = readValue(buf, valueAt, f);
  if (!hasMask) return { field: f.name, value };
  return { field: f.name, value, mask: readValue(buf, valueAt + f.width, f) };
}

/** Normalizes a user-supplied value of a field (e.g. IPv6 to canonical text); undefined if invalid. */
export function normalizeValue(f: OxmField, v: OxmValue): OxmValue | undefined {
  switch (f.kind) {
    case 'ipv6':
      return typeof v === 'string' ? canonicalIpv6(v) : undefined;
    case 'ipv4':
      return typeof v === 'string' && parseIpv4(v) >= 0 ? v : undefined;
    default:
      return v;
  }
}
