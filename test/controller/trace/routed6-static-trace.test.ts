import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { type DestinationLookups, destinationOf } from '../../../controller/trace/destination.js';
import {
  DB_GATEWAY_MAC,
  dualStackR1,
  lookupEndpoint,
  routedWorld,
  W1_MAC,
  WEB_GATEWAY_MAC,
} from './routed-fixture.js';

/**
 * `weft trace` of IPv6 by a static route of r1 (routed-fixture.ts, dual stack): the VM sends it to
 * its gateway, the router to the route's next hop endpoint, as for IPv4.
 */

describe('destinationOf with IPv6 static routes', () => {
  const w1 = lookupEndpoint('w1', 'web', ['fd00:1::5'], W1_MAC);
  const d2 = lookupEndpoint('d2', 'db', ['10.2.0.6', 'fd00:2::6'], '02:00:00:00:02:06');
  const lookups: DestinationLookups = {
    endpointByIp: (net, ip) => [w1, d2].find((e) => e.networkId === net && e.ips.includes(ip)) as never,
    routerOf: () =>
      dualStackR1([
        { destination: '::/0', nexthop: 'fd00:2::6' },
        { destination: '0.0.0.0/0', nexthop: '10.2.0.6' },
      ]),
  };
  const to = (address: string, v6 = true) =>
    destinationOf(lookups, w1 as never, { to: address, v6, arp: false });
  const subnets = ['10.1.0.0/24', 'fd00:1::/64', '10.2.0.0/24', 'fd00:2::/64', '10.3.0.0/24', 'fd00:3::/64'];

  it('sends what only the IPv6 default route holds to its gateway, into the next hop network, via the next hop', () => {
    expect(to('2001:db8::1')).toEqual({
      dstMac: WEB_GATEWAY_MAC,
      target: d2,
      gateway: { router: 'r1', from: 'web', into: 'db', via: 'fd00:2::6', subnets },
    });
    // ops's IPv6 subnet is not routed into (no IPv6 address of r1 there): the default route takes it.
    expect(to('fd00:3::9').gateway).toMatchObject({ into: 'db', via: 'fd00:2::6' });
  });

  it('lets a connected IPv6 subnet win over the shorter static route, and keeps IPv4 to its own route', () => {
    const connected = to('fd00:2::99');
    expect(connected.gateway).toMatchObject({ into: 'db' });
    expect(connected.gateway).not.toHaveProperty('via');
    expect(to('192.0.2.1', false).gateway).toMatchObject({ into: 'db', via: '10.2.0.6' });
  });
});

describe('weft trace of IPv6 by a static route', () => {
  let w: Awaited<ReturnType<typeof routedWorld>>;
  beforeAll(async () => {
    w = await routedWorld({ ipv6: true });
  });
  afterAll(async () => {
    await w?.close();
  });

  it('follows ::/0 and a longer /48 to their next hop VMs, and answers no route once the routes are gone', async () => {
    // d1 (fd00:2::5, db, hv1) and d2 (fd00:2::6, db, hv2) stand for appliances.
    const routes = [
      { destination: '::/0', nexthop: 'fd00:2::5' },
      { destination: 'fd00:ffff::/48', nexthop: 'fd00:2::6' },
    ];
    await w.applied((await w.svc.update('router', 'r1', { routes })).revision);
    try {
      const a = w.trace('w1', { to: '2001:db8::1' });
      expect(a.verdict).toBe('delivered');
      expect(a.summary).toBe(
        'ping from w1 to 2001:db8::1: routed by r1 from web to its next hop fd00:2::5 in db, delivered to d1 on hv1',
      );
      expect(a.received).toMatchObject({
        eth_src: DB_GATEWAY_MAC,
        eth_dst: '02:00:00:00:02:05',
        ipv6_dst: '2001:db8::1',
        nw_ttl: '63',
      });
      const route = a.hops[0]!.steps.find((s) => s.table === TABLE.L3_ROUTE)!;
      expect(route.flow).toMatchObject({ app: 'router', priority: 100 });
      const longer = w.trace('w1', { to: 'fd00:ffff::1', protocol: 'tcp', port: 443 });
      expect(longer.summary).toBe(
        'tcp from w1 to [fd00:ffff::1]:443: routed by r1 from web to its next hop fd00:2::6 in db, delivered to d2 on hv2 through the tunnel',
      );
      expect(longer.hops[0]!.steps.find((s) => s.table === TABLE.L3_ROUTE)!.flow).toMatchObject({
        priority: 148,
      });
      // A connected subnet is still longer than ::/0.
      expect(w.trace('w1', { to: 'fd00:2::6' }).summary).toContain(
        'routed by r1 from web to db, delivered to d2',
      );
    } finally {
      await w.applied((await w.svc.update('router', 'r1', { routes: [] })).revision);
    }
    expect(w.trace('w1', { to: '2001:db8::1' })).toMatchObject({
      verdict: 'answered',
      icmpError: 'net-unreachable',
    });
  });
});
