import { OfpCodecError } from './errors.js';
import { fieldByHeader, fieldByName, type OxmField } from './oxm-fields.js';
import type { OfReader } from './reader.js';
import {
  canonicalIpv6,
  parseIpv4,
  readIpv4,
  readIpv6,
  readMac,
  writeIpv4,
  writeIpv6,
  writeMac,
} from './values.js';
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

/** Writes one value of `f` at w.offset (w has room); throws naming the field if it does not fit. */
function putValue(w: OfWriter, f: OxmField, v: OxmValue, what: string): void {
  const buf = w.buf;
  const off = w.offset;
  switch (f.kind) {
    case 'uint': {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= 2 ** (f.width * 8)) {
        badValue(w, what, `${f.name} needs an integer 0..${2 ** (f.width * 8) - 1}, got ${String(v)}`);
      }
      buf.writeUIntBE(v, off, f.width);
      break;
    }
    case 'u64': {
      const b = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : -1n;
      if (b < 0n || b > U64_MAX)
        badValue(w, what, `${f.name} needs a 64-bit unsigned value, got ${String(v)}`);
      buf.writeBigUInt64BE(b, off);
      break;
    }
    case 'u128': {
      const b = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : -1n;
      if (b < 0n || b > U128_MAX)
        badValue(w, what, `${f.name} needs a 128-bit unsigned value, got ${String(v)}`);
      buf.writeBigUInt64BE(b >> 64n, off);
      buf.writeBigUInt64BE(b & U64_MAX, off + 8);
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
    case 'uint':
      return f.width === 1 ? buf[off]! : f.width === 2 ? buf.readUInt16BE(off) : buf.readUIntBE(off, f.width);
    case 'u64':
      return buf.readBigUInt64BE(off);
    case 'u128':
      return (buf.readBigUInt64BE(off) << 64n) | buf.readBigUInt64BE(off + 8);
    case 'mac':
      return readMac(buf, off);
    case 'ipv4':
      return readIpv4(buf, off);
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
  const hasMask = t.mask !== undefined;
  if (hasMask && !f.maskable) {
    throw new OfpCodecError('bad-value', `${what} ${f.name}`, w.offset, `${f.name} cannot be masked`);
  }
  w.ensure(4 + f.width * 2);
  w.buf.writeUInt32BE(hasMask ? f.header + 0x100 + f.width : f.header, w.offset);
  w.offset += 4;
  putValue(w, f, t.value, what);
  if (hasMask) putValue(w, f, t.mask!, what);
}

/** Decodes one TLV at r.offset. */
export function decodeOxm(r: OfReader): OxmTlv {
  const start = r.offset;
  const header = r.u32('oxm header');
  const len = header & 0xff;
  if (r.remaining < len) {
    r.fail(
      'truncated',
      `oxm 0x${header.toString(16)} declares ${len} value bytes, ${r.remaining} left`,
      start,
    );
  }
  const f = fieldByHeader(header);
  if (f === undefined || header >>> 16 === 0xffff) {
    r.offset += len;
    return { field: OPAQUE_FIELD, value: Buffer.from(r.buf.subarray(start, r.offset)) };
  }
  const hasMask = (header & 0x100) !== 0;
  if (len !== (hasMask ? f.width * 2 : f.width)) {
    r.fail(
      'bad-length',
      `oxm ${f.name} length ${len}, expected ${hasMask ? f.width * 2 : f.width}${hasMask ? ' (value+mask)' : ''}`,
      start,
    );
  }
  if (hasMask && !f.maskable) r.fail('bad-value', `oxm ${f.name} has a mask but is not maskable`, start);
  const off = r.offset;
  r.offset += len;
  const value = readValue(r.buf, off, f);
  if (!hasMask) return { field: f.name, value };
  return { field: f.name, value, mask: readValue(r.buf, off + f.width, f) };
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
