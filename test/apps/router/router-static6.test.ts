import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import { routerNetworkFlows } from '../../../apps/router/compute.js';
import { routerPorts, staticRoutes } from '../../../apps/router/ports.js';
import type { NetworkRouter, RouterPort, StaticRoute } from '../../../apps/view.js';
import type { Router } from '../../../controller/intent/model.js';
import { checkFlow, type DesiredFlow } from '../../../controller/pipeline/flow.js';
import { formatFlow } from '../../../southbound/openflow/text/index.js';
import { network } from '../fixtures.js';
import { DB_PORT, routedTenant, WEB_PORT } from './fixtures.js';

/**
 * IPv6 static routes (apps/router/ipv6.ts, ports.ts staticRoutes): via a bound endpoint only, at
 * 100 + prefix length beside the connected IPv6 routes, on every network where the router has an
 * IPv6 address; IPv4 static routes (apps/router/compute.ts) never take an IPv6 one, nor the reverse.
 */

const text = (flows: DesiredFlow[]) => flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''));
const web6: RouterPort = { ...WEB_PORT, ipv6: 'fd00:1::1', cidrs6: ['fd00:1::/64'] };
const db6: RouterPort = { ...DB_PORT, ipv6: 'fd00:2::1', cidrs6: ['fd00:2::/64'] };
/** The appliance on db (VNI 200). */
const nat = {
  kind: 'endpoint' as const,
  endpointId: 'nat',
  mac: '02:00:00:00:00:99',
  vni: 200,
  gatewayMac: db6.mac,
};

const flowsOf = (self: RouterPort, routes: StaticRoute[], vni = self.vni): DesiredFlow[] => {
  const flows: DesiredFlow[] = [];
  const router: NetworkRouter = { routerId: 'r1', self, ports: [db6, web6], routes, floatingIps: [] };
  routerNetworkFlows({ vni, router }, flows);
  for (const f of flows) checkFlow(f);
  return flows;
};

describe('IPv6 static route flows', () => {
  it('::/0 and a /48 via an endpoint: to its MAC, straight to l2-lookup, by prefix length beside the connected routes, above no route', () => {
    const flows = flowsOf(web6, [
      { destination: '::/0', via: nat },
      { destination: 'fd00:ffff::/48', via: nat },
      { destination: '0.0.0.0/0', via: nat },
    ]);
    const gw = 'metadata=0x64,dl_dst=0a:57:72:00:00:64';
    const toNat =
      'dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,set_field:02:00:00:00:00:99->eth_dst,write_metadata:0xc8/0xffffff,goto_table:40';
    // Every IPv6 route of web's gateway and its no-route flow, in the order computed.
    expect(text(flows).filter((l) => /^table=35, priority=(1\d\d|10),ipv6,/.test(l))).toEqual([
      `table=35, priority=164,ipv6,${gw},ipv6_dst=fd00:2::/64 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,write_metadata:0xc8/0xffffff,goto_table:36`,
      `table=35, priority=164,ipv6,${gw},ipv6_dst=fd00:1::/64 actions=dec_ttl,set_field:0a:57:72:00:00:64->eth_src,write_metadata:0x64/0xffffff,goto_table:36`,
      `table=35, priority=100,ipv6,${gw} actions=${toNat}`,
      `table=35, priority=148,ipv6,${gw},ipv6_dst=fd00:ffff::/48 actions=${toNat}`,
      `table=35, priority=10,ipv6,${gw} actions=CONTROLLER:65535`,
    ]);
    // The IPv4 default route is the IPv4 flow's alone; no IPv4 flow for an IPv6 route.
    expect(text(flows).filter((l) => l.includes('->eth_dst,write_metadata'))).toEqual([
      `table=35, priority=100,ipv6,${gw} actions=${toNat}`,
      `table=35, priority=148,ipv6,${gw},ipv6_dst=fd00:ffff::/48 actions=${toNat}`,
      `table=35, priority=100,ip,${gw} actions=${toNat}`,
    ]);
  });

  it('on a network where the router has no IPv6 address: the IPv4 route only', () => {
    const v4only: RouterPort = {
      ...DB_PORT,
      networkId: 'old',
      vni: 300,
      mac: '0a:57:72:00:01:2c',
      cidrs6: [],
    };
    const routes: StaticRoute[] = [
      { destination: '::/0', via: nat },
      { destination: '0.0.0.0/0', via: nat },
    ];
    const onOld = text(flowsOf(v4only, routes)).filter((l) => l.includes('->eth_dst,write_metadata'));
    expect(onOld).toEqual([expect.stringMatching(/^table=35, priority=100,ip,metadata=0x12c,/)]);
  });

  it('via an address no bound endpoint holds: the next hop into reg8..reg11 (reg3=1), on to l3-neighbor, never reg4', () => {
    const arp = { kind: 'arp' as const, nexthop: 'fd00:2::77', vni: 200, gatewayMac: db6.mac };
    const withArp = flowsOf(web6, [{ destination: 'fd00:eeee::/32', via: arp }]);
    for (const f of withArp) checkFlow(f);
    expect(text(withArp).filter((l) => l.includes('fd00:eeee') || l.includes('reg'))).toEqual([
      'table=35, priority=132,ipv6,metadata=0x64,dl_dst=0a:57:72:00:00:64,ipv6_dst=fd00:eeee::/32 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,set_field:0xfd000002->reg8,set_field:0->reg9,set_field:0->reg10,set_field:0x77->reg11,set_field:0x1->reg3,write_metadata:0xc8/0xffffff,goto_table:36',
    ]);
  });
});

