import { beforeEach, describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import type { RouterRoute } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest } from './router-fixture.js';

/**
 * Static routes: a router sends traffic for a destination to an appliance VM (endpoint `nat`,
 * 10.3.0.9 on network `edge`), or to another address on one of its networks that no endpoint holds
 * (a physical router behind a VLAN binding, 10.3.0.254 here; its MAC is resolved by ARP). Red's
 * networks: web 10.0.0.0/24, db 10.0.1.0/24, app 10.0.2.0/24, edge 10.3.0.0/24; r1 is on web
 * (10.0.0.1) and edge (10.3.0.1).
 */

let svc: IntentService;
redBlueEachTest(
  (s) => {
    svc = s;
  },
  async (s) => {
    await s.put('network', 'edge', { tenantId: 'red', name: 'edge', subnets: ['10.3.0.0/24'] });
    await s.put('endpoint', 'nat', { networkId: 'edge', ips: ['10.3.0.9'], portSecurity: false });
  },
);

const interfaces = [
  { networkId: 'web', ip: '10.0.0.1' },
  { networkId: 'edge', ip: '10.3.0.1' },
];
const withRoutes = (...routes: RouterRoute[]) => ({ tenantId: 'red', name: 'r1', interfaces, routes });
const toNat = (destination: string): RouterRoute => ({ destination, nexthop: '10.3.0.9' });
/** A physical router on edge: no endpoint holds its address. */
const toPhys = (destination: string): RouterRoute => ({ destination, nexthop: '10.3.0.254' });
const put = (...routes: RouterRoute[]) => svc.put('router', 'r1', withRoutes(...routes));

describe('router routes: accepted', () => {
  it('stores the routes in the order given; none given is [] (create, PUT), and a PATCH of others keeps them', async () => {
    const bare = await svc.create('router', { tenantId: 'red' });
    expect(bare.object.routes).toEqual([]);
    const { object } = await put(toNat('0.0.0.0/0'), toNat('192.168.0.0/16'));
    expect(object.routes).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
      { destination: '192.168.0.0/16', nexthop: '10.3.0.9' },
    ]);
    expect(svc.get('router', 'r1')).toEqual(object);
    const renamed = await svc.update('router', 'r1', { name: 'renamed' });
    expect(renamed.object.routes).toEqual(object.routes);
    const replaced = await svc.update('router', 'r1', { routes: [toNat('172.16.0.0/12')] });
    expect(replaced.object.routes).toEqual([{ destination: '172.16.0.0/12', nexthop: '10.3.0.9' }]);
    const noRoutes = await svc.put('router', 'r1', { tenantId: 'red', interfaces });
    expect(noRoutes.object.routes).toEqual([]);
  });

  it('stores the destination in canonical text (prefix length without leading zeros)', async () => {
    const { object } = await put(toNat('0.0.0.0/00'), toNat('192.168.0.0/016'));
    expect(object.routes.map((r) => r.destination)).toEqual(['0.0.0.0/0', '192.168.0.0/16']);
    // Written again in canonical text: nothing changes.
    const same = await put(toNat('0.0.0.0/0'), toNat('192.168.0.0/16'));
    expect(same.revision).toBe(object.revision);
  });

  it('takes a prefix wider or narrower than a connected subnet (the longest prefix wins), and next hops on two networks', async () => {
    await svc.put('endpoint', 'fw', { networkId: 'web', ips: ['10.0.0.5'] });
    const { object } = await put(
      toNat('10.0.0.0/8'),
      toNat('10.0.0.128/25'),
      { destination: '10.0.0.7/32', nexthop: '10.0.0.5' },
      { destination: '0.0.0.0/0', nexthop: '10.0.0.5' },
    );
    expect(object.routes.map((r) => r.nexthop)).toEqual(['10.3.0.9', '10.3.0.9', '10.0.0.5', '10.0.0.5']);
  });

  it('stores a route via an address no endpoint holds (a physical router, resolved by ARP), beside one via an appliance', async () => {
    expect(svc.list('endpoint').items.flatMap((e) => e.ips)).not.toContain('10.3.0.10');
    const { object } = await put(toNat('0.0.0.0/0'), { destination: '192.168.0.0/16', nexthop: '10.3.0.10' });
    expect(object.routes).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
      { destination: '192.168.0.0/16', nexthop: '10.3.0.10' },
    ]);
    expect(svc.get('router', 'r1').routes).toEqual(object.routes);
    // On either network, and by PATCH too.
    const patched = await svc.update('router', 'r1', {
      routes: [toPhys('0.0.0.0/0'), { destination: '172.16.0.0/12', nexthop: '10.0.0.200' }],
    });
    expect(patched.object.routes).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.254' },
      { destination: '172.16.0.0/12', nexthop: '10.0.0.200' },
    ]);
    expect(svc.get('router', 'r1').routes).toEqual(patched.object.routes);
  });

  it('lets an endpoint take a next hop address later; the endpoint is then protected like an appliance (409)', async () => {
    await put(toPhys('0.0.0.0/0'));
    const made = await svc.put('endpoint', 'gw', {
      networkId: 'edge',
      ips: ['10.3.0.254'],
      portSecurity: false,
    });
    expect(made.object.ips).toEqual(['10.3.0.254']);
    const message =
      /^endpoint 'gw' is the next hop of router 'r1' \(route 0\.0\.0\.0\/0\); change the route first$/;
    const e = await rejects(svc.delete('endpoint', 'gw'), 'conflict', message);
    expect(e.details).toEqual({ router: 'r1', route: '0.0.0.0/0' });
    const dropped = await rejects(
      svc.update('endpoint', 'gw', { ips: ['10.3.0.253'] }),
      'conflict',
      /^ips: endpoint 'gw' is the next hop/,
    );
    expect(dropped.field).toBe('ips');
    expect(svc.get('endpoint', 'gw').ips).toEqual(['10.3.0.254']);
    // The route moves to an address nobody holds: the endpoint may go, the route stays.
    await svc.update('router', 'r1', { routes: [{ destination: '0.0.0.0/0', nexthop: '10.3.0.253' }] });
    await svc.delete('endpoint', 'gw');
    expect(svc.get('router', 'r1').routes).toEqual([{ destination: '0.0.0.0/0', nexthop: '10.3.0.253' }]);
  });
});

