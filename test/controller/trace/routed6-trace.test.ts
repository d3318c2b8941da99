import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routerLinkLocal } from '../../../controller/intent/model-router.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { type DestinationLookups, destinationOf } from '../../../controller/trace/destination.js';
import {
  DB_GATEWAY_MAC,
  dualStackR1,
  FROM_W1,
  lookupEndpoint,
  routedWorld,
  TUNNEL_PORT,
  W1_MAC,
  WEB_GATEWAY_MAC,
} from './routed-fixture.js';
import { errorOf, path } from './trace-fixture.js';

/**
 * `weft trace` of IPv6 through router r1 (routed-fixture.ts, dual stack: web fd00:1::/64 with r1
 * at fd00:1::1, db fd00:2::/64 with r1 at fd00:2::1, ops on r1 without an IPv6 address, blue-net
 * without a router), over the desired state the real engine computed: the VM sends off-link IPv6
 * to its gateway MAC, where its advertised default route (the router's link-local address) leads.
 */
let w: Awaited<ReturnType<typeof routedWorld>>;
beforeAll(async () => {
  w = await routedWorld({ ipv6: true });
});
afterAll(async () => {
  await w?.close();
});

const WEB_LINK_LOCAL = routerLinkLocal(WEB_GATEWAY_MAC);
const HINT = 'give dstMac to trace to a host outside the intent (behind a VLAN binding)';

