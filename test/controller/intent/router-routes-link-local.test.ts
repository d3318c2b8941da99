import { describe, expect, it } from 'vitest';
import type { RouterRoute } from '../../../controller/intent/model.js';
import { routerLinkLocal } from '../../../controller/intent/model-router.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest } from './router-fixture.js';

/**
 * Static routes naming their next hop's network (`networkId`, controller/intent/router-routes.ts):
 * required for a link-local IPv6 next hop (fe80::/10, on every link), which must then be on one of
 * the router's networks where it has an IPv6 address, and not the router's own link-local address
 * there; optional for any other next hop, and then the network holding it. Red's dual-stack
 * networks next to the fixture's IPv4-only ones: ds (vni 4101) 10.1.0.0/24 + fd00:1::/64, ds2
 * (vni 4102) 10.2.0.0/24 + fd00:2::/64, edge (vni 4103) 10.3.0.0/24 + fd00:3::/64 with the
 * appliance fw (10.3.0.9, fd00:3::9). r1 is on ds (fd00:1::1), edge (fd00:3::1) and ds2 without an
 * IPv6 address (ipv6: false).
 */

let svc: IntentService;
redBlueEachTest(
  (s) => {
    svc = s;
  },
  async (s) => {
    const net = (id: string, vni: number, subnets: string[]) =>
      s.put('network', id, { tenantId: 'red', name: id, vni, subnets });
    await net('ds', 4101, ['10.1.0.0/24', 'fd00:1::/64']);
    await net('ds2', 4102, ['10.2.0.0/24', 'fd00:2::/64']);
    await net('edge', 4103, ['10.3.0.0/24', 'fd00:3::/64']);
    await s.put('endpoint', 'fw', { networkId: 'edge', ips: ['10.3.0.9', 'fd00:3::9'], portSecurity: false });
  },
);

/** The router's own link-local addresses (modified EUI-64 of routerMac(vni)) on ds and edge. */
const DS_LL = 'fe80::857:72ff:fe00:1005';
const EDGE_LL = 'fe80::857:72ff:fe00:1007';

type Itf = { networkId: string; ipv6?: string | false };
const interfaces: Itf[] = [{ networkId: 'ds' }, { networkId: 'edge' }, { networkId: 'ds2', ipv6: false }];
const put = (routes: RouterRoute[], itfs: Itf[] = interfaces) =>
  svc.put('router', 'r1', { tenantId: 'red', interfaces: itfs as Array<{ networkId: string }>, routes });
const viaLl = (destination: string, networkId?: string): RouterRoute => ({
  destination,
  nexthop: 'fe80::1',
  ...(networkId === undefined ? {} : { networkId }),
});

/** A stored r1 with one route, then: `write` is refused and r1 stays as it was. */
async function refusedKeeps(write: () => Promise<unknown>, field: string, message: RegExp) {
  const before = svc.get('router', 'r1');
  const e = await rejects(write(), 'invalid', message);
  expect(e.field).toBe(field);
  expect(svc.get('router', 'r1')).toEqual(before);
  return e;
}

describe('routes naming their next hop network: accepted', () => {
  it('the fixture: r1 has the link-local addresses derived from its interface MACs', async () => {
    await put([]);
    const macs = svc.get('router', 'r1').interfaces.map((x) => routerLinkLocal(x.mac));
    expect(macs.slice(0, 2)).toEqual([DS_LL, EDGE_LL]);
  });

  it('stores ::/0 via fe80::1 with the networkId of a network where the router has IPv6; written again or PATCHed, nothing changes', async () => {
    const { object } = await put([{ destination: '::/0', nexthop: 'FE80:0::1', networkId: 'edge' }]);
    expect(object.routes).toStrictEqual([{ destination: '::/0', nexthop: 'fe80::1', networkId: 'edge' }]);
    expect(svc.get('router', 'r1').routes).toStrictEqual(object.routes);
    const same = await put(object.routes);
    expect(same.revision).toBe(object.revision);
    const renamed = await svc.update('router', 'r1', { name: 'renamed' });
    expect(renamed.object.routes).toStrictEqual(object.routes);
    // The same next hop named on another network with a router IPv6 address (ds), and a second one on edge.
    const onDs = await put([
      viaLl('::/0', 'ds'),
      { destination: 'fd00:77::/48', nexthop: 'fe80::2', networkId: 'edge' },
    ]);
    expect(onDs.object.routes).toStrictEqual([
      { destination: '::/0', nexthop: 'fe80::1', networkId: 'ds' },
      { destination: 'fd00:77::/48', nexthop: 'fe80::2', networkId: 'edge' },
    ]);
  });

  it('stores an IPv4 and a global IPv6 route with the networkId of the network holding the next hop, and one without networkId without the key', async () => {
    const { object } = await put([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9', networkId: 'edge' },
      { destination: '::/0', nexthop: 'fd00:3::9', networkId: 'edge' },
      { destination: '192.168.0.0/16', nexthop: '10.2.0.7', networkId: 'ds2' },
      { destination: '172.16.0.0/12', nexthop: '10.1.0.7' },
      { destination: 'fd00:77::/48', nexthop: 'fd00:1::7' },
    ]);
    expect(object.routes).toStrictEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9', networkId: 'edge' },
      { destination: '::/0', nexthop: 'fd00:3::9', networkId: 'edge' },
      { destination: '192.168.0.0/16', nexthop: '10.2.0.7', networkId: 'ds2' },
      { destination: '172.16.0.0/12', nexthop: '10.1.0.7' },
      { destination: 'fd00:77::/48', nexthop: 'fd00:1::7' },
    ]);
    const stored = svc.get('router', 'r1').routes;
    expect(stored).toStrictEqual(object.routes);
    expect(stored[3]).not.toHaveProperty('networkId');
    expect(stored[4]).not.toHaveProperty('networkId');
  });
});

