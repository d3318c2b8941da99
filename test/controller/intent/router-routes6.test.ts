import { describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import type { RouterRoute } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest } from './router-fixture.js';

/**
 * IPv6 static routes (controller/intent/router-routes.ts): via an endpoint's IPv6 address in a
 * network where the router has an IPv6 address. Red's dual-stack networks next to the fixture's
 * IPv4-only ones: ds 10.1.0.0/24 + fd00:1::/64, ds2 10.2.0.0/24 + fd00:2::/64, edge 10.3.0.0/24 +
 * fd00:3::/64 with the appliance fw (10.3.0.9, fd00:3::9). r1 is on ds (fd00:1::1), edge
 * (fd00:3::1) and ds2 without an IPv6 address (ipv6: false); tx on ds2 holds fd00:2::9.
 */

let svc: IntentService;
redBlueEachTest(
  (s) => {
    svc = s;
  },
  async (s) => {
    const net = (id: string, subnets: string[]) =>
      s.put('network', id, { tenantId: 'red', name: id, subnets });
    await net('ds', ['10.1.0.0/24', 'fd00:1::/64']);
    await net('ds2', ['10.2.0.0/24', 'fd00:2::/64']);
    await net('edge', ['10.3.0.0/24', 'fd00:3::/64']);
    await s.put('endpoint', 'fw', { networkId: 'edge', ips: ['10.3.0.9', 'fd00:3::9'], portSecurity: false });
    await s.put('endpoint', 'tx', { networkId: 'ds2', ips: ['fd00:2::9'] });
  },
);

type Itf = { networkId: string; ipv6?: string | false };
const interfaces: Itf[] = [{ networkId: 'ds' }, { networkId: 'edge' }, { networkId: 'ds2', ipv6: false }];
const put = (routes: RouterRoute[], itfs: Itf[] = interfaces) =>
  svc.put('router', 'r1', { tenantId: 'red', interfaces: itfs as Array<{ networkId: string }>, routes });
const toFw = (destination: string): RouterRoute => ({ destination, nexthop: 'fd00:3::9' });

describe('IPv6 static routes: accepted', () => {
  it('stores ::/0 and a /48 via an endpoint in canonical text, beside an IPv4 route; written again, nothing changes', async () => {
    const { object } = await put([
      { destination: '::/00', nexthop: 'FD00:3:0::9' },
      { destination: 'FD00:FFFF:0::/048', nexthop: 'fd00:3::9' },
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
    ]);
    expect(object.routes).toEqual([
      { destination: '::/0', nexthop: 'fd00:3::9' },
      { destination: 'fd00:ffff::/48', nexthop: 'fd00:3::9' },
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
    ]);
    expect(svc.get('router', 'r1').routes).toEqual(object.routes);
    const same = await put(object.routes);
    expect(same.revision).toBe(object.revision);
    // A PATCH of something else keeps them (the routes are checked again, the endpoint still holds it).
    expect((await svc.update('router', 'r1', { name: 'renamed' })).object.routes).toEqual(object.routes);
  });

  it('takes a prefix wider or narrower than a connected IPv6 subnet (the longest prefix wins), and a next hop on the sender network', async () => {
    await svc.put('endpoint', 'vpn', { networkId: 'ds', ips: ['fd00:1::7'] });
    const { object } = await put([
      toFw('fd00::/16'),
      toFw('fd00:1::80/121'),
      { destination: 'fd00:3::5/128', nexthop: 'fd00:1::7' },
    ]);
    expect(object.routes.map((r) => r.nexthop)).toEqual(['fd00:3::9', 'fd00:3::9', 'fd00:1::7']);
  });

  it('takes an IPv6 next hop no endpoint holds (an on-link router, found by neighbour solicitation), in a batch before or after the endpoint', async () => {
    const ep: BatchOp = {
      op: 'create',
      kind: 'endpoint',
      id: 'fw2',
      body: { networkId: 'edge', ips: ['fd00:3::10'], portSecurity: false },
    };
    const router: BatchOp = {
      op: 'replace',
      kind: 'router',
      id: 'r1',
      body: { tenantId: 'red', interfaces, routes: [{ destination: '::/0', nexthop: 'fd00:3::10' }] },
    };
    expect((await svc.batch([router, ep])).committed).toBe(true);
    expect(svc.get('router', 'r1').routes).toEqual([{ destination: '::/0', nexthop: 'fd00:3::10' }]);
    // Held by no endpoint at all: a physical router behind a VLAN binding.
    const { object } = await put([{ destination: 'fd00:77::/48', nexthop: 'fd00:3::77' }]);
    expect(object.routes).toEqual([{ destination: 'fd00:77::/48', nexthop: 'fd00:3::77' }]);
  });
});

