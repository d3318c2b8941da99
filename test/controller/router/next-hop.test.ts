import { describe, expect, it } from 'vitest';
import type { Router } from '../../../controller/intent/model.js';
import { nextHopFor } from '../../../controller/router/next-hop.js';

/**
 * Router r1 joins web (10.1.0.0/24, and the IPv6 fd00:1::/64) and db (10.2.0.0/24 and
 * 10.20.0.0/16); routes vary per test.
 */
const SUBNETS: Record<string, string[]> = {
  web: ['10.1.0.0/24', 'fd00:1::/64'],
  db: ['10.2.0.0/24', '10.20.0.0/16'],
};
const subnetsOf = (id: string): readonly string[] => SUBNETS[id] ?? [];
const router = (routes: Router['routes'] = []): Pick<Router, 'interfaces' | 'routes'> => ({
  interfaces: [
    { networkId: 'web', ip: '10.1.0.1', mac: '0a:57:72:00:00:64' },
    { networkId: 'db', ip: '10.2.0.1', mac: '0a:57:72:00:00:65' },
  ],
  routes,
});

describe('nextHopFor', () => {
  it('a destination in a connected subnet is its own next hop, in any of the router networks', () => {
    for (const dst of ['10.1.0.5', '10.2.0.99', '10.20.200.1', '10.1.0.255']) {
      expect(nextHopFor(router(), subnetsOf, dst), dst).toBe(dst);
    }
  });

  it('no route: undefined (and no default route is assumed)', () => {
    for (const dst of ['192.0.2.1', '10.3.0.1', '8.8.8.8']) {
      expect(nextHopFor(router(), subnetsOf, dst), dst).toBeUndefined();
    }
    // A network the router is not on does not count, even if it is asked about.
    expect(nextHopFor(router(), (id) => (id === 'web' ? ['10.1.0.0/24'] : []), '10.2.0.5')).toBeUndefined();
  });

  it('a static route gives its next hop for the addresses it holds', () => {
    const r = router([{ destination: '192.168.0.0/16', nexthop: '10.2.0.254' }]);
    expect(nextHopFor(r, subnetsOf, '192.168.7.7')).toBe('10.2.0.254');
    expect(nextHopFor(r, subnetsOf, '192.169.0.1')).toBeUndefined();
  });

  it('the default route catches everything nothing longer holds', () => {
    const r = router([{ destination: '0.0.0.0/0', nexthop: '10.1.0.254' }]);
    expect(nextHopFor(r, subnetsOf, '8.8.8.8')).toBe('10.1.0.254');
    expect(nextHopFor(r, subnetsOf, '255.255.255.255')).toBe('10.1.0.254');
    // Connected subnets are longer than /0.
    expect(nextHopFor(r, subnetsOf, '10.2.0.5')).toBe('10.2.0.5');
  });

  it('longest prefix wins between connected subnets and static routes, whichever way round', () => {
    const r = router([
      // Shorter than db's connected /24, longer than its connected 10.20.0.0/16.
      { destination: '10.2.0.0/16', nexthop: '10.1.0.253' },
      { destination: '10.20.5.0/24', nexthop: '10.1.0.252' },
      { destination: '10.20.5.128/25', nexthop: '10.1.0.251' },
      { destination: '0.0.0.0/0', nexthop: '10.1.0.254' },
    ]);
    expect(nextHopFor(r, subnetsOf, '10.2.0.9')).toBe('10.2.0.9'); // connected /24 over static /16
    expect(nextHopFor(r, subnetsOf, '10.2.9.9')).toBe('10.1.0.253'); // static /16 over default
    expect(nextHopFor(r, subnetsOf, '10.20.4.1')).toBe('10.20.4.1'); // connected /16 over default
    expect(nextHopFor(r, subnetsOf, '10.20.5.1')).toBe('10.1.0.252'); // static /24 over connected /16
    expect(nextHopFor(r, subnetsOf, '10.20.5.200')).toBe('10.1.0.251'); // /25 over /24
    expect(nextHopFor(r, subnetsOf, '172.16.0.1')).toBe('10.1.0.254');
  });

  it('the order of routes does not matter, only their lengths', () => {
    const routes = [
      { destination: '0.0.0.0/0', nexthop: '10.1.0.254' },
      { destination: '192.168.0.0/16', nexthop: '10.1.0.253' },
      { destination: '192.168.1.0/24', nexthop: '10.1.0.252' },
    ];
    for (const order of [routes, [...routes].reverse(), [routes[1]!, routes[2]!, routes[0]!]]) {
      expect(nextHopFor(router(order), subnetsOf, '192.168.1.1')).toBe('10.1.0.252');
      expect(nextHopFor(router(order), subnetsOf, '192.168.2.1')).toBe('10.1.0.253');
      expect(nextHopFor(router(order), subnetsOf, '192.169.0.1')).toBe('10.1.0.254');
    }
  });

  it('a host route (/32) beats a connected subnet', () => {
    const r = router([{ destination: '10.2.0.77/32', nexthop: '10.2.0.254' }]);
    expect(nextHopFor(r, subnetsOf, '10.2.0.77')).toBe('10.2.0.254');
    expect(nextHopFor(r, subnetsOf, '10.2.0.78')).toBe('10.2.0.78');
  });

  it('IPv6 subnets hold no IPv4 destination, and an IPv6 destination has no next hop', () => {
    // Only IPv6 on web: its IPv4 addresses have no route.
    const v6only = (id: string) => (id === 'web' ? ['fd00:1::/64'] : []);
    expect(nextHopFor(router(), v6only, '10.1.0.5')).toBeUndefined();
    // Even a ::/0-looking subnet does not capture IPv4.
    expect(nextHopFor(router(), () => ['::/0'], '10.1.0.5')).toBeUndefined();
    // The IPv4 default route does not catch an IPv6 destination.
    const v4only = (id: string) => (SUBNETS[id] ?? []).filter((c) => !c.includes(':'));
    expect(
      nextHopFor(router([{ destination: '0.0.0.0/0', nexthop: '10.1.0.254' }]), v4only, 'fd00:9::5'),
    ).toBeUndefined();
  });

  it('IPv6: only subnets of networks where the router has an IPv6 address are connected (as its flows route)', () => {
    // web has the router's IPv6 address; db holds fd00:ffff:0:1::/64 but the router has none there.
    const subnets = (id: string) => (id === 'web' ? ['fd00:1::/64'] : ['fd00:ffff:0:1::/64']);
    const r: Pick<Router, 'interfaces' | 'routes'> = {
      interfaces: [
        { networkId: 'web', ip: '10.1.0.1', ipv6: 'fd00:1::1', mac: '0a:57:72:00:00:64' },
        { networkId: 'db', ip: '10.2.0.1', mac: '0a:57:72:00:00:65' },
      ],
      routes: [{ destination: 'fd00:ffff::/48', nexthop: 'fd00:1::6' }],
    };
    // The static route's next hop, not the destination in db (which the router does not route into).
    expect(nextHopFor(r, subnets, 'fd00:ffff:0:1::9')).toBe('fd00:1::6');
    expect(nextHopFor(r, subnets, 'fd00:1::9')).toBe('fd00:1::9');
    // IPv4 is unaffected by the IPv6 address.
    expect(nextHopFor(r, () => ['10.2.0.0/24'], '10.2.0.5')).toBe('10.2.0.5');
  });

  it('routes absent (a partial router) count as none', () => {
    const r = { interfaces: router().interfaces } as unknown as Pick<Router, 'interfaces' | 'routes'>;
    expect(nextHopFor(r, subnetsOf, '10.1.0.5')).toBe('10.1.0.5');
    expect(nextHopFor(r, subnetsOf, '192.0.2.1')).toBeUndefined();
  });
});
