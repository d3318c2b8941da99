import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_NEIGHBOR_TIMINGS,
  learnedHardTimeoutSeconds,
  type NeighborEffect,
  type NeighborPlace,
  NeighborResolver,
  type NeighborTimings,
} from '../../../controller/router/neighbor-resolver.js';

/**
 * The neighbour table's state machine, with an explicit clock (ms). Timings as Linux's defaults
 * (1 s between requests, 3 requests, re-validated every 30 s, forgotten after 3 missed), a table
 * of at most 4 entries.
 */
const T: NeighborTimings = {
  retransmitMs: 1000,
  requests: 3,
  failedHoldMs: 5000,
  refreshMs: 30_000,
  refreshesMissed: 3,
  maxEntries: 4,
  maxPerNetwork: 4,
  lockMs: 0,
};
const K = { networkId: 'web', ip: '10.1.0.50' };
const MAC = '02:00:00:00:aa:01';
/** web's VLAN 30 binding on hv1 (dp1) port 7, and its VLAN 31 binding on hv2 (dp2) port 8. */
const P1: NeighborPlace = { dpid: 'dp1', chassisId: 'hv1', bindingId: 'vb1', ofport: 7, vlan: 30 };
const P2: NeighborPlace = { dpid: 'dp2', chassisId: 'hv2', bindingId: 'vb2', ofport: 8, vlan: 31 };

