import { TABLE } from '../../../controller/pipeline/tables.js';
import { traceWorld } from '../../../controller/trace/world.js';
import { bindableFacts, dpidOf, plug } from '../engine/bindable-facts.js';
import { serviceEngine } from '../engine/service-engine.js';
import { tracer } from './trace-fixture.js';

export const TUNNEL_PORT = 100;
/** routerMac(VNI): 0a:57:72 + the network's 24 VNI bits. */
export const WEB_GATEWAY_MAC = '0a:57:72:00:00:64';
export const DB_GATEWAY_MAC = '0a:57:72:00:00:65';
export const W1_MAC = '02:00:00:00:01:05';

/** w1's packets on hv1, table and owner, up to the router's l3-route. */
export const FROM_W1 = [
  `${TABLE.CLASSIFY}:endpoint/w1`,
  `${TABLE.PORT_SECURITY}:endpoint/w1`,
  `${TABLE.EGRESS_ACL}:table-miss/20`,
  `${TABLE.EGRESS_SG}:table-miss/25`,
  `${TABLE.ARP_RESPONDER}:table-miss/30`,
];

/**
 * A routed tenant on two hypervisors, computed by the real engine over a real intent service:
 * red's router r1 joins web (VNI 100, 10.1.0.0/24, gateway 10.1.0.1) and db (VNI 101,
 * 10.2.0.0/24, gateway 10.2.0.1); w1 10.1.0.5 on hv1 port 1, d1 10.2.0.5 on hv1 port 2, d2
 * 10.2.0.6 on hv2 port 1. Tenant blue's network (VNI 200) has web's addresses and no router:
 * b1 10.1.0.5 on hv1 port 3.
 *
 * `ipv6`: dual stack. Network n (1 web, 2 db, 3 ops) has fd00:n::/64 as well, and each endpoint
 * the IPv6 twin of its address (10.n.0.x: fd00:n::x); r1 is fd00:1::1 on web and fd00:2::1 on db.
 * Red's third network ops (VNI 102, 10.3.0.0/24 + fd00:3::/64) is on r1 as 10.3.0.1 with no IPv6
 * address: r1 routes only IPv4 there; o1 10.3.0.5 on hv2 port 2. blue-net has fd00:1::/64 too.
 */
export async function routedWorld(
  opts: { ipv6?: boolean; byName?: (chassisId: string) => Map<string, number> } = {},
) {
  const v6 = opts.ipv6 === true;
  const facts = bindableFacts(['hv1', 'hv2'], {
    tunnelPort: TUNNEL_PORT,
    ...(opts.byName ? { byName: opts.byName } : {}),
  });
  const t = await serviceEngine(facts, [dpidOf(0), dpidOf(1)]);
  const { svc } = t;
  const twin = (ip: string) => (v6 ? [ip, ip.replace(/^10\.(\d)\.0\./, 'fd00:$1::')] : [ip]);
  const subnets = (cidr: string) => twin(cidr).map((c) => c.replace('::0/24', '::/64'));
  // A failed setup must not leave the service's temp store behind.
  try {
    for (const [i, id] of ['hv1', 'hv2'].entries())
      await svc.create('chassis', { id, name: id, tunnelIp: `192.168.70.${i + 1}` });
    for (const id of ['red', 'blue']) await svc.create('tenant', { id, name: id });
    for (const [id, tenantId, vni, subnet] of [
      ['web', 'red', 100, '10.1.0.0/24'],
      ['db', 'red', 101, '10.2.0.0/24'],
      ['blue-net', 'blue', 200, '10.1.0.0/24'],
      ...(v6 ? ([['ops', 'red', 102, '10.3.0.0/24']] as const) : []),
    ] as const)
      await svc.create('network', { id, tenantId, name: id, vni, subnets: subnets(subnet) });
    await svc.create('router', {
      id: 'r1',
      tenantId: 'red',
      name: 'r1',
      interfaces: [
        { networkId: 'web', ip: '10.1.0.1' },
        { networkId: 'db', ip: '10.2.0.1' },
        ...(v6 ? [{ networkId: 'ops', ip: '10.3.0.1', ipv6: false as const }] : []),
      ],
    });
    let last = 0;
    for (const ep of [
      { networkId: 'web', id: 'w1', mac: '02:00:00:00:01:05', ip: '10.1.0.5', chassis: 'hv1', ofport: 1 },
      { networkId: 'db', id: 'd1', mac: '02:00:00:00:02:05', ip: '10.2.0.5', chassis: 'hv1', ofport: 2 },
      { networkId: 'db', id: 'd2', mac: '02:00:00:00:02:06', ip: '10.2.0.6', chassis: 'hv2', ofport: 1 },
      {
        networkId: 'blue-net',
        id: 'b1',
        mac: '02:00:00:00:03:05',
        ip: '10.1.0.5',
        chassis: 'hv1',
        ofport: 3,
      },
      ...(v6
        ? [
            {
              networkId: 'ops',
              id: 'o1',
              mac: '02:00:00:00:04:05',
              ip: '10.3.0.5',
              chassis: 'hv2',
              ofport: 2,
            },
          ]
        : []),
    ]) {
      last = (await plug(svc, facts, ep)).revision;
      if (v6) last = (await svc.update('endpoint', ep.id, { ips: twin(ep.ip) })).revision;
    }
    await t.applied(last);
  } catch (err) {
    await t.close();
    throw err;
  }
  const current = () => facts.current();
  return {
    ...t,
    facts,
    /** The trace's view of the controller for a probe sent in this network. */
    world: (networkId: string) => traceWorld(t.engine, current, svc, networkId),
    trace: tracer(t.engine, svc, current),
  };
}

/** An endpoint as the trace's destination lookups return it (tenant red). */
export const lookupEndpoint = (id: string, networkId: string, ips: string[], mac: string) => ({
  id,
  tenantId: 'red',
  networkId,
  ifaceId: `iface-${id}`,
  mac,
  ips,
  securityGroupIds: [],
});

/**
 * r1 as the trace's lookups see it, dual stack: IPv6 addresses on web and db, none on ops (so
 * ops's IPv6 subnet is no connected route), with these static routes.
 */
export const dualStackR1 = (routes: Array<{ destination: string; nexthop: string }>) => ({
  id: 'r1',
  interfaces: [
    {
      networkId: 'web',
      ip: '10.1.0.1',
      ipv6: 'fd00:1::1',
      mac: WEB_GATEWAY_MAC,
      subnets: ['10.1.0.0/24'],
      subnets6: ['fd00:1::/64'],
    },
    {
      networkId: 'db',
      ip: '10.2.0.1',
      ipv6: 'fd00:2::1',
      mac: DB_GATEWAY_MAC,
      subnets: ['10.2.0.0/24'],
      subnets6: ['fd00:2::/64'],
    },
    {
      networkId: 'ops',
      ip: '10.3.0.1',
      mac: '0a:57:72:00:00:66',
      subnets: ['10.3.0.0/24'],
      subnets6: ['fd00:3::/64'],
    },
  ],
  routes,
});
