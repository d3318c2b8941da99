import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NeighborResolver } from '../../../controller/router/neighbor-resolver.js';
import {
  DEFAULT_NEIGHBOR_TIMINGS,
  learnedHardTimeoutSeconds,
} from '../../../controller/router/neighbor-timings.js';
import { K, learnedAt500, MAC, P1, P2, show, T, ticks } from './neighbor-resolver-fixture.js';

/** NeighborResolver: what keeps a learned neighbour (re-validation, limits, adoption, announcements). */
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
