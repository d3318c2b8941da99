import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { icmpErrorFor, type SentUp } from '../../../controller/router/icmp-decision.js';

/** The one rule the responder and `weft trace` share: which error a packet sent up gets. */
const route = (over: Partial<SentUp>): SentUp => ({
  table: TABLE.L3_ROUTE,
  toRouter: false,
  protocol: 1,
  ttl: 64,
  ...over,
});

describe('icmpErrorFor', () => {
  it("answers a packet to the router's own address by its protocol, whatever its TTL; ICMP gets nothing", () => {
    for (const ttl of [64, 1, 0]) {
      expect(icmpErrorFor(route({ toRouter: true, protocol: 6, ttl })), `tcp ${ttl}`).toBe(
        'port-unreachable',
      );
      expect(icmpErrorFor(route({ toRouter: true, protocol: 17, ttl })), `udp ${ttl}`).toBe(
        'port-unreachable',
      );
      expect(icmpErrorFor(route({ toRouter: true, protocol: 47, ttl })), `gre ${ttl}`).toBe(
        'protocol-unreachable',
      );
      expect(icmpErrorFor(route({ toRouter: true, protocol: 1, ttl })), `icmp ${ttl}`).toBeUndefined();
    }
  });

  it('answers time exceeded at TTL 1 or 0 and net unreachable above, for any protocol', () => {
    for (const protocol of [1, 6, 17, 47]) {
      expect(icmpErrorFor(route({ protocol, ttl: 1 }))).toBe('time-exceeded');
      expect(icmpErrorFor(route({ protocol, ttl: 0 }))).toBe('time-exceeded');
      expect(icmpErrorFor(route({ protocol, ttl: 2 }))).toBe('net-unreachable');
      expect(icmpErrorFor(route({ protocol, ttl: 255 }))).toBe('net-unreachable');
    }
  });

  it("answers host unreachable for l3-neighbor's miss, whatever else the packet is", () => {
    for (const [toRouter, protocol, ttl] of [
      [false, 1, 64],
      [false, 6, 1],
      [true, 1, 0],
    ] as const) {
      expect(icmpErrorFor({ table: TABLE.L3_NEIGHBOR, toRouter, protocol, ttl })).toBe('host-unreachable');
    }
  });

  it('takes ICMPv6 (58) for the ping protocol of IPv6, leaving IPv4 as it was', () => {
    const v6 = (over: Partial<SentUp>) => icmpErrorFor(route({ family: 6, toRouter: true, ...over }));
    expect(v6({ protocol: 58 })).toBeUndefined();
    expect(v6({ protocol: 1 })).toBe('protocol-unreachable');
    expect(v6({ protocol: 6 })).toBe('port-unreachable');
    expect(v6({ protocol: 17, ttl: 0 })).toBe('port-unreachable');
    expect(v6({ protocol: 47 })).toBe('protocol-unreachable');
    expect(v6({ toRouter: false, protocol: 58, ttl: 1 })).toBe('time-exceeded');
    expect(v6({ toRouter: false, protocol: 58, ttl: 2 })).toBe('net-unreachable');
    expect(
      icmpErrorFor({ table: TABLE.L3_NEIGHBOR, toRouter: false, protocol: 58, ttl: 63, family: 6 }),
    ).toBe('host-unreachable');
    // IPv4, said or not: ICMP is the ping protocol, 58 is just another protocol.
    for (const family of [4, undefined] as const) {
      const v4 = route({ toRouter: true, ...(family ? { family } : {}) });
      expect(icmpErrorFor({ ...v4, protocol: 1 })).toBeUndefined();
      expect(icmpErrorFor({ ...v4, protocol: 58 })).toBe('protocol-unreachable');
    }
  });
});
