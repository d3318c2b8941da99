import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Router } from '../../../controller/intent/model.js';
import { routerMac } from '../../../controller/intent/model-router.js';
import type { ObjectChange } from '../../../controller/intent/service.js';
import { GROUP_KIND, groupId } from '../../../controller/pipeline/groups.js';
import {
  DEFAULT_RA_TIMINGS,
  RaAdvertiser,
  type RaSend,
  raLifetimeSeconds,
} from '../../../controller/router/ra-periodic.js';
import { startRouterAdvertisements } from '../../../controller/router/ra-responder.js';
import { decodeMessage } from '../../../southbound/openflow/codec/decode.js';
import { encodeMessage } from '../../../southbound/openflow/codec/encode.js';
import type { PacketOut } from '../../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../../southbound/openflow/session/registry.js';
import { DPID, DPID2, logLines, r1, raWorld, WEB_GW } from './ra-fixture.js';
import { decodeRa, pfx, prefixInfo, v6 } from './ra-frames.js';

const T = { intervalMs: 10_000, soonMs: 500 };

function world(random = () => 0.5) {
  const w = raWorld();
  const reports: Array<{ s: RaSend; err?: unknown }> = [];
  const advertiser = new RaAdvertiser(
    w.registry as unknown as SwitchRegistry,
    w.ctx,
    (s, err) => reports.push({ s, ...(err === undefined ? {} : { err }) }),
    T,
    1800,
    random,
  );
  /** What each switch was sent (dp1's first), with the advertisement decoded. */
  const sent = () =>
    [DPID, DPID2].flatMap((dpid) =>
      w.sw(dpid).sent.map((m) => {
        const out = m as PacketOut;
        return { dpid, out, ra: decodeRa(out.data) };
      }),
    );
  const clear = () => {
    for (const dpid of [DPID, DPID2]) w.sw(dpid).sent.length = 0;
    reports.length = 0;
  };
  return { ...w, advertiser, reports, sent, clear };
}

const flood = (vni: number) => [{ type: 'group', groupId: groupId(GROUP_KIND.FLOOD_ALL, vni) }];
const withoutV6 = (r: Router, networkId: string): Router => ({
  ...r,
  interfaces: r.interfaces.map((i) => (i.networkId === networkId ? { ...i, ipv6: undefined } : i)),
});

describe('RaAdvertiser: one advertisement per IPv6-routed network', () => {
  it('sends one PACKET_OUT per network into its flood group, on a switch hosting it, to all nodes', async () => {
    const { advertiser, sent, reports } = world();
    const sends = advertiser.advertiseAll();
    expect(sends.map((s) => [s.networkId, s.routerId, s.dpid])).toEqual([
      ['web', 'r1', DPID],
      ['six', 'r1', DPID2],
      // solo is hosted nowhere (no bound endpoint on a connected switch): nothing to send.
      ['solo', 'r2', undefined],
    ]);
    const out = sent();
    expect(out.map((o) => [o.dpid, o.out.actions])).toEqual([
      [DPID, flood(100)],
      [DPID2, flood(102)],
    ]);
    expect(out[0]!.out).toMatchObject({ inPort: 0xfffffffd, bufferId: 0xffffffff });
    expect(out[0]!.ra).toMatchObject({
      ethSrc: WEB_GW,
      ethDst: '33:33:00:00:00:01',
      ipSrc: v6('fe80::857:72ff:fe00:64'),
      ipDst: v6('ff02::1'),
      routerLifetime: 1800,
      checksumHolds: true,
    });
    expect(out[0]!.ra.options).toEqual([
      { type: 1, mac: WEB_GW },
      { type: 5, reserved: 0, mtu: 1450 },
      expect.objectContaining({ type: 3, prefix: v6('fd00:1::'), onLink: true, autonomous: false }),
    ]);
    expect(out[1]!.ra.options.filter((o) => o.type === 3)).toHaveLength(2);
    await Promise.resolve();
    expect(reports.map((r) => [r.s.networkId, r.s.reason, r.s.dpid, r.err])).toEqual([
      ['solo', 'periodic', undefined, undefined],
      ['web', 'periodic', DPID, undefined],
      ['six', 'periodic', DPID2, undefined],
    ]);
  });

  it('sends nothing on a standby, and nothing for IPv4-only networks', () => {
    const w = world();
    w.state.leader = false;
    expect(w.advertiser.advertiseAll()).toEqual([]);
    w.state.leader = true;
    w.state.routers = [withoutV6(withoutV6(r1, 'web'), 'six')];
    expect(w.advertiser.advertiseAll()).toEqual([]);
    expect(w.sent()).toEqual([]);
  });

  it('reports a switch that refuses or throws, never throwing itself', async () => {
    const w = world();
    w.sw(DPID).fail = 'reject';
    w.sw(DPID2).fail = 'throw';
    expect(() => w.advertiser.advertiseAll()).not.toThrow();
    await new Promise((r) => setImmediate(r));
    const failed = w.reports.filter((r) => r.err !== undefined);
    expect(failed.map((r) => [r.s.networkId, (r.err as Error).message])).toEqual([
      ['web', 'connection reset'],
      ['six', 'session closed'],
    ]);
  });

  it('goes through the OpenFlow codec with its group action unchanged', () => {
    const { advertiser } = world();
    const out = advertiser.advertiseAll()[0]!.out!;
    expect(decodeMessage(encodeMessage({ ...out, xid: 7 }))).toEqual({ ...out, xid: 7 });
  });
});

