import { type Action, decodeActions, encodeActions } from './actions.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/**
 * Group buckets (ofp_bucket, spec 7.3.4.2): len u16, weight u16, watch_port u32, watch_group u32,
 * pad 4, actions. weight matters for SELECT; watch_port/watch_group for FAST_FAILOVER
 * (OFPP_ANY / OFPG_ANY = 0xffffffff when unused).
 */
export interface Bucket {
  weight: number;
  watchPort: number;
  watchGroup: number;
  actions: Action[];
}

export const BUCKET_HEADER_LEN = 16;
export const WATCH_ANY = 0xffffffff;

export function encodeBuckets(w: OfWriter, buckets: Bucket[]): void {
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i]!;
    const start = w.offset;
    w.u16(0).u16(b.weight).u32(b.watchPort).u32(b.watchGroup).zeros(4);
    encodeActions(w, b.actions);
    w.patchU16(start, w.offset - start);
  }
}

/** Decodes every bucket in r (bounded to exactly the bucket list). */
export function decodeBuckets(r: OfReader): Bucket[] {
  const out: Bucket[] = [];
  while (r.remaining > 0) {
    const start = r.offset;
    const len = r.u16('bucket length');
    if (len < BUCKET_HEADER_LEN || len % 8 !== 0) {
      r.fail('bad-length', `bucket length ${len} is not a multiple of 8 (min 16)`, start);
    }
    if (r.remaining < len - 2) r.fail('truncated', `bucket length ${len} runs past the list`, start);
    const weight = r.u16();
    const watchPort = r.u32();
    const watchGroup = r.u32();
    r.pad(4, 'bucket padding');
    const actions = decodeActions(r.sub(len - BUCKET_HEADER_LEN, `${r.context}/bucket@${start}`));
    out.push({ weight, watchPort, watchGroup, actions });
  }
  return out;
}