describe('IPv6 static routes: refused, naming the field (400 invalid)', () => {
  it('refuses a destination with host bits set (naming the network address) or too long a prefix', async () => {
    const cases: Array<[string, RegExp]> = [
      [
        'fd00:ffff::1/48',
        /^routes\[0\]\.destination: 'fd00:ffff::1\/48' has host bits set; write the network address fd00:ffff::\/48$/,
      ],
      ['::1/0', /^routes\[0\]\.destination: '::1\/0' has host bits set; write the network address ::\/0$/],
      ['fd00::/129', /^routes\[0\]\.destination: 'fd00::\/129' has a prefix length outside 0-128$/],
    ];
    for (const [destination, message] of cases) {
      const e = await rejects(put([toFw(destination)]), 'invalid', message);
      expect(e.field).toBe('routes[0].destination');
    }
  });

  it('refuses two routes for one destination, and the IPv6 subnet of a network the router routes IPv6 into', async () => {
    const twice = await rejects(
      put([toFw('::/0'), toFw('::/0')]),
      'invalid',
      /^routes\[1\]\.destination: ::\/0 is already routes\[0\]; one route per destination$/,
    );
    expect(twice.field).toBe('routes[1].destination');
    const connected = await rejects(
      put([toFw('fd00:1::/64')]),
      'invalid',
      /^routes\[0\]\.destination: fd00:1::\/64 is the subnet of network 'ds': connected subnets are routed already$/,
    );
    expect(connected.field).toBe('routes[0].destination');
    // ds2's subnet is no IPv6 destination of r1 (no IPv6 address there): a static route may take it,
    // and then r1 may not turn IPv6 on at ds2 while the route is there.
    await put([toFw('fd00:2::/64')]);
    const on = await rejects(
      put([toFw('fd00:2::/64')], [...interfaces.slice(0, 2), { networkId: 'ds2', ipv6: 'fd00:2::1' }]),
      'invalid',
      /^routes\[0\]\.destination: fd00:2::\/64 is the subnet of network 'ds2': connected subnets are routed already$/,
    );
    expect(on.field).toBe('routes[0].destination');
  });

  it('refuses a next hop that is not IPv6, of the other family, outside, on a network without a router IPv6 address, the router itself, or held by no endpoint', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['::/0', 'gateway', /^routes\[0\]\.nexthop: 'gateway' is not an IPv6 address$/],
      [
        '::/0',
        '10.3.0.9',
        /^routes\[0\]\.nexthop: 10\.3\.0\.9 is IPv4 but the destination ::\/0 is IPv6; a next hop is of its destination's family$/,
      ],
      [
        '0.0.0.0/0',
        'fd00:3::9',
        /^routes\[0\]\.nexthop: fd00:3::9 is IPv6 but the destination 0\.0\.0\.0\/0 is IPv4; a next hop is of its destination's family$/,
      ],
      [
        '::/0',
        'fd00:9::9',
        /^routes\[0\]\.nexthop: fd00:9::9 is outside the IPv6 subnets of the router's networks with an IPv6 address \(fd00:1::\/64, fd00:3::\/64\); a next hop is on one of them$/,
      ],
      [
        '::/0',
        'fd00:2::9',
        /^routes\[0\]\.nexthop: fd00:2::9 is in network 'ds2', where the router has no IPv6 address \(interfaces\[2\]\.ipv6\); IPv6 routes go only via networks where it has one$/,
      ],
      [
        '::/0',
        'fd00:3::1',
        /^routes\[0\]\.nexthop: fd00:3::1 is this router's own address on network 'edge'; a next hop is another host$/,
      ],
    ];
    for (const [destination, nexthop, message] of cases) {
      const e = await rejects(put([{ destination, nexthop }]), 'invalid', message);
      expect(e.field, nexthop).toBe('routes[0].nexthop');
    }
    expect(svc.list('router').items).toEqual([]);
  });
});