describe('RaAdvertiser: when', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('advertises soon after start, then every interval with +-20% jitter, and not after stop', () => {
    let random = 0;
    const w = world(() => random);
    w.advertiser.start();
    vi.advanceTimersByTime(499);
    expect(w.sent()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(w.sent()).toHaveLength(2);
    w.clear();
    // random 0: the first interval is 80% of 10 s; then random 1: 120%.
    random = 1;
    vi.advanceTimersByTime(7999 - 500);
    expect(w.sent()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(w.sent()).toHaveLength(2);
    w.clear();
    vi.advanceTimersByTime(11_999);
    expect(w.sent()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(w.sent()).toHaveLength(2);
    w.clear();
    w.advertiser.stop();
    vi.advanceTimersByTime(100_000);
    expect(w.sent()).toEqual([]);
  });

  it('on a standby sends nothing until leadership starts, then every network soon', () => {
    const w = world();
    w.state.leader = false;
    w.advertiser.start();
    vi.advanceTimersByTime(30_000);
    expect(w.sent()).toEqual([]);
    w.state.leader = true;
    w.advertiser.leaderStarted();
    vi.advanceTimersByTime(500);
    expect(w.sent().map((s) => s.out.actions)).toEqual([flood(100), flood(102)]);
    w.advertiser.stop();
  });

  it("advertises a router's IPv6 networks once soon after changes, however many come within the delay", () => {
    const w = world();
    const before = withoutV6(r1, 'web');
    w.state.routers = [before];
    w.advertiser.routerChanged(undefined, before);
    w.state.routers = [r1];
    w.advertiser.routerChanged(before, r1);
    w.advertiser.networkChanged('web');
    w.advertiser.networkChanged('db'); // IPv4 only: nothing
    vi.advanceTimersByTime(499);
    expect(w.sent()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(w.sent().map((s) => [s.dpid, s.ra.routerLifetime, s.out.actions])).toEqual([
      [DPID, 1800, flood(100)],
      [DPID2, 1800, flood(102)],
    ]);
    w.advertiser.stop();
  });

  it("withdraws a router that lost a network's IPv6 address (lifetime 0, its prefixes too), unless it came back", () => {
    const w = world();
    const after = withoutV6(r1, 'web');
    w.state.routers = [after];
    w.advertiser.routerChanged(r1, after);
    vi.advanceTimersByTime(500);
    const [gone] = w.sent();
    expect(gone!.out.actions).toEqual(flood(100));
    expect(gone!.ra).toMatchObject({
      ethSrc: WEB_GW,
      ipDst: v6('ff02::1'),
      routerLifetime: 0,
      checksumHolds: true,
    });
    expect(gone!.ra.options.map((o) => o.type)).toEqual([1, 5, 3]);
    expect(prefixInfo(gone!.ra)).toEqual([[pfx('fd00:1::/64'), 0, 0, true]]);
    w.clear();
    // Deleted, then put back within the delay: advertised as usual.
    w.advertiser.routerChanged(r1, undefined);
    w.advertiser.routerChanged(undefined, r1);
    w.state.routers = [r1];
    vi.advanceTimersByTime(500);
    expect(w.sent().map((s) => s.ra.routerLifetime)).toEqual([1800, 1800]);
    w.clear();
    // The network went too: nobody is left to tell.
    w.advertiser.routerChanged(
      { ...r1, interfaces: [...r1.interfaces, { ...r1.interfaces[0]!, networkId: 'gone' }] },
      r1,
    );
    vi.advanceTimersByTime(500);
    expect(w.sent().map((s) => s.ra.routerLifetime)).toEqual([1800, 1800]);
    w.advertiser.stop();
  });

  it('names the IPv6 subnets a network lost with lifetime 0 in its next advertisement, once', async () => {
    const w = world();
    const web = w.ctx.network('web')!;
    // web had fd00:5::/64 (now another network's): its hosts must stop taking it for on-link.
    w.advertiser.networkChanged('web', { subnets: [...web.subnets, 'fd00:5::/64', '10.5.0.0/24'] }, web);
    await vi.advanceTimersByTimeAsync(500);
    const [ra] = w.sent();
    expect(ra!.out.actions).toEqual(flood(100));
    expect(ra!.ra.routerLifetime).toBe(1800);
    expect(prefixInfo(ra!.ra)).toEqual([
      [pfx('fd00:1::/64'), 1800, 1800, true],
      [pfx('fd00:5::/64'), 0, 0, true],
    ]);
    expect(w.reports.map((r) => [r.s.networkId, r.s.reason, r.s.removed])).toEqual([
      ['web', 'changed', ['fd00:5::/64']],
    ]);
    w.clear();
    // Said once: the periodic advertisement names only what web has.
    w.advertiser.advertiseAll();
    expect(w.sent().map((s) => prefixInfo(s.ra))).toEqual([
      [[pfx('fd00:1::/64'), 1800, 1800, true]],
      [
        [pfx('fd00:6::/64'), 1800, 1800, true],
        [pfx('2001:db8:6::/48'), 1800, 1800, true],
      ],
    ]);
    w.clear();
    // Removed, then given back within the delay (the network as it is now has it): not withdrawn.
    w.advertiser.networkChanged('web', web, { subnets: ['10.1.0.0/24'] });
    vi.advanceTimersByTime(500);
    expect(w.sent().map((s) => prefixInfo(s.ra))).toEqual([[[pfx('fd00:1::/64'), 1800, 1800, true]]]);
    w.advertiser.stop();
  });

  it.each([
    ['network', 'router'],
    ['router', 'network'],
  ])(
    "names a subnet lost in the same change as the router's IPv6 address in its withdrawal (%s first)",
    (first) => {
      const w = world();
      const web = w.ctx.network('web')!;
      const after = withoutV6(r1, 'web');
      w.state.routers = [after];
      const network = () =>
        w.advertiser.networkChanged('web', { subnets: [...web.subnets, 'fd00:5::/64'] }, web);
      const router = () => w.advertiser.routerChanged(r1, after);
      for (const f of first === 'network' ? [network, router] : [router, network]) f();
      vi.advanceTimersByTime(500);
      const [gone] = w.sent();
      expect(gone!.ra.routerLifetime).toBe(0);
      expect(prefixInfo(gone!.ra)).toEqual([
        [pfx('fd00:1::/64'), 0, 0, true],
        [pfx('fd00:5::/64'), 0, 0, true],
      ]);
      w.advertiser.stop();
    },
  );

  it('sends pending withdrawals and lost subnets when every network is due too (leadership)', async () => {
    const w = world();
    const six = w.ctx.network('six')!;
    const after = withoutV6(r1, 'web');
    w.state.routers = [after, w.state.routers[1]!];
    w.advertiser.routerChanged(r1, after);
    w.advertiser.networkChanged('six', { subnets: [...six.subnets, 'fd00:7::/64'] }, six);
    w.advertiser.leaderStarted();
    await vi.advanceTimersByTimeAsync(500);
    expect(w.sent().map((s) => [s.dpid, s.ra.routerLifetime, s.out.actions, prefixInfo(s.ra)])).toEqual([
      [DPID, 0, flood(100), [[pfx('fd00:1::/64'), 0, 0, true]]],
      [
        DPID2,
        1800,
        flood(102),
        [
          [pfx('fd00:6::/64'), 1800, 1800, true],
          [pfx('2001:db8:6::/48'), 1800, 1800, true],
          [pfx('fd00:7::/64'), 0, 0, true],
        ],
      ],
    ]);
    expect(w.reports.map((r) => [r.s.networkId, r.s.reason])).toEqual([
      ['solo', 'changed'],
      ['six', 'changed'],
      ['web', 'withdrawn'],
    ]);
    w.advertiser.stop();
  });

  it('keeps a router lifetime of 1800 s, or 3 intervals when longer, at most 9000 s', () => {
    expect(raLifetimeSeconds(DEFAULT_RA_TIMINGS.intervalMs)).toBe(1800);
    expect(raLifetimeSeconds(1000)).toBe(1800);
    expect(raLifetimeSeconds(1_000_000)).toBe(3000);
    expect(raLifetimeSeconds(1_800_000)).toBe(5400);
    expect(raLifetimeSeconds(4_000_000)).toBe(9000);
  });
});

describe('startRouterAdvertisements: unsolicited', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('advertises on intent changes and leadership, counts and logs each, and stops', async () => {
    const w = raWorld();
    const { lines, stream } = logLines();
    const metrics = new Registry();
    let changed: ((changes: readonly ObjectChange[]) => void) | undefined;
    let leader: (() => void) | undefined;
    let unsubscribed = false;
    const opts = {
      timings: { intervalMs: 60_000, soonMs: 500 },
      changes: (cb: (changes: readonly ObjectChange[]) => void) => {
        changed = cb;
        return () => {
          unsubscribed = true;
        };
      },
      onLeader: (cb: () => void) => {
        leader = cb;
      },
    };
    const ra = startRouterAdvertisements(
      w.registry as unknown as SwitchRegistry,
      w.ctx,
      pino({ level: 'debug' }, stream),
      metrics,
      opts,
    );
    await vi.advanceTimersByTimeAsync(500);
    expect(w.sw(DPID).sent).toHaveLength(1);
    expect(w.sw(DPID2).sent).toHaveLength(1);
    // A router change and a network change (six's MTU) in one event: one more for six.
    changed!([
      { kind: 'router', id: 'r1', before: r1, after: r1 } as never,
      { kind: 'network', id: 'six', after: {} } as never,
      { kind: 'endpoint', id: 'e1', after: {} } as never,
    ]);
    await vi.advanceTimersByTimeAsync(500);
    expect(w.sw(DPID2).sent).toHaveLength(2);
    // A new endpoint of six (its VM may have solicited before its flows were in): six again.
    changed!([{ kind: 'endpoint', id: 'e9', after: { networkId: 'six' } } as never]);
    await vi.advanceTimersByTimeAsync(500);
    expect(w.sw(DPID2).sent).toHaveLength(3);
    leader!();
    await vi.advanceTimersByTimeAsync(60_000 * 1.2);
    const text = await metrics.metrics();
    expect(text).toContain('weft_router_advertisements_total{reason="changed"} 7');
    expect(text).toContain('weft_router_advertisements_total{reason="periodic"} 2');
    expect(lines.find((l) => l.msg === 'router advertisement sent' && l.reason === 'changed')).toMatchObject({
      level: 30,
      dpid: DPID,
      chassis: 'hv1',
      network: 'web',
      router: 'r1',
    });
    expect(lines.find((l) => l.msg === 'router advertisement sent' && l.reason === 'periodic')?.level).toBe(
      20,
    );
    expect(
      lines.find((l) => l.msg.startsWith('router advertisement not sent: no connected switch')),
    ).toMatchObject({
      network: 'solo',
      router: 'r2',
    });
    w.sw(DPID).fail = 'reject';
    ra.advertiser.advertiseAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(await metrics.metrics()).toContain('weft_router_advertisements_failed_total 1');
    expect(lines.find((l) => l.msg === 'router advertisement not sent')).toMatchObject({
      level: 40,
      network: 'web',
    });
    ra.stop();
    expect(unsubscribed).toBe(true);
    const before = w.sw(DPID2).sent.length;
    await vi.advanceTimersByTimeAsync(600_000);
    expect(w.sw(DPID2).sent).toHaveLength(before);
    expect(routerMac(102)).toBe(decodeRa((w.sw(DPID2).sent[0] as PacketOut).data).ethSrc);
  });
});
