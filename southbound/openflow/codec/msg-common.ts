import { readU64 } from './intern.js';
import type { OpaqueProperty } from './messages.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/**
 * Small wire helpers shared by the message families: MAC addresses, strict fixed-width strings
 * and 8-byte-padded opaque property lists. Written for byte-exact round trips: what decodes
 * must re-encode to the same bytes, so anything we could not reproduce is rejected instead.
 */

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function readMac(r: OfReader, what = 'hw_addr'): string {
  r.need(6, what);
  const b = r.buf;
  const o = r.offset;
  r.offset = o + 6;
  return `${HEX[b[o]!]}:${HEX[b[o + 1]!]}:${HEX[b[o + 2]!]}:${HEX[b[o + 3]!]}:${HEX[b[o + 4]!]}:${HEX[b[o + 5]!]}`;
}

export function writeMac(w: OfWriter, mac: string): void {
  const parts = mac.split(':');
  if (parts.length !== 6) throw new TypeError(`bad MAC address '${mac}'`);
  w.ensure(6);
  for (const p of parts) {
    const v = Number.parseInt(p, 16);
    if (!(v >= 0 && v <= 255) || p.length > 2) throw new TypeError(`bad MAC address '${mac}'`);
    w.buf[w.offset++] = v;
  }
}

/** A NUL-padded string of n bytes; bytes after the first NUL must be zero (else not reproducible). */
export function readFixedString(r: OfReader, n: number, what: string): string {
  r.need(n, what);
  const b = r.buf;
  const start = r.offset;
  let end = start;
  const stop = start + n;
  while (end < stop && b[end] !== 0) end++;
  for (let i = end; i < stop; i++) {
    if (b[i] !== 0) r.fail('bad-padding', `${what} has non-zero byte after its NUL terminator`, i);
  }
  r.offset = stop;
  return b.toString('latin1', start, end);
}

/** Writes s (latin1) into n bytes, NUL padded; a string of exactly n bytes has no terminator. */
export function writeFixedString(w: OfWriter, s: string, n: number): void {
  w.ensure(n);
  w.buf.fill(0, w.offset, w.offset + n);
  w.buf.write(s.length > n ? s.slice(0, n) : s, w.offset, 'latin1');
  w.offset += n;
}

/** Zero bytes up to the next multiple of 8 of `len`. */
export function pad8(len: number): number {
  return (8 - (len & 7)) & 7;
}

/** Properties (type u16, length u16, body, zero pad to 8) until the end of `r`. */
export function readProperties(r: OfReader, what: string): OpaqueProperty[] {
  const props: OpaqueProperty[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const propType = r.u16(`${what} type`);
    const len = r.u16(`${what} length`);
    if (len < 4) r.fail('bad-length', `${what} length ${len} is below 4`, at + 2);
    const data = r.bytes(len - 4, `${what} body`);
    r.pad(pad8(len), `${what} padding`);
    props.push({ propType, data });
  }
  return props;
}

export function writeProperties(w: OfWriter, props: OpaqueProperty[]): void {
  for (const p of props) {
    const len = 4 + p.data.length;
    w.u16(p.propType).u16(len).bytes(p.data).zeros(pad8(len));
  }
}

/** u64 write through the fast store below. */
export function putU64(w: OfWriter, v: bigint): void {
  w.ensure(8);
  put64(w.buf, w.offset, v);
  w.offset += 8;
}

/*
 * Raw big-endian loads/stores for the hot paths (FLOW_MOD encode, flow stats decode). Callers
 * have already checked bounds (OfReader.need / OfWriter.ensure); these skip Buffer's per-call
 * argument checks, which dominate when a message is a few dozen fields.
 */

export function get32(b: Buffer, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

/** A 64-bit value as bigint; interned below 65536 (see intern.ts). */
export const get64: (b: Buffer, o: number) => bigint = readU64;

export function put32(b: Buffer, o: number, v: number): void {
  b[o] = v >>> 24;
  b[o + 1] = v >>> 16;
  b[o + 2] = v >>> 8;
  b[o + 3] = v;
}

export function put16(b: Buffer, o: number, v: number): void {
  b[o] = v >>> 8;
  b[o + 1] = v;
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function put64(b: Buffer, o: number, v: bigint): void {
  if (v >= 0n && v <= SAFE) {
    const n = Number(v);
    put32(b, o, Math.floor(n / 4294967296));
    put32(b, o + 4, n >>> 0);
  } else {
    b.writeBigUInt64BE(BigInt.asUintN(64, v), o);
  }
}
