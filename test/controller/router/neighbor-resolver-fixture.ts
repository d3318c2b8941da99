import { expect } from 'vitest';
import {
  type NeighborEffect,
  type NeighborPlace,
  NeighborResolver,
} from '../../../controller/router/neighbor-resolver.js';
import type { NeighborTimings } from '../../../controller/router/neighbor-timings.js';

/**
 * The neighbour table's state machine, with an explicit clock (ms). Timings as Linux's defaults
 * (1 s between requests, 3 requests, re-validated every 30 s, forgotten after 3 missed), a table
 * of at most 4 entries.
 */
export const T: NeighborTimings = {
  retransmitMs: 1000,
  requests: 3,
  failedHoldMs: 5000,
  refreshMs: 30_000,
  refreshesMissed: 3,
  maxEntries: 4,
  maxPerNetwork: 4,
  lockMs: 0,
};
export const K = { networkId: 'web', ip: '10.1.0.50' };
export const MAC = '02:00:00:00:aa:01';
/** web's VLAN 30 binding on hv1 (dp1) port 7, and its VLAN 31 binding on hv2 (dp2) port 8. */
export const P1: NeighborPlace = { dpid: 'dp1', chassisId: 'hv1', bindingId: 'vb1', ofport: 7, vlan: 30 };
export const P2: NeighborPlace = { dpid: 'dp2', chassisId: 'hv2', bindingId: 'vb2', ofport: 8, vlan: 31 };

/** Effects as short text: `request K`, `unicast K -> mac@dpid:port/vlan`, `install dp`, `remove dp`. */
export const show = (effects: readonly NeighborEffect[]): string[] =>
  effects.map((e) => {
    if (e.kind === 'request') {
      const k = `${e.key.networkId}/${e.key.ip}`;
      if (!e.unicast) return `request ${k}`;
      const p = e.unicast.place;
      return `unicast ${k} -> ${e.unicast.mac}@${p.dpid}:${p.ofport}/${p.vlan}`;
    }
    return `${e.kind} ${e.dpid} ${e.neighbor.ip}=${e.neighbor.mac}@${e.neighbor.place.dpid}`;
  });

/** The requests `tick` sends between `from` and `to` (inclusive), ticking every `step` ms. */
export function ticks(r: NeighborResolver, from: number, to: number, step = 100) {
  const out: Array<{ at: number; effects: string[]; failed: string[]; forgotten: string[] }> = [];
  for (let at = from; at <= to; at += step) {
    const t = r.tick(at);
    if (t.effects.length || t.failed.length || t.forgotten.length)
      out.push({
        at,
        effects: show(t.effects),
        failed: t.failed.map((k) => `${k.networkId}/${k.ip}`),
        forgotten: t.forgotten.map((n) => `${n.networkId}/${n.ip}`),
      });
  }
  return out;
}

/** A resolver with K learned at P1 at time 500 after dp9 asked at 0. */
export function learnedAt500() {
  const r = new NeighborResolver(T);
  r.miss('dp9', K, 0);
  const v = r.reply(K, MAC, P1, 500);
  expect(v.kind).toBe('learned');
  return r;
}