describe('staticRoutes with IPv6 next hops', () => {
  const net = (id: string, vni: number, subnets: string[]) => ({ ...network(id, 't-red', vni), subnets });
  const nets = [
    net('web', 100, ['10.0.0.0/24', 'fd00:1::/64']),
    net('db', 200, ['10.0.1.0/24', 'fd00:2::/64']),
    net('old', 300, ['10.0.2.0/24', 'fd00:3::/64']),
  ];
  const router = (routes: Router['routes']): Router =>
    ({
      id: 'r1',
      routes,
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1', ipv6: 'fd00:1::1', mac: '0a:57:72:00:00:64' },
        { networkId: 'db', ip: '10.0.1.1', ipv6: 'fd00:2::1', mac: '0a:57:72:00:00:c8' },
        // No IPv6 address on old: no IPv6 route goes via it.
        { networkId: 'old', ip: '10.0.2.1', mac: '0a:57:72:00:01:2c' },
      ],
    }) as Router;
  const bound: Record<string, { endpointId: string; mac: string }> = {
    'db/fd00:2::9': { endpointId: 'nat', mac: '02:00:00:00:00:99' },
    'old/fd00:3::9': { endpointId: 'legacy', mac: '02:00:00:00:00:98' },
  };
  const resolve = (r: Router) =>
    staticRoutes(
      r,
      routerPorts(r, (id) => nets.find((n) => n.id === id)),
      (n, ip) => bound[`${n}/${ip}`],
    );

  it('resolves a bound endpoint; a next hop no bound endpoint holds goes to neighbour resolution; one where the router has no IPv6 address is left out', () => {
    const routes = resolve(
      router([
        { destination: '::/0', nexthop: 'fd00:2::9' },
        { destination: 'fd00:ffff::/48', nexthop: 'fd00:2::10' },
        { destination: 'fd00:eeee::/48', nexthop: 'fd00:3::9' },
        { destination: '0.0.0.0/0', nexthop: '10.0.1.10' },
      ]),
    );
    expect(routes).toEqual([
      {
        destination: '::/0',
        via: {
          kind: 'endpoint',
          endpointId: 'nat',
          mac: '02:00:00:00:00:99',
          vni: 200,
          gatewayMac: '0a:57:72:00:00:c8',
        },
      },
      // Held by no bound endpoint: resolved by neighbour solicitation, as IPv4 by ARP.
      {
        destination: 'fd00:ffff::/48',
        via: { kind: 'arp', nexthop: 'fd00:2::10', vni: 200, gatewayMac: '0a:57:72:00:00:c8' },
      },
      {
        destination: '0.0.0.0/0',
        via: { kind: 'arp', nexthop: '10.0.1.10', vni: 200, gatewayMac: '0a:57:72:00:00:c8' },
      },
    ]);
  });
});