describe('the IPv6 next hop stays: endpoint, router and network writes that would strand a route', () => {
  const inUse = "endpoint 'fw' is the next hop of router 'r1' \\(route ::\\/0\\); change the route first$";

  it('refuses an endpoint PATCH or PUT dropping the address (409, ips), and deleting the endpoint (409), until the route changes', async () => {
    await put([toFw('::/0')]);
    const dropped = await rejects(
      svc.update('endpoint', 'fw', { ips: ['10.3.0.9'] }),
      'conflict',
      new RegExp(`^ips: ${inUse}`),
    );
    expect(dropped.field).toBe('ips');
    await rejects(
      svc.put('endpoint', 'fw', { networkId: 'edge', ips: ['fd00:3::8'] }),
      'conflict',
      new RegExp(`^ips: ${inUse}`),
    );
    const gone = await rejects(svc.delete('endpoint', 'fw'), 'conflict', new RegExp(`^${inUse}`));
    expect(gone.details).toEqual({ router: 'r1', route: '::/0' });
    await rejects(svc.delete('endpoint', 'fw', { cascade: true }), 'conflict', new RegExp(`^${inUse}`));
    await rejects(
      svc.batch([{ op: 'delete', kind: 'endpoint', id: 'fw' }]),
      'conflict',
      /is the next hop of/,
    );
    expect(svc.get('endpoint', 'fw').ips).toEqual(['10.3.0.9', 'fd00:3::9']);
    // Keeping the address is fine; once the route goes, the endpoint may drop it, then go.
    await svc.update('endpoint', 'fw', { ips: ['fd00:3::9'] });
    await svc.update('router', 'r1', { routes: [] });
    await svc.update('endpoint', 'fw', { ips: ['10.3.0.9'] });
    await svc.delete('endpoint', 'fw');
  });

  it("refuses a router write removing the next hop's interface, or its IPv6 address (400, interfaces)", async () => {
    await put([toFw('::/0')]);
    const detached = await rejects(
      svc.update('router', 'r1', { interfaces: [{ networkId: 'ds' }] }),
      'invalid',
      /^interfaces: network 'edge' holds fd00:3::9, the next hop of routes\[0\] \(::\/0\); keep its interface or change the route in the same write$/,
    );
    expect(detached.field).toBe('interfaces');
    const noIpv6 = await rejects(
      svc.update('router', 'r1', { interfaces: [{ networkId: 'ds' }, { networkId: 'edge', ipv6: false }] }),
      'invalid',
      /^interfaces: network 'edge' holds fd00:3::9, the next hop of routes\[0\] \(::\/0\), and the router's interface there would have no IPv6 address; keep its ipv6 or change the route in the same write$/,
    );
    expect(noIpv6.field).toBe('interfaces');
    // Another IPv6 address there keeps the route; with the route gone in the same write, both pass.
    await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'ds' }, { networkId: 'edge', ipv6: 'fd00:3::fe' }],
    });
    const both = await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'ds' }, { networkId: 'edge', ipv6: false }],
      routes: [],
    });
    expect(both.object.interfaces[1]).not.toHaveProperty('ipv6');
  });

  it("refuses a subnet change making a subnet a route's destination (400, subnets), and one leaving the next hop outside (the endpoint's address rule)", async () => {
    await put([toFw('::/0'), toFw('fd00:ffff::/48')]);
    const dest = await rejects(
      svc.update('network', 'ds', { subnets: ['10.1.0.0/24', 'fd00:1::/64', 'fd00:ffff::/48'] }),
      'invalid',
      /^subnets: fd00:ffff::\/48 is the destination of routes\[1\] of router 'r1' \(via fd00:3::9\); remove that route first$/,
    );
    expect(dest.field).toBe('subnets');
    const outside = await rejects(
      svc.update('network', 'edge', { subnets: ['10.3.0.0/24', 'fd00:4::/64'] }),
      'conflict',
      /^subnets: endpoint address fd00:3::9 would lie outside every subnet/,
    );
    expect(outside.field).toBe('subnets');
    await rejects(svc.update('network', 'edge', { subnets: ['10.3.0.0/24'] }), 'conflict', /fd00:3::9/);
    // Narrower but still holding the next hop, the router's address and the rest: fine.
    await svc.update('network', 'edge', { subnets: ['10.3.0.0/24', 'fd00:3::/120'] });
  });
});