describe('weft trace of IPv6 through a router', () => {
  it('routes a ping to another network across the tunnel: hop limit 63, gateway MAC as source, db VNI', () => {
    const a = w.trace('w1', { to: 'fd00:2::6' });
    expect(a.verdict).toBe('delivered');
    expect(a.summary).toBe(
      'ping from w1 to fd00:2::6: routed by r1 from web to db, delivered to d2 on hv2 through the tunnel',
    );
    expect(a).toMatchObject({ router: 'r1', deliveredTo: ['d2'] });
    expect(a.packet).toMatchObject({
      eth_src: W1_MAC,
      eth_dst: WEB_GATEWAY_MAC,
      eth_type: '0x86dd',
      ipv6_src: 'fd00:1::5',
      nw_ttl: '64',
    });
    expect(a.received).toEqual({
      eth_src: DB_GATEWAY_MAC,
      eth_dst: '02:00:00:00:02:06',
      eth_type: '0x86dd',
      ipv6_src: 'fd00:1::5',
      ipv6_dst: 'fd00:2::6',
      ip_proto: '58',
      nw_ttl: '63',
      icmpv6_type: '128',
      icmpv6_code: '0',
    });
    expect(path(a, 0)).toEqual([
      ...FROM_W1,
      `${TABLE.L3_ROUTE}:router/r1`,
      `${TABLE.L3_NEIGHBOR}:endpoint/d2`,
      `${TABLE.L2_LOOKUP}:endpoint/d2`,
    ]);
    const route = a.hops[0]!.steps.find((s) => s.table === TABLE.L3_ROUTE)!;
    // db's /64 route (100 + prefix length).
    expect(route.flow).toMatchObject({ app: 'router', priority: 164 });
    expect(route.flow!.actions).toMatch(
      /^dec_ttl,set_field:0a:57:72:00:00:65->eth_src,write_metadata:0x65\//,
    );
    expect(a.hops[0]!.outputs).toEqual([
      { to: 'tunnel', port: TUNNEL_PORT, chassis: 'hv2', tunnelIp: '192.168.70.2', vni: 101 },
    ]);
    expect(a.hops[1]!.outputs).toEqual([{ to: 'endpoint', port: 1, endpoint: 'd2' }]);
  });

  it('routes TCP the other way on one hypervisor, and a hop limit of 2 arrives as 1', () => {
    const a = w.trace('d1', { to: 'fd00:1::5', protocol: 'tcp', port: 443 });
    expect(a.summary).toBe(
      'tcp from d1 to [fd00:1::5]:443: routed by r1 from db to web, delivered to w1 on hv1',
    );
    expect(a.packet.eth_dst).toBe(DB_GATEWAY_MAC);
    expect(a.hops).toHaveLength(1);
    expect(a.received).toMatchObject({
      eth_src: WEB_GATEWAY_MAC,
      eth_dst: W1_MAC,
      nw_ttl: '63',
      tcp_dst: '443',
    });

    const low = w.trace('w1', { to: 'fd00:2::6', ttl: 2 });
    expect(low).toMatchObject({ verdict: 'delivered', router: 'r1', received: { nw_ttl: '1' } });
    const out = w.trace('w1', { to: 'fd00:2::6', ttl: 1 });
    expect(out).toMatchObject({ verdict: 'answered', router: 'r1', icmpError: 'time-exceeded' });
    // ICMPv6 time exceeded (3), from r1's address on web.
    expect(out.received).toMatchObject({ ipv6_src: 'fd00:1::1', ipv6_dst: 'fd00:1::5', icmpv6_type: '3' });
  });

  it("answers a ping to each of the router's IPv6 addresses in place, its link-local one too", () => {
    for (const to of ['fd00:1::1', 'fd00:2::1', WEB_LINK_LOCAL]) {
      const a = w.trace('w1', { to });
      expect(a.verdict, to).toBe('answered');
      expect(a.summary, to).toBe(
        `ping from w1 to ${to}: answered by router r1 on hv1 (its echo reply goes back out of the sender's port)`,
      );
      expect(a, to).toMatchObject({ router: 'r1', deliveredTo: [] });
      expect(a.packet.eth_dst, to).toBe(WEB_GATEWAY_MAC);
      expect(a.hops, to).toHaveLength(1);
      expect(a.hops[0]!.outputs, to).toEqual([{ to: 'sender', port: 1 }]);
      expect(path(a, 0), to).toEqual([...FROM_W1, `${TABLE.L3_ROUTE}:router/r1`]);
      expect(a.hops[0]!.steps.at(-1)!.flow!.priority, to).toBe(300);
      expect(a.received, to).toMatchObject({
        eth_src: WEB_GATEWAY_MAC,
        eth_dst: W1_MAC,
        ipv6_src: to,
        ipv6_dst: 'fd00:1::5',
        icmpv6_type: '129',
      });
    }
    // Anything but a ping to it goes up before routing: port unreachable, from the address asked.
    const ssh = w.trace('w1', { to: 'fd00:2::1', protocol: 'tcp', port: 22 });
    expect(ssh).toMatchObject({ verdict: 'answered', router: 'r1', icmpError: 'port-unreachable' });
    expect(ssh.received).toMatchObject({ ipv6_src: 'fd00:2::1', icmpv6_type: '1', icmpv6_code: '4' });
  });

  it("refuses the router's link-local address on another network: link-local is on-link (fe80::/64)", () => {
    const dbLinkLocal = routerLinkLocal(DB_GATEWAY_MAC);
    const err = errorOf(() => w.trace('w1', { to: dbLinkLocal }));
    expect(err).toMatchObject({ code: 'invalid', field: 'to' });
    expect(err.message).toBe(
      `to: no endpoint of network web or of the networks router r1 joins has address ${dbLinkLocal}; it is in web's own subnet fe80::/64, so the VM would look it up by neighbour solicitation rather than send it to its gateway; ${HINT}`,
    );
  });

  it('sends an address in no subnet of the router to the gateway, whose no-route flow sends it up: net unreachable', () => {
    const a = w.trace('w1', { to: '2001:db8::7' });
    expect(a.packet.eth_dst).toBe(WEB_GATEWAY_MAC);
    expect(path(a, 0)).toEqual([...FROM_W1, `${TABLE.L3_ROUTE}:router/r1`]);
    const last = a.hops[0]!.steps.at(-1)!;
    expect(last.flow).toMatchObject({ priority: 10, actions: 'CONTROLLER:65535' });
    expect(a.hops[0]!.outputs).toMatchObject([{ to: 'controller' }]);
    expect(a).toMatchObject({
      verdict: 'answered',
      router: 'r1',
      icmpError: 'net-unreachable',
      deliveredTo: [],
    });
    expect(a.summary).toContain(
      'answered by router r1 with ICMPv6 no route (router r1 has no route to 2001:db8::7)',
    );
    // ICMPv6 destination unreachable, no route (1/0), from r1's address on web.
    expect(a.received).toMatchObject({
      eth_src: WEB_GATEWAY_MAC,
      eth_dst: W1_MAC,
      ipv6_src: 'fd00:1::1',
      ipv6_dst: 'fd00:1::5',
      icmpv6_type: '1',
      icmpv6_code: '0',
    });
  });

  it('does not route IPv6 into a network where the router has no IPv6 address, even to its endpoint', () => {
    const a = w.trace('w1', { to: 'fd00:3::5' });
    expect(a.packet.eth_dst).toBe(WEB_GATEWAY_MAC);
    expect(a).toMatchObject({ verdict: 'answered', icmpError: 'net-unreachable', deliveredTo: [] });
    expect(a.hops.flatMap((h) => h.outputs)).toMatchObject([{ to: 'controller' }]);
    // Its IPv4 twin is routed.
    expect(w.trace('w1', { to: '10.3.0.5' }).summary).toBe(
      'ping from w1 to 10.3.0.5: routed by r1 from web to ops, delivered to o1 on hv2 through the tunnel',
    );
  });

  it('refuses IPv6 off a network with no IPv6 gateway: no router, or no IPv6 address of it there', () => {
    const ops = errorOf(() => w.trace('o1', { to: 'fd00:2::6' }));
    expect(ops).toMatchObject({ code: 'invalid', field: 'to' });
    expect(ops.message).toBe(
      `to: no endpoint of network ops has address fd00:2::6, and ops has no IPv6 gateway (router r1 has no IPv6 address there); ${HINT}`,
    );
    // Not even the router's own addresses: it answers no ND there.
    for (const to of ['fd00:1::1', routerLinkLocal('0a:57:72:00:00:66')])
      expect(errorOf(() => w.trace('o1', { to })).message, to).toMatch(/ops has no IPv6 gateway/);
    const blue = errorOf(() => w.trace('b1', { to: 'fd00:2::6' }));
    expect(blue.message).toBe(
      `to: no endpoint of network blue-net has address fd00:2::6, and blue-net has no IPv6 gateway (no router joins it); ${HINT}`,
    );
    // IPv4 keeps its words, and ops still routes it.
    expect(errorOf(() => w.trace('b1', { to: '10.2.0.5' })).message).toBe(
      `to: no endpoint of network blue-net has address 10.2.0.5; ${HINT}`,
    );
    expect(w.trace('o1', { to: '10.2.0.6' })).toMatchObject({ verdict: 'delivered', router: 'r1' });

    // Sent to the gateway MAC all the same: r1's IPv4-only flows there drop it.
    const forced = w.trace('o1', { to: 'fd00:2::6', dstMac: '0a:57:72:00:00:66' });
    expect(forced).toMatchObject({
      verdict: 'dropped',
      droppedAt: { chassis: 'hv2', table: TABLE.L3_ROUTE, owner: 'router/r1' },
    });
    expect(forced.router).toBeUndefined();
  });
});

