import { describe, expect, it } from 'vitest';
import { NeighborResolver } from '../../../controller/router/neighbor-resolver.js';
import { K, learnedAt500, MAC, P1, P2, show, T, ticks } from './neighbor-resolver-fixture.js';

/** NeighborResolver: starting, retrying, failing and answering a resolution (fixture: neighbor-resolver-fixture.ts). */
describe('NeighborResolver: resolving', () => {
  it('a miss starts a resolution: one broadcast request, an incomplete entry', () => {
    const r = new NeighborResolver(T);
    const v = r.miss('dp1', K, 0);
    expect(v.kind).toBe('resolving');
    expect(v.kind === 'resolving' && show(v.effects)).toEqual(['request web/10.1.0.50']);
    expect(v.kind === 'resolving' && v.effects[0]).toEqual({ kind: 'request', key: K });
    expect(r.size).toBe(1);
    expect(r.get(K)).toEqual({ networkId: 'web', ip: '10.1.0.50', state: 'incomplete', installedOn: [] });
  });

  it('further misses while resolving (from any datapath) ask nothing more', () => {
    const r = new NeighborResolver(T);
    r.miss('dp1', K, 0);
    for (const [dp, at] of [
      ['dp1', 10],
      ['dp3', 20],
      ['dp3', 900],
    ] as const) {
      expect(r.miss(dp, K, at)).toEqual({ kind: 'resolving', effects: [] });
    }
    expect(r.size).toBe(1);
  });

  it('retransmits exactly every retransmitMs, never before, and fails after `requests` requests', () => {
    const r = new NeighborResolver(T);
    r.miss('dp1', K, 0);
    expect(ticks(r, 0, 10_000, 1)).toEqual([
      { at: 1000, effects: ['request web/10.1.0.50'], failed: [], forgotten: [] },
      { at: 2000, effects: ['request web/10.1.0.50'], failed: [], forgotten: [] },
      { at: 3000, effects: [], failed: ['web/10.1.0.50'], forgotten: [] },
    ]);
    expect(r.get(K)?.state).toBe('failed');
  });

  it('retransmits are counted from the last request, with whatever timings it was given', () => {
    const r = new NeighborResolver({ ...T, retransmitMs: 250, requests: 5 });
    r.miss('dp1', K, 1000);
    // Ticks that come late (every 300 ms): each retransmit at least 250 ms after the one before.
    const seen = ticks(r, 1000, 4000, 300);
    expect(seen.map((s) => [s.at, s.effects.length, s.failed.length])).toEqual([
      [1300, 1, 0],
      [1600, 1, 0],
      [1900, 1, 0],
      [2200, 1, 0],
      [2500, 0, 1],
    ]);
  });

  it('a failed resolution answers unreachable for failedHoldMs, then the next packet starts again', () => {
    const r = new NeighborResolver(T);
    r.miss('dp1', K, 0);
    ticks(r, 0, 3000);
    expect(r.get(K)?.state).toBe('failed'); // failed at 3000
    for (const at of [3000, 5000, 7999])
      expect(r.miss('dp1', K, at), `${at}`).toEqual({ kind: 'unreachable' });
    const again = r.miss('dp3', K, 8000);
    expect(again.kind === 'resolving' && show(again.effects)).toEqual(['request web/10.1.0.50']);
    expect(r.get(K)?.state).toBe('incomplete');
    // A whole new resolution: three requests from 8000, failed at 11000.
    expect(ticks(r, 8000, 12_000, 1).map((s) => [s.at, s.effects.length, s.failed.length])).toEqual([
      [9000, 1, 0],
      [10_000, 1, 0],
      [11_000, 0, 1],
    ]);
  });

  it('the new resolution installs only on datapaths that asked since, not those of the failed one', () => {
    const r = new NeighborResolver(T);
    r.miss('dp1', K, 0);
    r.miss('dp3', K, 10);
    ticks(r, 0, 3000);
    r.miss('dp4', K, 8000);
    const v = r.reply(K, MAC, P2, 8100);
    expect(show(v.kind === 'ignored' ? [] : v.effects).sort()).toEqual([
      'install dp2 10.1.0.50=02:00:00:00:aa:01@dp2',
      'install dp4 10.1.0.50=02:00:00:00:aa:01@dp2',
    ]);
  });

  it('a failed entry is dropped from the table 2 x failedHoldMs after it failed', () => {
    const r = new NeighborResolver(T);
    r.miss('dp1', K, 0);
    ticks(r, 0, 3000);
    r.tick(3000 + 2 * T.failedHoldMs - 1);
    expect(r.get(K)?.state).toBe('failed');
    r.tick(3000 + 2 * T.failedHoldMs);
    expect(r.get(K)).toBeUndefined();
    expect(r.size).toBe(0);
    // Gone: the next packet starts a resolution without waiting.
    expect(r.miss('dp1', K, 13_001).kind).toBe('resolving');
  });
});