describe('routes naming their next hop network: refused (400 invalid), naming the field; r1 unchanged', () => {
  it('refuses a link-local next hop without networkId (routes[i].networkId)', async () => {
    await put([viaLl('fd00:66::/48', 'edge')]);
    await refusedKeeps(
      () => put([viaLl('fd00:66::/48', 'edge'), viaLl('::/0')]),
      'routes[1].networkId',
      /^routes\[1\]\.networkId: fe80::1 is link-local \(fe80::\/10\), on every link: name the network it is on$/,
    );
    // Anywhere in fe80::/10, not only fe80::/64.
    await refusedKeeps(
      () => put([{ destination: '::/0', nexthop: 'febf::1' }]),
      'routes[0].networkId',
      /^routes\[0\]\.networkId: febf::1 is link-local \(fe80::\/10\), on every link: name the network it is on$/,
    );
  });

  it("refuses a networkId that is not one of the router's networks (another of the tenant's, another tenant's, none)", async () => {
    await put([viaLl('fd00:66::/48', 'edge')]);
    for (const networkId of ['web', 'bnet', 'nope']) {
      await refusedKeeps(
        () => put([viaLl('::/0', networkId)]),
        'routes[0].networkId',
        new RegExp(
          `^routes\\[0\\]\\.networkId: network '${networkId}' is not one of the router's networks \\(interfaces\\)$`,
        ),
      );
    }
  });

  it('refuses the networkId of a router network where the router has no IPv6 address', async () => {
    await put([viaLl('fd00:66::/48', 'edge')]);
    await refusedKeeps(
      () => put([viaLl('::/0', 'ds2')]),
      'routes[0].networkId',
      /^routes\[0\]\.networkId: the router has no IPv6 address on network 'ds2' \(interfaces\[2\]\.ipv6\); IPv6 routes go only via networks where it has one$/,
    );
  });

  it("refuses the router's own link-local address on the named network as next hop (routes[i].nexthop)", async () => {
    await put([viaLl('fd00:66::/48', 'edge')]);
    for (const nexthop of [EDGE_LL, 'FE80:0:0:0:857:72FF:FE00:1007']) {
      await refusedKeeps(
        () => put([{ destination: '::/0', nexthop, networkId: 'edge' }]),
        'routes[0].nexthop',
        /^routes\[0\]\.nexthop: fe80::857:72ff:fe00:1007 is this router's own address on network 'edge'; a next hop is another host$/,
      );
    }
    await refusedKeeps(
      () => put([{ destination: '::/0', nexthop: DS_LL, networkId: 'ds' }]),
      'routes[0].nexthop',
      /^routes\[0\]\.nexthop: fe80::857:72ff:fe00:1005 is this router's own address on network 'ds'; a next hop is another host$/,
    );
    // Its link-local address on ds, named on edge: no host on edge holds it either.
    await refusedKeeps(
      () => put([{ destination: '::/0', nexthop: DS_LL, networkId: 'edge' }]),
      'routes[0].nexthop',
      /^routes\[0\]\.nexthop: fe80::857:72ff:fe00:1005 is this router's own address on network 'ds'; a next hop is another host$/,
    );
  });

  it('refuses an IPv4 or global IPv6 next hop whose networkId names another network than the one holding it', async () => {
    await put([viaLl('fd00:66::/48', 'edge')]);
    const cases: Array<[RouterRoute, RegExp]> = [
      [
        { destination: '0.0.0.0/0', nexthop: '10.3.0.9', networkId: 'ds' },
        /^routes\[1\]\.networkId: 10\.3\.0\.9 is on network 'edge', not 'ds'$/,
      ],
      [
        { destination: '0.0.0.0/0', nexthop: '10.2.0.7', networkId: 'edge' },
        /^routes\[1\]\.networkId: 10\.2\.0\.7 is on network 'ds2', not 'edge'$/,
      ],
      [
        { destination: '::/0', nexthop: 'fd00:3::9', networkId: 'ds' },
        /^routes\[1\]\.networkId: fd00:3::9 is on network 'edge', not 'ds'$/,
      ],
      [
        { destination: '::/0', nexthop: 'fd00:1::7', networkId: 'web' },
        /^routes\[1\]\.networkId: fd00:1::7 is on network 'ds', not 'web'$/,
      ],
    ];
    for (const [route, message] of cases) {
      await refusedKeeps(() => put([viaLl('fd00:66::/48', 'edge'), route]), 'routes[1].networkId', message);
    }
  });
});

