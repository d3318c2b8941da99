import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChassisFacts, ChassisPorts } from '../../../apps/build-view.js';
import type { FactsSource } from '../../../controller/engine/engine.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { GROUP_KIND, groupId } from '../../../controller/pipeline/groups.js';
import { raContext, startRouterAdvertisements } from '../../../controller/router/ra-responder.js';
import type { PacketOut } from '../../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../../southbound/openflow/session/registry.js';
import { openService } from '../intent/helpers.js';
import { FakeRegistry } from './ra-fixture.js';
import { decodeRa, pfx, prefixInfo } from './ra-frames.js';

/**
 * raContext over a real intent service: tenant t; chassis hv1-hv3 (switches dp1-dp3); web
 * (fd00:1::/64 too, VNI 4097) and db (IPv4 only, VNI 4098) on router r1; w1 of web bound on hv2,
 * w2 of web unbound, and db's VLAN 7 binding on hv3's eth1.
 */
let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
const facts: ChassisFacts = {
  bindings: new Map([['iface-w1', { chassisId: 'hv2', ofport: 3 }]]),
  ports: new Map<string, ChassisPorts>([
    ['hv1', { tunnelPort: 100, byName: new Map() }],
    ['hv3', { tunnelPort: 100, byName: new Map([['eth1', 5]]) }],
  ]),
};
const DPIDS: Record<string, string> = { dp1: 'hv1', dp2: 'hv2', dp3: 'hv3' };
const factsSource: FactsSource = {
  current: () => facts,
  chassisOfDatapath: (dpid) => DPIDS[dpid],
  onChange: () => {},
};

beforeEach(async () => {
  h = await openService();
  svc = h.svc;
  await svc.put('tenant', 't', { name: 't' });
  for (const id of ['hv1', 'hv2', 'hv3'])
    await svc.put('chassis', id, { name: id, tunnelIp: `192.168.9.${id.slice(2)}` });
  await svc.put('network', 'web', {
    tenantId: 't',
    name: 'web',
    vni: 4097,
    subnets: ['10.1.0.0/24', 'fd00:1::/64'],
  });
  await svc.put('network', 'db', { tenantId: 't', name: 'db', vni: 4098, subnets: ['10.2.0.0/24'] });
  await svc.put('router', 'r1', { tenantId: 't', interfaces: [{ networkId: 'web' }, { networkId: 'db' }] });
  await svc.put('endpoint', 'w1', { networkId: 'web', ips: ['10.1.0.5'], ifaceId: 'iface-w1' });
  await svc.put('endpoint', 'w2', { networkId: 'web', ips: ['10.1.0.6'], ifaceId: 'iface-w2' });
  await svc.put('vlanBinding', 'vb', { chassisId: 'hv3', port: 'eth1', vlan: 7, networkId: 'db' });
});
afterEach(() => h.close());

function registry(...dpids: string[]) {
  const r = new FakeRegistry();
  for (const d of dpids) r.add(d);
  return r;
}

