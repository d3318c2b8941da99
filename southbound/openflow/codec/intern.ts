import { readMac } from './values.js';

/**
 * Value interning for the decode hot path. A 100k-flow dump repeats the same few values over and
 * over (tenant metadata, VNIs, tunnel IPs, zero counters), and on this machine a decode's cost is
 * mostly allocating and garbage-collecting its results. bigints and strings are immutable
 * primitives, so handing out one shared instance per value is invisible to every consumer: only
 * fewer heap objects are made. Caches are small, bounded and direct-mapped (a miss overwrites).
 */

const SMALL_BIGINTS = 1 << 16;
const smallBigints: bigint[] = new Array(SMALL_BIGINTS);

/** BigInt(v) for an integer 0 <= v < 2^53; one shared instance for v below 65536. */
export function bigintOf(v: number): bigint {
  if (v < SMALL_BIGINTS) {
    let b = smallBigints[v];
    if (b === undefined) {
      b = BigInt(v);
      smallBigints[v] = b;
    }
    return b;
  }
  return BigInt(v);
}

const TWO_32 = 0x100000000;
const TWO_21 = 0x200000;

// Upper halves of 64-bit values above 2^53 (cookies: owner tag + app id), as bigint << 32.
const HI_SLOTS = 256;
const hiKeys = new Float64Array(HI_SLOTS).fill(-1);
const hiValues: bigint[] = new Array(HI_SLOTS).fill(0n);

/** The 64-bit big-endian unsigned value at buf[o] (bounds already checked). */
export function readU64(buf: Uint8Array, o: number): bigint {
  const hi = buf[o]! * 0x1000000 + ((buf[o + 1]! << 16) | (buf[o + 2]! << 8) | buf[o + 3]!);
  const lo = buf[o + 4]! * 0x1000000 + ((buf[o + 5]! << 16) | (buf[o + 6]! << 8) | buf[o + 7]!);
  if (hi === 0) return bigintOf(lo);
  // Below 2^53 the double is exact: one BigInt conversion instead of a shift, an or and two more.
  if (hi < TWO_21) return BigInt(hi * TWO_32 + lo);
  const slot = (hi ^ (hi >>> 8) ^ (hi >>> 16) ^ (hi >>> 24)) & (HI_SLOTS - 1);
  let high: bigint;
  if (hiKeys[slot] === hi) {
    high = hiValues[slot]!;
  } else {
    high = BigInt(hi) << 32n;
    hiKeys[slot] = hi;
    hiValues[slot] = high;
  }
  return lo === 0 ? high : high | BigInt(lo);
}

const IPV4_SLOTS = 4096;
const ipv4Keys = new Float64Array(IPV4_SLOTS).fill(-1);
const ipv4Values: string[] = new Array(IPV4_SLOTS).fill('');

/** Dotted-quad text of the 4 bytes at buf[o]; shared string per recently seen address. */
export function ipv4Text(buf: Uint8Array, o: number): string {
  const a = buf[o]!;
  const b = buf[o + 1]!;
  const c = buf[o + 2]!;
  const d = buf[o + 3]!;
  const key = a * 0x1000000 + ((b << 16) | (c << 8) | d);
  const slot = (key ^ (key >>> 12) ^ (key >>> 24)) & (IPV4_SLOTS - 1);
  if (ipv4Keys[slot] === key) return ipv4Values[slot]!;
  const s = `${a}.${b}.${c}.${d}`;
  ipv4Keys[slot] = key;
  ipv4Values[slot] = s;
  return s;
}

const MAC_SLOTS = 4096;
const macKeys = new Float64Array(MAC_SLOTS).fill(-1);
const macValues: string[] = new Array(MAC_SLOTS).fill('');

/** "aa:bb:cc:dd:ee:ff" of the 6 bytes at buf[o]; shared string per recently seen MAC. */
export function macText(buf: Uint8Array, o: number): string {
  const a = buf[o]!;
  const b = buf[o + 1]!;
  const c = buf[o + 2]!;
  const d = buf[o + 3]!;
  const e = buf[o + 4]!;
  const f = buf[o + 5]!;
  // 48 bits fit a double exactly.
  const key = (a * 256 + b) * 0x100000000 + (c * 0x1000000 + ((d << 16) | (e << 8) | f));
  const slot = (((d << 16) | (e << 8) | f) ^ (c << 4) ^ (b << 8)) & (MAC_SLOTS - 1);
  if (macKeys[slot] === key) return macValues[slot]!;
  const s = readMac(buf, o);

  macKeys[slot] = key;
  macValues[slot] = s;
  return s;
}