describe('router routes: refused, naming the field', () => {
  it('refuses a destination that is not a CIDR, or has host bits set (naming the network address)', async () => {
    const cases: Array<[string, RegExp]> = [
      ['nope', /^routes\[0\]\.destination: 'nope' is not a CIDR/],
      ['10.0.0.300/8', /^routes\[0\]\.destination: '10\.0\.0\.300\/8' does not start with a valid/],
      ['10.0.0.0/33', /^routes\[0\]\.destination: '10\.0\.0\.0\/33' has a prefix length outside 0-32/],
      [
        'fd00::1/64',
        /^routes\[0\]\.destination: 'fd00::1\/64' has host bits set; write the network address fd00::\/64$/,
      ],
      [
        '10.1.2.3/16',
        /^routes\[0\]\.destination: '10\.1\.2\.3\/16' has host bits set; write the network address 10\.1\.0\.0\/16$/,
      ],
    ];
    for (const [destination, message] of cases) {
      const e = await rejects(put(toNat(destination)), 'invalid', message);
      expect(e.field).toBe('routes[0].destination');
    }
  });

  it('refuses two routes for one destination, and a destination that is a connected subnet', async () => {
    const twice = await rejects(
      put(toNat('0.0.0.0/0'), toNat('192.168.0.0/16'), toNat('0.0.0.0/0')),
      'invalid',
      /^routes\[2\]\.destination: 0\.0\.0\.0\/0 is already routes\[0\]; one route per destination$/,
    );
    expect(twice.field).toBe('routes[2].destination');
    const connected = await rejects(
      put(toNat('10.0.0.0/24')),
      'invalid',
      /^routes\[0\]\.destination: 10\.0\.0\.0\/24 is the subnet of network 'web': connected subnets are routed already$/,
    );
    expect(connected.field).toBe('routes[0].destination');
  });

  it('refuses a next hop that is not IPv4, outside the routed subnets (listing them), or the router itself', async () => {
    // An IPv6 destination via an IPv4 next hop: the families differ (IPv6 routes: router-routes6.test.ts).
    const mixed = await rejects(
      put(toNat('fd00::/64')),
      'invalid',
      /^routes\[0\]\.nexthop: 10\.3\.0\.9 is IPv4 but the destination fd00::\/64 is IPv6; a next hop is of its destination's family$/,
    );
    expect(mixed.field).toBe('routes[0].nexthop');
    const cases: Array<[string, RegExp]> = [
      ['gateway', /^routes\[0\]\.nexthop: 'gateway' is not an IPv4 address$/],
      [
        'fd00::9',
        /^routes\[0\]\.nexthop: fd00::9 is IPv6 but the destination 0\.0\.0\.0\/0 is IPv4; a next hop is of its destination's family$/,
      ],
      [
        '10.0.1.9',
        /^routes\[0\]\.nexthop: 10\.0\.1\.9 is outside the IPv4 subnets of the router's networks \(10\.0\.0\.0\/24, 10\.3\.0\.0\/24\); a next hop is on one of them$/,
      ],
      [
        '10.3.0.1',
        /^routes\[0\]\.nexthop: 10\.3\.0\.1 is this router's own address on network 'edge'; a next hop is another host$/,
      ],
    ];
    for (const [nexthop, message] of cases) {
      const e = await rejects(put({ destination: '0.0.0.0/0', nexthop }), 'invalid', message);
      expect(e.field).toBe('routes[0].nexthop');
    }
  });

  it('refuses more than 64 routes', async () => {
    const many = Array.from({ length: 65 }, (_, i) => toNat(`192.168.${i}.0/24`));
    await rejects(put(...many), 'invalid', /^routes: /);
    expect((await put(...many.slice(0, 64))).object.routes).toHaveLength(64);
  });
});

