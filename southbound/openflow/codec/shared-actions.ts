import { type Action, decodeAction, OFPAT } from './actions.js';
import { decodeOxm, type OxmTlv } from './oxm.js';
import type { OfReader } from './reader.js';

/**
 * Hash-consing of the two 16-byte actions every overlay flow carries (output, and set_field of a
 * value up to 8 bytes: tun_id, tun_dst, a register), for dumps whose instruction lists differ
 * as a whole (see shared-instructions.ts) but repeat these parts; and likewise of match TLVs of
 * up to 8 value bytes without a mask (metadata, in_port, registers, tun_id). A shared action is frozen, so
 * no consumer can change another flow's action through it. A byte string is admitted on its
 * second sighting, so values seen once (a per-flow tun_dst) cost no freezing and evict nothing
 * useful. Bounded and direct-mapped.
 */

const SLOTS = 4096;
const keys = new Int32Array(SLOTS * 4);
const seen = new Uint8Array(SLOTS);
const values: Array<Action | undefined> = new Array(SLOTS).fill(undefined);

const word = (b: Buffer, o: number) => (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!;

/** decodeAction(r), sharing output and short set_field actions between the flows of a dump. */
export function decodeSharedAction(r: OfReader): Action {
  const b = r.buf;
  const at = r.offset;
  if (r.end - at < 16) return decodeAction(r);
  const w0 = word(b, at);
  const type = w0 >>> 16;
  if ((w0 & 0xffff) !== 16 || (type !== OFPAT.OUTPUT && type !== OFPAT.SET_FIELD)) return decodeAction(r);
  const w1 = word(b, at + 4);
  const w2 = word(b, at + 8);
  const w3 = word(b, at + 12);
  let h = Math.imul(w1 ^ type, 0x9e3779b1) ^ Math.imul(w2, 0x85ebca6b) ^ Math.imul(w3, 0xc2b2ae35);
  h ^= h >>> 15;
  const slot = h & (SLOTS - 1);
  const k = slot * 4;
  if (keys[k] === w0 && keys[k + 1] === w1 && keys[k + 2] === w2 && keys[k + 3] === w3 && seen[slot]) {
    const shared = values[slot];
    if (shared !== undefined) {
      r.offset = at + 16;
      return shared;
    }
    const a = decodeAction(r);
    values[slot] = Object.freeze(a);
    return a;
  }
  const a = decodeAction(r);
  keys[k] = w0;
  keys[k + 1] = w1;
  keys[k + 2] = w2;
  keys[k + 3] = w3;
  seen[slot] = 1;
  values[slot] = undefined;
  return a;
}

const TLV_SLOTS = 4096;
const tlvKeys = new Int32Array(TLV_SLOTS * 3);
const tlvSeen = new Uint8Array(TLV_SLOTS);
const tlvValues: Array<OxmTlv | undefined> = new Array(TLV_SLOTS).fill(undefined);

/** decodeOxm(r), sharing unmasked TLVs of up to 8 value bytes between the flows of a dump. */
export function decodeSharedOxm(r: OfReader): OxmTlv {
  const b = r.buf;
  const at = r.offset;
  if (r.end - at < 4) return decodeOxm(r);
  const w0 = word(b, at);
  const len = w0 & 0xff;
  if (len > 8 || (w0 & 0x100) !== 0 || r.end - at < 4 + len || w0 >>> 16 === 0xffff) return decodeOxm(r);
  // The value's bytes, zero past its end (those belong to the next TLV).
  let w1 = 0;
  let w2 = 0;
  for (let i = 0; i < len; i++) {
    const v = b[at + 4 + i]!;
    if (i < 4) w1 |= v << (24 - 8 * i);
    else w2 |= v << (24 - 8 * (i - 4));
  }
  let h = Math.imul(w0, 0x9e3779b1) ^ Math.imul(w1, 0x85ebca6b) ^ Math.imul(w2, 0xc2b2ae35);
  h ^= h >>> 15;
  const slot = h & (TLV_SLOTS - 1);
  const k = slot * 3;
  if (tlvKeys[k] === w0 && tlvKeys[k + 1] === w1 && tlvKeys[k + 2] === w2 && tlvSeen[slot]) {
    const shared = tlvValues[slot];
    if (shared !== undefined) {
      r.offset = at + 4 + len;
      return shared;
    }
    const t = decodeOxm(r);
    tlvValues[slot] = Object.freeze(t);
    return t;
  }
  const t = decodeOxm(r);
  tlvKeys[k] = w0;
  tlvKeys[k + 1] = w1;
  tlvKeys[k + 2] = w2;
  tlvSeen[slot] = 1;
  tlvValues[slot] = undefined;
  return t;
}

/** Test hook: forget every shared action and TLV. */
export function clearSharedActions(): void {
  seen.fill(0);
  values.fill(undefined);
  tlvSeen.fill(0);
  tlvValues.fill(undefined);
}