/** Effects as short text: `request K`, `unicast K -> mac@dpid:port/vlan`, `install dp`, `remove dp`. */
const show = (effects: readonly NeighborEffect[]): string[] =>
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
function ticks(r: NeighborResolver, from: number, to: number, step = 100) {
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
function learnedAt500() {
  const r = new NeighborResolver(T);
  r.miss('dp9', K, 0);
  const v = r.reply(K, MAC, P1, 500);
  expect(v.kind).toBe('learned');
  return r;
}

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

describe('NeighborResolver: re-validation', () => {
  it('refreshes a learned neighbour by a unicast request to its MAC and place every refreshMs', () => {
    const r = learnedAt500();
    expect(r.tick(500 + T.refreshMs - 1).effects).toEqual([]);
    const t = r.tick(500 + T.refreshMs);
    expect(t.effects).toEqual([{ kind: 'request', key: K, unicast: { mac: MAC, place: P1 } }]);
    expect(show(t.effects)).toEqual(['unicast web/10.1.0.50 -> 02:00:00:00:aa:01@dp1:7/30']);
  });

  it('an answered refresh: refreshed, installed again on every datapath holding it (restarting the hard timeout)', () => {
    const r = learnedAt500();
    r.miss('dp5', K, 1000);
    r.tick(30_500);
    const v = r.reply(K, MAC, P1, 30_600);
    expect(v.kind).toBe('refreshed');
    expect(v.kind !== 'ignored' && show(v.effects).sort()).toEqual([
      'install dp1 10.1.0.50=02:00:00:00:aa:01@dp1',
      'install dp5 10.1.0.50=02:00:00:00:aa:01@dp1',
      'install dp9 10.1.0.50=02:00:00:00:aa:01@dp1',
    ]);
    // The next refresh is counted from that answer; the missed count starts over.
    expect(r.tick(30_600 + T.refreshMs - 1).effects).toEqual([]);
    expect(show(r.tick(30_600 + T.refreshMs).effects)).toEqual([
      'unicast web/10.1.0.50 -> 02:00:00:00:aa:01@dp1:7/30',
    ]);
  });

  it('forgotten after refreshesMissed unanswered refreshes, its flows removed wherever they are', () => {
    const r = learnedAt500();
    r.miss('dp5', K, 1000);
    // The order of removes among datapaths does not matter.
    const seen = ticks(r, 500, 200_000, 100).map((s) => ({ ...s, effects: [...s.effects].sort() }));
    // First unicast to where it was; unanswered, broadcast again (it may have moved silently).
    expect(seen).toEqual([
      {
        at: 30_500,
        effects: ['unicast web/10.1.0.50 -> 02:00:00:00:aa:01@dp1:7/30'],
        failed: [],
        forgotten: [],
      },
      {
        at: 60_500,
        effects: ['request web/10.1.0.50'],
        failed: [],
        forgotten: [],
      },
      {
        at: 90_500,
        effects: ['request web/10.1.0.50'],
        failed: [],
        forgotten: [],
      },
      {
        at: 120_500,
        effects: [
          'remove dp9 10.1.0.50=02:00:00:00:aa:01@dp1',
          'remove dp1 10.1.0.50=02:00:00:00:aa:01@dp1',
          'remove dp5 10.1.0.50=02:00:00:00:aa:01@dp1',
        ].sort(),
        failed: [],
        forgotten: ['web/10.1.0.50'],
      },
    ]);
    expect(r.get(K)).toBeUndefined();
    // Forgotten, so a new packet asks again from scratch.
    expect(r.miss('dp5', K, 200_001).kind).toBe('resolving');
  });

  it('forgets at confirmation + (refreshesMissed + 1) x refreshMs, for other counts too', () => {
    const r = new NeighborResolver({ ...T, refreshMs: 5000, refreshesMissed: 1 });
    r.miss('dp1', K, 0);
    r.reply(K, MAC, P1, 100);
    expect(
      ticks(r, 100, 30_000, 50).map((s) => [s.at, s.effects.map((e) => e.split(' ')[0]), s.forgotten.length]),
    ).toEqual([
      [5100, ['unicast'], 0],
      [10_100, ['remove'], 1],
    ]);
  });

  it('the hard timeout of learned flows outlasts the refreshes a neighbour may miss', () => {
    const d = DEFAULT_NEIGHBOR_TIMINGS;
    expect(learnedHardTimeoutSeconds(d) * 1000).toBeGreaterThan(d.refreshMs * (d.refreshesMissed + 1));
    // Linux-like defaults: 30 s x 4, and a little margin: 121 s.
    expect(learnedHardTimeoutSeconds(d)).toBe(121);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 600_000 }),
        fc.integer({ min: 0, max: 20 }),
        (refreshMs, refreshesMissed) => {
          const t = { ...d, refreshMs, refreshesMissed };
          const s = learnedHardTimeoutSeconds(t);
          expect(Number.isInteger(s)).toBe(true);
          expect(s * 1000).toBeGreaterThan(refreshMs * (refreshesMissed + 1));
        },
      ),
    );
  });

  it('the flows a neighbour got at its last answer are still there when it is forgotten (by the state machine)', () => {
    // Whatever the timings, forgetting (which removes the flows) comes before their hard timeout.
    fc.assert(
      fc.property(
        fc.integer({ min: 1000, max: 60_000 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 10_000 }),
        (refreshMs, refreshesMissed, confirmedAt) => {
          const t = { ...T, refreshMs, refreshesMissed };
          const r = new NeighborResolver(t);
          r.miss('dp1', K, 0);
          r.reply(K, MAC, P1, confirmedAt);
          let forgottenAt: number | undefined;
          for (let at = confirmedAt; forgottenAt === undefined && at < confirmedAt + 10_000_000; at += 250) {
            if (r.tick(at).forgotten.length) forgottenAt = at;
          }
          expect(forgottenAt).toBeDefined();
          expect(forgottenAt! - confirmedAt).toBeLessThan(learnedHardTimeoutSeconds(t) * 1000);
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('NeighborResolver: limits and housekeeping', () => {
  it('full at maxEntries: new addresses are refused, known ones still served', () => {
    const r = new NeighborResolver(T);
    for (let i = 1; i <= 4; i++)
      expect(r.miss('dp1', { networkId: 'web', ip: `10.1.0.${i}` }, 0).kind).toBe('resolving');
    expect(r.miss('dp1', { networkId: 'web', ip: '10.1.0.5' }, 0)).toEqual({ kind: 'full' });
    expect(r.miss('dp1', { networkId: 'db', ip: '10.1.0.1' }, 0)).toEqual({ kind: 'full' });
    expect(r.size).toBe(4);
    expect(r.miss('dp2', { networkId: 'web', ip: '10.1.0.1' }, 10).kind).toBe('resolving');
    // Once the failed ones leave the table, there is room again.
    ticks(r, 0, 3000);
    expect(r.miss('dp1', { networkId: 'web', ip: '10.1.0.5' }, 4000)).toEqual({ kind: 'full' });
    r.tick(3000 + 2 * T.failedHoldMs);
    expect(r.size).toBe(0);
    expect(r.miss('dp1', { networkId: 'web', ip: '10.1.0.5' }, 13_001).kind).toBe('resolving');
  });

  it('keys are per network: the same address in two networks is two entries', () => {
    const r = new NeighborResolver(T);
    expect(r.miss('dp1', { networkId: 'web', ip: '10.1.0.50' }, 0).kind).toBe('resolving');
    const other = r.miss('dp1', { networkId: 'blue', ip: '10.1.0.50' }, 0);
    expect(other.kind === 'resolving' && other.effects).toHaveLength(1);
    expect(r.size).toBe(2);
    r.reply({ networkId: 'blue', ip: '10.1.0.50' }, MAC, P1, 10);
    expect(r.get(K)?.state).toBe('incomplete');
  });

  it('forgetDatapath: a datapath that went away neither waits nor holds flows any more', () => {
    const r = new NeighborResolver(T);
    r.miss('dp3', K, 0);
    r.miss('dp4', K, 0);
    r.forgetDatapath('dp3');
    const v = r.reply(K, MAC, P1, 100);
    expect(v.kind !== 'ignored' && v.effects.map((e) => e.kind === 'install' && e.dpid).sort()).toEqual([
      'dp1',
      'dp4',
    ]);
    r.forgetDatapath('dp4');
    expect(r.get(K)?.installedOn).toEqual(['dp1']);
    // Forgotten later: flows are removed only where it still holds them.
    const seen = ticks(r, 100, 130_000, 500);
    expect(seen.at(-1)?.effects).toEqual(['remove dp1 10.1.0.50=02:00:00:00:aa:01@dp1']);
  });

  it('clear forgets everything', () => {
    const r = learnedAt500();
    r.miss('dp1', { networkId: 'db', ip: '10.2.0.9' }, 0);
    r.clear();
    expect(r.size).toBe(0);
    expect(r.list(1000)).toEqual([]);
    expect(r.tick(1_000_000)).toEqual({ effects: [], failed: [], forgotten: [] });
    expect(r.reply(K, MAC, P1, 1_000_001).kind).toBe('ignored');
  });

  it('list: by network, then by address as numbers; how long since it answered', () => {
    const r = new NeighborResolver({ ...T, maxEntries: 10 });
    for (const [networkId, ip] of [
      ['web', '10.1.0.10'],
      ['db', '10.2.0.1'],
      ['web', '10.1.0.9'],
      ['web', '9.1.0.200'],
      ['web', '10.1.0.100'],
    ])
      r.miss('dp1', { networkId: networkId!, ip: ip! }, 0);
    r.reply({ networkId: 'web', ip: '10.1.0.9' }, MAC, P1, 400);
    const list = r.list(1000);
    expect(list.map((n) => `${n.networkId}/${n.ip}`)).toEqual([
      'db/10.2.0.1',
      'web/9.1.0.200',
      'web/10.1.0.9',
      'web/10.1.0.10',
      'web/10.1.0.100',
    ]);
    expect(list[2]).toEqual({
      networkId: 'web',
      ip: '10.1.0.9',
      state: 'reachable',
      mac: MAC,
      chassisId: 'hv1',
      bindingId: 'vb1',
      vlan: 30,
      confirmedAgoMs: 600,
      installedOn: ['dp1'],
    });
    expect(list[0]).toEqual({ networkId: 'db', ip: '10.2.0.1', state: 'incomplete', installedOn: [] });
  });
});

describe('NeighborResolver: adopting flows the switches hold', () => {
  it('takes a neighbour as learned, held by its holders and its place, due for re-validation at once', () => {
    const r = new NeighborResolver(T);
    r.adopt(K, MAC, P1, ['dp9'], 10_000);
    expect(r.get(K)).toMatchObject({
      state: 'reachable',
      mac: MAC,
      chassisId: 'hv1',
      installedOn: ['dp1', 'dp9'],
    });
    // Nothing is sent by adopting; the next tick asks the neighbour, by unicast out of its port.
    expect(show(r.tick(10_000).effects)).toEqual([`unicast web/10.1.0.50 -> ${MAC}@dp1:7/30`]);
    // Its answer re-installs the flows on every holder (restarting their hard timeout).
    const v = r.reply(K, MAC, P1, 10_050);
    expect(v.kind).toBe('refreshed');
    expect(v.kind !== 'ignored' && show(v.effects).sort()).toEqual([
      `install dp1 10.1.0.50=${MAC}@dp1`,
      `install dp9 10.1.0.50=${MAC}@dp1`,
    ]);
  });

  it('merges holders into what it already knows, and never overrides a different MAC or a resolution', () => {
    const r = learnedAt500(); // dp1 (place) and dp9
    r.adopt(K, MAC, P1, ['dp7'], 600);
    expect(r.get(K)?.installedOn).toEqual(['dp1', 'dp7', 'dp9']);
    r.adopt(K, '02:00:00:00:ee:ee', P2, ['dp2'], 700);
    expect(r.get(K)).toMatchObject({ mac: MAC, installedOn: ['dp1', 'dp7', 'dp9'] });
    const k2 = { networkId: 'web', ip: '10.1.0.51' };
    r.miss('dp9', k2, 800);
    r.adopt(k2, MAC, P1, ['dp2'], 900);
    expect(r.get(k2)?.state).toBe('incomplete');
  });

  it('adopts nothing beyond the table size', () => {
    const r = new NeighborResolver({ ...T, maxEntries: 1 });
    r.adopt(K, MAC, P1, [], 0);
    r.adopt({ networkId: 'web', ip: '10.1.0.51' }, MAC, P1, [], 0);
    expect(r.size).toBe(1);
  });
});

describe('NeighborResolver: announcements (a gratuitous ARP)', () => {
  it('a new MAC or place of a known neighbour is an answer; the same, or an unknown address, is not', () => {
    const r = learnedAt500();
    expect(r.announce(K, MAC, P1, 600)).toEqual({
      kind: 'ignored',
      reason: '10.1.0.50 announces what weft knows',
    });
    expect(r.announce({ networkId: 'web', ip: '10.1.0.99' }, MAC, P1, 600).kind).toBe('ignored');
    const moved = r.announce(K, MAC, P2, 700);
    expect(moved.kind).toBe('changed');
    expect(r.get(K)?.chassisId).toBe('hv2');
    const remac = r.announce(K, '02:00:00:00:bb:03', P2, 800);
    expect(remac.kind).toBe('changed');
    expect(
      remac.kind !== 'ignored' && remac.effects.filter((e) => e.kind === 'remove').length,
    ).toBeGreaterThan(0);
    expect(r.get(K)?.mac).toBe('02:00:00:00:bb:03');
  });

  it('an address being resolved is learned from its own announcement, for every datapath that waited', () => {
    const r = new NeighborResolver(T);
    r.miss('dp9', K, 0);
    const v = r.announce(K, MAC, P1, 100);
    expect(v.kind).toBe('learned');
    expect(r.get(K)?.installedOn).toEqual(['dp1', 'dp9']);
  });
});