describe('the next hop stays: endpoint, router and network writes that would strand a route', () => {
  beforeEach(async () => {
    await put(toNat('0.0.0.0/0'));
  });
  const inUse =
    /^ips: endpoint 'nat' is the next hop of router 'r1' \(route 0\.0\.0\.0\/0\); change the route first$/;

  it('refuses an endpoint PATCH or PUT that drops the next hop address (409, ips); keeping it is fine', async () => {
    const patched = await rejects(svc.update('endpoint', 'nat', { ips: ['10.3.0.10'] }), 'conflict', inUse);
    expect(patched.field).toBe('ips');
    await rejects(svc.put('endpoint', 'nat', { networkId: 'edge' }), 'conflict', inUse);
    const kept = await svc.update('endpoint', 'nat', { ips: ['10.3.0.10', '10.3.0.9'] });
    expect(kept.object.ips).toEqual(['10.3.0.10', '10.3.0.9']);
    // Once the route moves, the old address may go.
    await svc.update('router', 'r1', { routes: [{ destination: '0.0.0.0/0', nexthop: '10.3.0.10' }] });
    expect((await svc.update('endpoint', 'nat', { ips: ['10.3.0.10'] })).object.ips).toEqual(['10.3.0.10']);
  });

  it('refuses deleting the next hop endpoint, with or without cascade (409), until the route changes', async () => {
    const message =
      /^endpoint 'nat' is the next hop of router 'r1' \(route 0\.0\.0\.0\/0\); change the route first$/;
    const e = await rejects(svc.delete('endpoint', 'nat'), 'conflict', message);
    expect(e.details).toEqual({ router: 'r1', route: '0.0.0.0/0' });
    await rejects(svc.delete('endpoint', 'nat', { cascade: true }), 'conflict', message);
    expect(svc.get('endpoint', 'nat').ips).toEqual(['10.3.0.9']);
    await svc.update('router', 'r1', { routes: [] });
    await svc.delete('endpoint', 'nat');
    expect(() => svc.get('endpoint', 'nat')).toThrow(/not found/);
  });

  it("deletes the next hop with a cascade that also deletes the router: the endpoint's network, its tenant", async () => {
    const net = await svc.delete('network', 'edge', { cascade: true });
    expect(net.deleted.map((d) => `${d.kind}/${d.id}`).sort()).toEqual([
      'endpoint/nat',
      'network/edge',
      'router/r1',
    ]);
    await svc.put('network', 'edge', { tenantId: 'red', name: 'edge', subnets: ['10.3.0.0/24'] });
    await svc.put('endpoint', 'nat', { networkId: 'edge', ips: ['10.3.0.9'] });
    await put(toNat('0.0.0.0/0'));
    const tenant = await svc.delete('tenant', 'red', { cascade: true });
    expect(tenant.deleted.map((d) => `${d.kind}/${d.id}`)).toContain('endpoint/nat');
    expect(svc.list('router').items).toEqual([]);
  });

  it("refuses a router write that leaves the next hop's network (400, interfaces); with the route gone it passes", async () => {
    const e = await rejects(
      svc.update('router', 'r1', { interfaces: [interfaces[0]!] }),
      'invalid',
      /^interfaces: network 'edge' holds 10\.3\.0\.9, the next hop of routes\[0\] \(0\.0\.0\.0\/0\); keep its interface or change the route in the same write$/,
    );
    expect(e.field).toBe('interfaces');
    const both = await svc.update('router', 'r1', { interfaces: [interfaces[0]!], routes: [] });
    expect(both.object).toMatchObject({ interfaces: [{ networkId: 'web' }], routes: [] });
  });

  it('refuses joining a network whose subnet is a route destination, and a subnet change that makes one', async () => {
    await svc.update('router', 'r1', { routes: [toNat('0.0.0.0/0'), toNat('10.0.1.0/24')] });
    const join = await rejects(
      svc.update('router', 'r1', { interfaces: [...interfaces, { networkId: 'db', ip: '10.0.1.1' }] }),
      'invalid',
      /^routes\[1\]\.destination: 10\.0\.1\.0\/24 is the subnet of network 'db': connected subnets are routed already$/,
    );
    expect(join.field).toBe('routes[1].destination');
    // web is on r1: it may not take 10.0.1.0/24 as a subnet while r1 routes that to nat.
    const subnet = await rejects(
      svc.update('network', 'web', { subnets: ['10.0.0.0/24', '10.0.1.0/24'] }),
      'invalid',
      /^subnets: 10\.0\.1\.0\/24 is the destination of routes\[1\] of router 'r1' \(via 10\.3\.0\.9\); remove that route first$/,
    );
    expect(subnet.field).toBe('subnets');
    // db is on no router: its subnets are its own business.
    await svc.update('network', 'db', { subnets: ['10.0.1.0/24', '192.168.0.0/16'] });
  });

  it("refuses a subnet change of a next hop's network that leaves an address no endpoint holds outside (400, subnets)", async () => {
    await svc.update('router', 'r1', { routes: [toNat('0.0.0.0/0'), toPhys('192.168.0.0/16')] });
    const e = await rejects(
      svc.update('network', 'edge', { subnets: ['10.3.0.0/25'] }),
      'invalid',
      /^subnets: 10\.3\.0\.254, the next hop of routes\[1\] \(192\.168\.0\.0\/16\) of router 'r1', would be outside the IPv4 subnets of the router's networks \(10\.0\.0\.0\/24, 10\.3\.0\.0\/25\); change that route first$/,
    );
    expect(e.field).toBe('subnets');
    expect(svc.get('network', 'edge').subnets).toEqual(['10.3.0.0/24']);
    // Still inside, or with the route gone: the change passes.
    await svc.update('network', 'edge', { subnets: ['10.3.0.0/24', '10.4.0.0/24'] });
    await svc.update('router', 'r1', { routes: [toNat('0.0.0.0/0')] });
    expect((await svc.update('network', 'edge', { subnets: ['10.3.0.0/25'] })).object.subnets).toEqual([
      '10.3.0.0/25',
    ]);
  });

  it("refuses a subnet change of the next hop's network that leaves it outside (the endpoint's address rule)", async () => {
    await rejects(
      svc.update('network', 'edge', { subnets: ['10.3.1.0/24'] }),
      'conflict',
      /^subnets: endpoint address 10\.3\.0\.9 would lie outside every subnet/,
    );
    await rejects(
      svc.update('network', 'edge', { subnets: [] }),
      'invalid',
      /^subnets: router 'r1' has its interface/,
    );
  });
});