describe('destinationOf with the IPv6 subnets of the router networks known', () => {
  const w1 = lookupEndpoint('w1', 'web', ['fd00:1::5'], W1_MAC);
  const d2 = lookupEndpoint('d2', 'db', ['fd00:2::6'], '02:00:00:00:02:06');
  const lookups: DestinationLookups = {
    endpointByIp: (net, ip) => [w1, d2].find((e) => e.networkId === net && e.ips.includes(ip)) as never,
    routerOf: () => dualStackR1([{ destination: '0.0.0.0/0', nexthop: '10.2.0.6' }]),
  };
  const v6 = (to: string) => destinationOf(lookups, w1 as never, { to, v6: true, arp: false });

  it('routes to the endpoint holding the address, and into the network whose subnet holds an unheld one', () => {
    expect(v6('fd00:2::6')).toEqual({
      dstMac: WEB_GATEWAY_MAC,
      target: d2,
      gateway: {
        router: 'r1',
        from: 'web',
        into: 'db',
        subnets: ['10.1.0.0/24', 'fd00:1::/64', '10.2.0.0/24', 'fd00:2::/64', '10.3.0.0/24', 'fd00:3::/64'],
      },
    });
    expect(v6('fd00:2::99').gateway).toMatchObject({ into: 'db' });
    // Not into ops (no IPv6 address of r1 there), nor by the IPv4 default route.
    for (const to of ['fd00:3::9', '2001:db8::1']) {
      const d = v6(to);
      expect(d.dstMac, to).toBe(WEB_GATEWAY_MAC);
      expect(d.gateway, to).not.toHaveProperty('into');
      expect(d.gateway, to).not.toHaveProperty('via');
    }
    expect(v6(WEB_LINK_LOCAL).gateway).toMatchObject({ routerAddress: true });
  });

  it("refuses an unheld address of the sender's own IPv6 subnet: the VM would solicit it", () => {
    const err = errorOf(() => v6('fd00:1::99'));
    expect(err.message).toBe(
      `to: no endpoint of network web or of the networks router r1 joins has address fd00:1::99; it is in web's own subnet fd00:1::/64, so the VM would look it up by neighbour solicitation rather than send it to its gateway; ${HINT}`,
    );
    // Asked for through the gateway explicitly, it goes there.
    const via = destinationOf(lookups, w1 as never, {
      to: 'fd00:1::99',
      v6: true,
      arp: false,
      dstMac: WEB_GATEWAY_MAC,
    });
    expect(via.gateway).toMatchObject({ router: 'r1', into: 'web' });
  });
});