describe('raContext', () => {
  it('finds a connected switch hosting the network: a bound endpoint, or a VLAN binding with its port', () => {
    const all = registry('dp1', 'dp2', 'dp3');
    const ctx = raContext(svc, factsSource, all as unknown as SwitchRegistry, () => true);
    expect(ctx.floodDatapath('web')).toBe('dp2');
    expect(ctx.floodDatapath('db')).toBe('dp3');
    expect(ctx.floodDatapath('nope')).toBeUndefined();
    // hv2 not connected: hv1 hosts nothing of web (w2 is unbound).
    const some = registry('dp1', 'dp3');
    expect(
      raContext(svc, factsSource, some as unknown as SwitchRegistry, () => true).floodDatapath('web'),
    ).toBe(undefined);
  });

  it('reads routers, their IPv6 interfaces, tunnel and VLAN ports from the intent and facts', () => {
    const ctx = raContext(svc, factsSource, registry() as unknown as SwitchRegistry, () => false);
    expect(ctx.routers().map((r) => r.id)).toEqual(['r1']);
    expect(ctx.routerOnNetwork('web')?.iface).toMatchObject({ ipv6: 'fd00:1::1', mac: '0a:57:72:00:10:01' });
    expect(ctx.routerOnNetwork('db')?.iface.ipv6).toBeUndefined();
    expect(ctx.networkByVni(4097)?.id).toBe('web');
    expect(ctx.isTunnelPort('hv1', 100)).toBe(true);
    expect(ctx.isTunnelPort('hv1', 3)).toBe(false);
    expect(ctx.vlanOf('hv3', 'db', 5)).toBe(7);
    expect(ctx.vlanOf('hv3', 'web', 5)).toBeUndefined();
    expect(ctx.isLeader()).toBe(false);
  });

  it('advertises on the intent service changes: a router losing IPv6 on a network withdraws it there', async () => {
    const sw = registry('dp1', 'dp2', 'dp3');
    const ra = startRouterAdvertisements(
      sw as unknown as SwitchRegistry,
      raContext(svc, factsSource, sw as unknown as SwitchRegistry, () => true),
      pino({ level: 'silent' }),
      undefined,
      {
        timings: { intervalMs: 600_000, soonMs: 10 },
        changes: (cb) => svc.onChange((ev) => cb(ev.changes)),
      },
    );
    try {
      await until(() => sw.get('dp2')!.sent.length === 1);
      await svc.update('router', 'r1', {
        interfaces: [{ networkId: 'web', ipv6: false }, { networkId: 'db' }],
      });
      await until(() => sw.get('dp2')!.sent.length === 2);
      const out = sw.get('dp2')!.sent[1] as PacketOut;
      expect(out.actions).toEqual([{ type: 'group', groupId: groupId(GROUP_KIND.FLOOD_ALL, 4097) }]);
      expect(decodeRa(out.data)).toMatchObject({ ethSrc: '0a:57:72:00:10:01', routerLifetime: 0 });
      // web is still there: its prefix goes with its router.
      expect(prefixInfo(decodeRa(out.data))).toEqual([[pfx('fd00:1::/64'), 0, 0, true]]);
      expect(sw.get('dp3')!.sent).toEqual([]);
    } finally {
      ra.stop();
    }
  });
  it('names a subnet the network lost with lifetime 0, so its hosts stop taking it for on-link', async () => {
    const sw = registry('dp1', 'dp2', 'dp3');
    const ra = startRouterAdvertisements(
      sw as unknown as SwitchRegistry,
      raContext(svc, factsSource, sw as unknown as SwitchRegistry, () => true),
      pino({ level: 'silent' }),
      undefined,
      {
        timings: { intervalMs: 600_000, soonMs: 10 },
        changes: (cb) => svc.onChange((ev) => cb(ev.changes)),
      },
    );
    const last = () => decodeRa((sw.get('dp2')!.sent.at(-1) as PacketOut).data);
    try {
      await until(() => sw.get('dp2')!.sent.length === 1);
      await svc.update('network', 'web', { subnets: ['10.1.0.0/24', 'fd00:1::/64', 'fd00:2::/64'] });
      await until(() => sw.get('dp2')!.sent.length === 2);
      expect(prefixInfo(last())).toEqual([
        [pfx('fd00:1::/64'), 1800, 1800, true],
        [pfx('fd00:2::/64'), 1800, 1800, true],
      ]);
      // fd00:2::/64 moves to db: web's hosts must route to it from now on.
      await svc.update('network', 'web', { subnets: ['10.1.0.0/24', 'fd00:1::/64'] });
      await svc.update('network', 'db', { subnets: ['10.2.0.0/24', 'fd00:2::/64'] });
      await until(() => sw.get('dp2')!.sent.length === 3);
      expect(last().routerLifetime).toBe(1800);
      expect(prefixInfo(last())).toEqual([
        [pfx('fd00:1::/64'), 1800, 1800, true],
        [pfx('fd00:2::/64'), 0, 0, true],
      ]);
    } finally {
      ra.stop();
    }
  });
});

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