describe('a link-local next hop stays: later router and network writes', () => {
  it('refuses a router write removing the interface the route names (400, interfaces), until the route goes in the same write', async () => {
    await put([viaLl('::/0', 'edge')]);
    await refusedKeeps(
      () =>
        svc.update('router', 'r1', { interfaces: [{ networkId: 'ds' }, { networkId: 'ds2', ipv6: false }] }),
      'interfaces',
      /^interfaces: network 'edge' holds fe80::1, the next hop of routes\[0\] \(::\/0\); keep its interface or change the route in the same write$/,
    );
    const both = await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'ds' }, { networkId: 'ds2', ipv6: false }],
      routes: [],
    });
    expect(both.object.interfaces.map((x) => x.networkId)).toEqual(['ds', 'ds2']);
  });

  it("refuses a router write removing that interface's IPv6 address (400, interfaces); another IPv6 address keeps the route", async () => {
    await put([viaLl('::/0', 'edge')]);
    await refusedKeeps(
      () =>
        svc.update('router', 'r1', { interfaces: [{ networkId: 'ds' }, { networkId: 'edge', ipv6: false }] }),
      'interfaces',
      /^interfaces: network 'edge' holds fe80::1, the next hop of routes\[0\] \(::\/0\), and the router's interface there would have no IPv6 address; keep its ipv6 or change the route in the same write$/,
    );
    const moved = await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'ds' }, { networkId: 'edge', ipv6: 'fd00:3::fe' }],
    });
    expect(moved.object.routes).toStrictEqual([
      { destination: '::/0', nexthop: 'fe80::1', networkId: 'edge' },
    ]);
  });

  it('lets the subnets of the named network change (the link-local next hop is in no subnet), still refusing a subnet that is a route destination', async () => {
    await put([viaLl('::/0', 'edge'), viaLl('fd00:ffff::/48', 'edge')]);
    const { object } = await svc.update('network', 'edge', { subnets: ['10.3.0.0/24', 'fd00:3::/120'] });
    expect(object.subnets).toEqual(['10.3.0.0/24', 'fd00:3::/120']);
    // Another network of the router checks all its routes too.
    await svc.update('network', 'ds', { subnets: ['10.1.0.0/24', 'fd00:1::/120'] });
    expect(svc.get('router', 'r1').routes).toStrictEqual([
      { destination: '::/0', nexthop: 'fe80::1', networkId: 'edge' },
      { destination: 'fd00:ffff::/48', nexthop: 'fe80::1', networkId: 'edge' },
    ]);
    const dest = await rejects(
      svc.update('network', 'edge', { subnets: ['10.3.0.0/24', 'fd00:3::/120', 'fd00:ffff::/48'] }),
      'invalid',
      /^subnets: fd00:ffff::\/48 is the destination of routes\[1\] of router 'r1' \(via fe80::1\); remove that route first$/,
    );
    expect(dest.field).toBe('subnets');
    expect(svc.get('network', 'edge').subnets).toEqual(['10.3.0.0/24', 'fd00:3::/120']);
  });
});