describe('router routes in a batch', () => {
  const ops = (): BatchOp[] => [
    { op: 'create', kind: 'tenant', id: 'green', body: { name: 'green' } },
    {
      op: 'create',
      kind: 'network',
      id: 'g-web',
      body: { tenantId: 'green', name: 'g-web', subnets: ['10.8.0.0/24'] },
    },
    {
      op: 'create',
      kind: 'network',
      id: 'g-edge',
      body: { tenantId: 'green', name: 'g-edge', subnets: ['10.9.0.0/24'] },
    },
    { op: 'create', kind: 'endpoint', id: 'g-vm', body: { networkId: 'g-web', ips: ['10.8.0.10'] } },
    {
      op: 'create',
      kind: 'endpoint',
      id: 'g-nat',
      body: { networkId: 'g-edge', ips: ['10.9.0.9'], portSecurity: false },
    },
    {
      op: 'replace',
      kind: 'router',
      id: 'g-r',
      body: {
        tenantId: 'green',
        interfaces: [
          { networkId: 'g-web', ip: '10.8.0.1' },
          { networkId: 'g-edge', ip: '10.9.0.1' },
        ],
        routes: [{ destination: '0.0.0.0/0', nexthop: '10.9.0.9' }],
      },
    },
  ];

  it('creates networks, endpoints and a router with routes in one commit', async () => {
    const r = await svc.batch(ops());
    expect(r.committed).toBe(true);
    expect(svc.get('router', 'g-r').routes).toEqual([{ destination: '0.0.0.0/0', nexthop: '10.9.0.9' }]);
  });

  it('takes a router listed before the endpoint holding its next hop; the endpoint is then protected', async () => {
    const list = ops();
    const reordered = [...list.slice(0, 4), list[5]!, list[4]!];
    const r = await svc.batch(reordered);
    expect(r.committed).toBe(true);
    expect(svc.get('router', 'g-r').routes).toEqual([{ destination: '0.0.0.0/0', nexthop: '10.9.0.9' }]);
    await rejects(
      svc.batch([{ op: 'delete', kind: 'endpoint', id: 'g-nat' }]),
      'conflict',
      /^ops\[0\] \(endpoint 'g-nat'\): endpoint 'g-nat' is the next hop of router 'g-r'/,
    );
  });

  it('creates a router whose next hop no endpoint holds (a physical router); refuses one outside its networks, naming the op and field', async () => {
    const list = ops();
    const router = list[5]!;
    const physical = {
      ...router,
      body: { ...router.body, routes: [{ destination: '0.0.0.0/0', nexthop: '10.9.0.254' }] },
    };
    const r = await svc.batch([...list.slice(0, 4), physical]);
    expect(r.committed).toBe(true);
    expect(svc.get('router', 'g-r').routes).toEqual([{ destination: '0.0.0.0/0', nexthop: '10.9.0.254' }]);
    const outside = {
      ...router,
      body: { ...router.body, routes: [{ destination: '0.0.0.0/0', nexthop: '10.7.0.9' }] },
    };
    const e = await rejects(
      svc.batch([outside]),
      'invalid',
      /^ops\[0\] \(router 'g-r'\): routes\[0\]\.nexthop: 10\.7\.0\.9 is outside the IPv4 subnets/,
    );
    expect(e.field).toBe('ops[0].body.routes[0].nexthop');
    expect(svc.get('router', 'g-r').routes).toEqual([{ destination: '0.0.0.0/0', nexthop: '10.9.0.254' }]);
  });

  it('refuses deleting the next hop in a batch (with or without cascade) unless the address is held again or the route changes', async () => {
    await svc.batch(ops());
    const del: BatchOp = { op: 'delete', kind: 'endpoint', id: 'g-nat' };
    const e = await rejects(
      svc.batch([del]),
      'conflict',
      /^ops\[0\] \(endpoint 'g-nat'\): endpoint 'g-nat' is the next hop of router 'g-r' \(route 0\.0\.0\.0\/0\); change the route first$/,
    );
    expect(e.field).toBe('ops[0]');
    await rejects(svc.batch([{ ...del, cascade: true }]), 'conflict', /is the next hop of router 'g-r'/);
    // Re-created in the same batch with the address: the route still has its VM.
    const again = await svc.batch([del, ops()[4]!]);
    expect(again.committed).toBe(true);
    // The route changed first: the delete may go.
    const moved = await svc.batch([
      { op: 'replace', kind: 'router', id: 'g-r', body: { ...ops()[5]!.body, routes: [] } },
      del,
    ]);
    expect(moved.committed).toBe(true);
    expect(() => svc.get('endpoint', 'g-nat')).toThrow(/not found/);
  });
});