describe('static routes naming their next hop network', () => {
  it('a link-local next hop (in no subnet) goes via the network the route names, resolved by neighbour solicitation there', () => {
    const nets = [
      { ...network('web', 't1', 100), subnets: ['10.0.0.0/24', 'fd00:1::/64'] },
      { ...network('db', 't1', 200), subnets: ['10.0.1.0/24', 'fd00:2::/64'] },
    ];
    const r = {
      id: 'r1',
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1', ipv6: 'fd00:1::1', mac: '0a:57:72:00:00:64' },
        { networkId: 'db', ip: '10.0.1.1', ipv6: 'fd00:2::1', mac: '0a:57:72:00:00:c8' },
      ],
      routes: [
        { destination: '::/0', nexthop: 'fe80::1', networkId: 'db' },
        { destination: 'fd00:ffff::/48', nexthop: 'fe80::1', networkId: 'web' },
      ],
    } as unknown as Router;
    const routes = staticRoutes(
      r,
      routerPorts(r, (id) => nets.find((n) => n.id === id)),
      () => undefined,
    );
    expect(routes.map((x) => [x.destination, x.via])).toEqual([
      ['::/0', { kind: 'arp', nexthop: 'fe80::1', vni: 200, gatewayMac: '0a:57:72:00:00:c8' }],
      ['fd00:ffff::/48', { kind: 'arp', nexthop: 'fe80::1', vni: 100, gatewayMac: '0a:57:72:00:00:64' }],
    ]);
  });
});

describe('IPv6 static routes in the datapath views', () => {
  /** routedTenant dual stack: r1 fd00:1::1 on web, fd00:2::1 on db; d1 (db, hv1) holds fd00:2::5; ::/0 via d1. */
  const dualStack = (bound: boolean) => {
    const { intent, facts } = routedTenant();
    intent.networks = intent.networks.map((n) =>
      n.id === 'web' || n.id === 'db'
        ? { ...n, subnets: [...n.subnets, n.id === 'web' ? 'fd00:1::/64' : 'fd00:2::/64'] }
        : n,
    );
    intent.endpoints = intent.endpoints.map((e) =>
      e.id === 'd1' ? { ...e, ips: [...e.ips, 'fd00:2::5'] } : e,
    );
    const r = intent.routers![0]!;
    intent.routers = [
      {
        ...r,
        interfaces: r.interfaces.map((i) => ({
          ...i,
          ipv6: i.networkId === 'web' ? 'fd00:1::1' : 'fd00:2::1',
        })),
        routes: [{ destination: '::/0', nexthop: 'fd00:2::5' }],
      },
    ];
    const bindings = new Map(facts.bindings);
    if (!bound) bindings.delete('iface-d1');
    return [...buildDatapathViews(intent, { ...facts, bindings })].map(
      ([hv, view]) => [hv, text(computeDatapath(view).flows)] as const,
    );
  };
  const route = (metadata: string, gatewayMac: string) =>
    `table=35, priority=100,ipv6,metadata=${metadata},dl_dst=${gatewayMac} actions=dec_ttl,set_field:0a:57:72:00:00:65->eth_src,set_field:02:00:00:00:02:05->eth_dst,write_metadata:0x65/0xffffff,goto_table:40`;

  const onWeb = route('0x64', '0a:57:72:00:00:64');
  const onDb = route('0x65', '0a:57:72:00:00:65');
  /** The gateways each chassis runs: hv1 hosts web and db VMs, hv2 db's (d2), hv3 web's (w3). */
  const gateways = { hv1: [onWeb, onDb], hv2: [onDb], hv3: [onWeb] };

  it("puts the route on every chassis of every network of the router, each network's gateway in its VNI", () => {
    const views = dualStack(true);
    expect(views.map(([hv]) => hv)).toEqual(['hv1', 'hv2', 'hv3']);
    for (const [hv, flows] of views) {
      const statics = flows.filter((l) => l.includes('->eth_dst,write_metadata'));
      expect(statics, hv).toEqual(gateways[hv as keyof typeof gateways]);
    }
  });

  it('while the next hop endpoint is not bound, routes to its address by neighbour resolution (reg8..reg11), never to its MAC', () => {
    for (const [hv, flows] of dualStack(false)) {
      expect(
        flows.filter((l) => l.includes('->eth_dst,write_metadata')),
        hv,
      ).toEqual([]);
      const viaNeighbor = flows.filter(
        (l) => l.startsWith('table=35, priority=100,ipv6,') && l.includes('reg8'),
      );
      // One gateway per chassis now (d1 unbound: hv1 hosts web's VMs only), as the no-route flows below.
      expect(viaNeighbor, hv).toHaveLength(1);
      // d1 unbound, hv1 hosts web's VMs only: one gateway per chassis, each with its IPv6 no-route flow.
      const noRoute = flows.filter((l) => /^table=35, priority=10,ipv6,.* actions=CONTROLLER:65535$/.test(l));
      expect(noRoute, hv).toHaveLength(1);
    }
  });
});
