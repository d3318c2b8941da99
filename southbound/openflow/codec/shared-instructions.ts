import { decodeInstructions, type Instruction } from './instructions.js';
import type { OfReader } from './reader.js';

/**
 * Hash-consing of decoded instruction lists. In a flow dump many flows carry byte-identical
 * instructions (every MAC behind one remote chassis of one network: the same set tun_dst, set
 * tun_id, output), and decoding them is mostly allocation: an instruction list is 6-8 objects
 * plus strings and bigints. So the decoder returns one shared, deeply frozen list per distinct
 * byte string it has recently seen. Sharing is safe because the list is frozen (a consumer that
 * tries to modify it gets a TypeError instead of changing other flows) and because it equals,
 * field for field, what decoding those bytes again would return.
 *
 * The cache is direct-mapped and bounded (SLOTS lists of at most MAX_BYTES each, keys in one
 * slab). When nearly every lookup misses (a dump whose flows all differ), it switches itself off
 * for a while, so the miss path costs no hashing, copying or freezing.
 */

const SLOTS = 8192;
const MAX_BYTES = 248;
const SLOT_BYTES = 256;
/** Lookups per verdict, and how many of them must hit to keep the cache on. */
const WINDOW = 2048;
const MIN_HITS = 256;
/** Lists decoded without the cache after a bad verdict, before it is tried again. */
const BYPASS = 32768;

let slab: Uint8Array | undefined;
const lengths = new Int32Array(SLOTS);
const hashes = new Int32Array(SLOTS);
const values: Array<Instruction[] | undefined> = new Array(SLOTS).fill(undefined);
let lookups = 0;
let hits = 0;
let bypassLeft = 0;

function hashBytes(buf: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5 ^ (end - start);
  for (let i = start; i < end; i += 4) {
    const word = (buf[i]! << 24) | (buf[i + 1]! << 16) | (buf[i + 2]! << 8) | buf[i + 3]!;
    h = Math.imul(h ^ word, 0x01000193);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  return h ^ (h >>> 13);
}

/**
 * decodeInstructions(r) for r bounded to exactly one instruction list; the result may be shared
 * with other flows of identical bytes and is then frozen.
 */
export function decodeSharedInstructions(r: OfReader): Instruction[] {
  const start = r.offset;
  const end = r.end;
  const len = end - start;
  if (len === 0 || len > MAX_BYTES || (len & 3) !== 0) return decodeInstructions(r);
  if (bypassLeft > 0) {
    bypassLeft--;
    return decodeInstructions(r);
  }
  if (++lookups === WINDOW) {
    if (hits < MIN_HITS) bypassLeft = BYPASS;
    lookups = 0;
    hits = 0;
  }
  const buf = r.buf;
  const h = hashBytes(buf, start, end);
  const slot = h & (SLOTS - 1);
  if (slab === undefined) slab = new Uint8Array(SLOTS * SLOT_BYTES);
  const keys = slab;
  const base = slot * SLOT_BYTES;
  if (hashes[slot] === h && lengths[slot] === len) {
    let same = true;
    for (let i = 0; i < len; i++) {
      if (keys[base + i] !== buf[start + i]) {
        same = false;
        break;
      }
    }
    if (same) {
      hits++;
      r.offset = end;
      return values[slot]!;
    }
  }
  const list = decodeInstructions(r);
  if (freezeInstructions(list)) {
    for (let i = 0; i < len; i++) keys[base + i] = buf[start + i]!;
    hashes[slot] = h;
    lengths[slot] = len;
    values[slot] = list;
  }
  return list;
}

/** Freezes a decoded list in depth; false (and nothing frozen) if it holds bytes (Buffers cannot be frozen). */
function freezeInstructions(list: Instruction[]): boolean {
  if (!freezable(list)) return false;
  deepFreeze(list);
  return true;
}

function freezable(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return true;
  if (ArrayBuffer.isView(v)) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!freezable(v[i])) return false;
    return true;
  }
  for (const k in v) if (!freezable((v as Record<string, unknown>)[k])) return false;
  return true;
}

function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  if (Array.isArray(v)) for (let i = 0; i < v.length; i++) deepFreeze(v[i]);
  else for (const k in v) deepFreeze((v as Record<string, unknown>)[k]);
  Object.freeze(v);
}

/** Test hook: forget every cached list and reset the hit statistics. */
export function clearSharedInstructions(): void {
  values.fill(undefined);
  lengths.fill(0);
  hashes.fill(0);
  lookups = 0;
  hits = 0;
  bypassLeft = 0;
}