describe('NeighborResolver: answers', () => {
  it('ignores an answer to a question it never asked, and keeps no entry of it', () => {
    const r = new NeighborResolver(T);
    r.miss('dp1', { networkId: 'web', ip: '10.1.0.51' }, 0);
    for (const key of [K, { networkId: 'db', ip: '10.1.0.51' }]) {
      const v = r.reply(key, MAC, P1, 100);
      expect(v).toEqual({
        kind: 'ignored',
        reason: `unsolicited: weft did not ask for ${key.ip} in ${key.networkId}`,
      });
    }
    expect(r.size).toBe(1);
    expect(r.get(K)).toBeUndefined();
  });

  it('learns it with its place: installs for every datapath that waited, and the place own', () => {
    const r = new NeighborResolver(T);
    r.miss('dp3', K, 0);
    r.miss('dp4', K, 100);
    r.miss('dp3', K, 200);
    const v = r.reply(K, MAC, P1, 1500);
    expect(v.kind).toBe('learned');
    if (v.kind === 'ignored') throw new Error('ignored');
    expect(v.neighbor).toEqual({ networkId: 'web', ip: '10.1.0.50', mac: MAC, place: P1 });
    // One install per datapath, each of the same neighbour.
    expect(v.effects.map((e) => e.kind === 'install' && e.dpid).sort()).toEqual(['dp1', 'dp3', 'dp4']);
    for (const e of v.effects)
      expect(e).toEqual({ kind: 'install', dpid: expect.any(String), neighbor: v.neighbor });
    expect(r.get(K)).toEqual({
      networkId: 'web',
      ip: '10.1.0.50',
      state: 'reachable',
      mac: MAC,
      chassisId: 'hv1',
      bindingId: 'vb1',
      vlan: 30,
      installedOn: ['dp1', 'dp3', 'dp4'],
    });
    // Resolved: no more broadcast requests.
    expect(ticks(r, 1500, 20_000)).toEqual([]);
  });

  it('installs once on a datapath that both waited and is the place', () => {
    const r = new NeighborResolver(T);
    r.miss('dp1', K, 0);
    const v = r.reply(K, MAC, P1, 10);
    expect(v.kind !== 'ignored' && show(v.effects)).toEqual(['install dp1 10.1.0.50=02:00:00:00:aa:01@dp1']);
  });

  it('a learned neighbour missed on another datapath: its flows go there at once, no request', () => {
    const r = learnedAt500();
    const v = r.miss('dp5', K, 600);
    expect(v.kind).toBe('learned');
    expect(v.kind === 'learned' && show(v.effects)).toEqual(['install dp5 10.1.0.50=02:00:00:00:aa:01@dp1']);
    expect(r.get(K)?.installedOn).toEqual(['dp1', 'dp5', 'dp9']);
  });

  it('a late answer to a failed resolution is still taken (installs on its place only)', () => {
    const r = new NeighborResolver(T);
    r.miss('dp3', K, 0);
    ticks(r, 0, 3000);
    const v = r.reply(K, MAC, P1, 3500);
    expect(v.kind).toBe('learned');
    expect(v.kind !== 'ignored' && show(v.effects)).toEqual(['install dp1 10.1.0.50=02:00:00:00:aa:01@dp1']);
    expect(r.miss('dp3', K, 3600).kind).toBe('learned');
  });

  it('a changed MAC at the same place: changed, the flows of the old MAC removed everywhere first, then installed', () => {
    const r = learnedAt500();
    const v = r.reply(K, '02:00:00:00:bb:02', P1, 700);
    expect(v.kind).toBe('changed');
    if (v.kind === 'ignored') throw new Error('ignored');
    expect(v.effects.slice(0, 2).every((e) => e.kind === 'remove')).toBe(true);
    expect(show(v.effects).sort()).toEqual([
      'install dp1 10.1.0.50=02:00:00:00:bb:02@dp1',
      'install dp9 10.1.0.50=02:00:00:00:bb:02@dp1',
      `remove dp1 10.1.0.50=${MAC}@dp1`,
      `remove dp9 10.1.0.50=${MAC}@dp1`,
    ]);
    expect(r.get(K)?.mac).toBe('02:00:00:00:bb:02');
  });

  it('another port of the same datapath: changed, installed again (the l2 flow is replaced), nothing removed', () => {
    const r = learnedAt500();
    const v = r.reply(K, MAC, { ...P1, bindingId: 'vb9', ofport: 9, vlan: 39 }, 700);
    expect(v.kind).toBe('changed');
    expect(v.kind !== 'ignored' && v.effects.map((e) => e.kind)).toEqual(['install', 'install']);
    expect(r.get(K)).toMatchObject({ bindingId: 'vb9', vlan: 39 });
  });

  it('moved to another datapath: removed at the old place first, then installed, the old place no longer holding it', () => {
    const r = learnedAt500(); // installed on dp9 (waited) and dp1 (its place)
    const v = r.reply(K, MAC, P2, 800);
    expect(v.kind).toBe('changed');
    if (v.kind === 'ignored') throw new Error('ignored');
    expect(v.effects[0]).toEqual({
      kind: 'remove',
      dpid: 'dp1',
      neighbor: { networkId: 'web', ip: '10.1.0.50', mac: MAC, place: P1 },
    });
    expect(show(v.effects.slice(1)).sort()).toEqual([
      'install dp2 10.1.0.50=02:00:00:00:aa:01@dp2',
      'install dp9 10.1.0.50=02:00:00:00:aa:01@dp2',
    ]);
    expect(v.effects.filter((e) => e.kind === 'remove')).toHaveLength(1);
    expect(r.get(K)).toMatchObject({
      chassisId: 'hv2',
      bindingId: 'vb2',
      vlan: 31,
      installedOn: ['dp2', 'dp9'],
    });
  });
});
