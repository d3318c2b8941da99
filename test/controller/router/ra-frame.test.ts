import { describe, expect, it } from 'vitest';
import { icmpv6Checksum } from '../../../controller/inet-checksum.js';
import { routerMac } from '../../../controller/intent/model-router.js';
import {
  buildRouterAdvertisement,
  isRouterSolicitationFrame,
  networkAdvertisement,
  parseRouterSolicitation,
  RaParseError,
  removedIpv6Subnets,
} from '../../../controller/router/ra-frame.js';
import { decodeRa, pfx, prefixInfo, rsFrame, VM_LL, VM_MAC, v6 } from './ra-frames.js';

/** The gateway of the network with VNI 961: 0a:57:72:00:03:c1, link-local fe80::857:72ff:fe00:3c1. */
const GW = routerMac(961);
const GW_LL = 'fe80::857:72ff:fe00:3c1';

describe('router advertisement frames', () => {
  it('builds an advertisement to the asker that decodes back field by field', () => {
    const frame = buildRouterAdvertisement({
      gatewayMac: GW,
      to: { mac: VM_MAC, ip: VM_LL },
      lifetimeSeconds: 1800,
      mtu: 1450,
      prefixes: ['10.1.0.0/24', 'fd00:1::/64', '2001:db8:0:80::/57'],
    });
    const ra = decodeRa(frame);
    expect(ra).toEqual({
      frameLength: 14 + 40 + 16 + 8 + 8 + 2 * 32,
      ethDst: VM_MAC,
      ethSrc: GW,
      ethertype: 0x86dd,
      version: 6,
      trafficClassFlow: 0,
      payloadLength: 16 + 8 + 8 + 64,
      nextHeader: 58,
      hopLimit: 255,
      ipSrc: v6(GW_LL),
      ipDst: v6(VM_LL),
      type: 134,
      code: 0,
      curHopLimit: 64,
      managed: false,
      other: false,
      flagsRest: 0,
      routerLifetime: 1800,
      reachableTime: 0,
      retransTimer: 0,
      options: [
        { type: 1, mac: GW },
        { type: 5, reserved: 0, mtu: 1450 },
        // One per IPv6 subnet (the IPv4 one has none): on-link, no SLAAC (port security would drop it).
        {
          type: 3,
          prefixLength: 64,
          onLink: true,
          autonomous: false,
          otherFlags: 0,
          valid: 1800,
          preferred: 1800,
          reserved2: 0,
          prefix: v6('fd00:1::'),
        },
        {
          type: 3,
          prefixLength: 57,
          onLink: true,
          autonomous: false,
          otherFlags: 0,
          valid: 1800,
          preferred: 1800,
          reserved2: 0,
          prefix: v6('2001:db8:0:80::'),
        },
      ],
      checksumHolds: true,
    });
    // The controller's own checksum helper agrees with the test's independent sum.
    expect(icmpv6Checksum(frame, 22, 38, 54, frame.length)).toBe(0);
  });

  it('goes to all nodes by default, with the default lifetime, and names no MTU or prefix it was not given', () => {
    const ra = decodeRa(buildRouterAdvertisement({ gatewayMac: GW.toUpperCase() }));
    expect(ra).toMatchObject({
      ethDst: '33:33:00:00:00:01',
      ethSrc: GW,
      ipSrc: v6(GW_LL),
      ipDst: v6('ff02::1'),
      routerLifetime: 1800,
      options: [{ type: 1, mac: GW }],
      checksumHolds: true,
    });
  });

  it('names withdrawn prefixes on-link with valid and preferred lifetime 0, after the others', () => {
    const ra = decodeRa(
      buildRouterAdvertisement({
        gatewayMac: GW,
        prefixes: ['fd00:1::/64'],
        prefixLifetimeSeconds: 600,
        withdrawnPrefixes: ['10.9.0.0/24', 'fd00:9::/64'],
      }),
    );
    expect(ra.checksumHolds).toBe(true);
    expect(ra.options[2]).toEqual({
      type: 3,
      prefixLength: 64,
      onLink: true,
      autonomous: false,
      otherFlags: 0,
      valid: 0,
      preferred: 0,
      reserved2: 0,
      prefix: v6('fd00:9::'),
    });
    expect(prefixInfo(ra)).toEqual([
      [pfx('fd00:1::/64'), 600, 600, true],
      [pfx('fd00:9::/64'), 0, 0, true],
    ]);
  });

  it("a network's advertisement carries its MTU and IPv6 subnets, valid as long as the router", () => {
    const net = { mtu: 1400, subnets: ['fd00:7::/64', '10.7.0.0/24'] };
    const ra = decodeRa(networkAdvertisement(net, GW, 5400));
    expect(ra.options).toEqual([
      { type: 1, mac: GW },
      { type: 5, reserved: 0, mtu: 1400 },
      expect.objectContaining({ type: 3, prefix: v6('fd00:7::'), prefixLength: 64 }),
    ]);
    // Not 30 days: a prefix weft stops naming lapses with the router.
    expect(prefixInfo(ra)).toEqual([[pfx('fd00:7::/64'), 5400, 5400, true]]);
  });

  it('sets the managed flag where weft serves DHCPv6 (hosts ask it for their addresses), other only with a search domain to tell, not in a withdrawal', () => {
    const net = { mtu: 1400, subnets: ['fd00:7::/64'] };
    const dhcp = { enabled: true, dnsServers: [] as string[], leaseSeconds: 3600 };
    const flags = (d?: typeof dhcp & { ipv6?: boolean; domainName?: string }, lifetime = 1800) => {
      const ra = decodeRa(networkAdvertisement({ ...net, ...(d ? { dhcp: d } : {}) }, GW, lifetime));
      expect(ra.checksumHolds).toBe(true);
      expect(ra.flagsRest).toBe(0);
      return [ra.managed, ra.other];
    };
    expect(flags()).toEqual([false, false]);
    // DHCP for IPv4 only: the hosts' IPv6 is none of its business.
    expect(flags(dhcp)).toEqual([false, false]);
    expect(flags({ ...dhcp, ipv6: true, enabled: false })).toEqual([false, false]);
    expect(flags({ ...dhcp, ipv6: true })).toEqual([true, false]);
    expect(flags({ ...dhcp, ipv6: true, domainName: 'lab.example' })).toEqual([true, true]);
    // IPv6 DNS servers are other configuration too; IPv4 ones are DHCPv4's.
    expect(flags({ ...dhcp, ipv6: true, dnsServers: ['fd00:7::53'] })).toEqual([true, true]);
    expect(flags({ ...dhcp, ipv6: true, dnsServers: ['10.7.0.53'] })).toEqual([true, false]);
    expect(flags({ ...dhcp, ipv6: true, domainName: 'lab.example' }, 0)).toEqual([false, false]);
  });

  it('names the subnets a network lost with lifetime 0, unless it has them (again)', () => {
    const net = { mtu: 1400, subnets: ['fd00:7::/64', '10.7.0.0/24'] };
    const removed = ['fd00:1::/64', '10.1.0.0/24', 'fd00:7:0::/64', '2001:db8::/48'];
    expect(prefixInfo(decodeRa(networkAdvertisement(net, GW, 1800, undefined, removed)))).toEqual([
      [pfx('fd00:7::/64'), 1800, 1800, true],
      [pfx('fd00:1::/64'), 0, 0, true],
      [pfx('2001:db8::/48'), 0, 0, true],
    ]);
  });

  it('a withdrawal (lifetime 0) names every IPv6 subnet of the network, and those it lost, with lifetime 0', () => {
    const net = { mtu: 1400, subnets: ['fd00:7::/64', '10.7.0.0/24'] };
    const gone = decodeRa(networkAdvertisement(net, GW, 0, { mac: VM_MAC, ip: VM_LL }, ['fd00:8::/64']));
    expect(gone).toMatchObject({ routerLifetime: 0, ethDst: VM_MAC, checksumHolds: true });
    expect(gone.options.map((o) => o.type)).toEqual([1, 5, 3, 3]);
    expect(prefixInfo(gone)).toEqual([
      [pfx('fd00:7::/64'), 0, 0, true],
      [pfx('fd00:8::/64'), 0, 0, true],
    ]);
  });

  it('tells the IPv6 subnets one list has and another lacks, however spelt', () => {
    expect(
      removedIpv6Subnets(
        ['10.1.0.0/24', 'fd00:1::/64', 'fd00:2::/64', 'fd00:3::/64', 'nope'],
        ['fd00:0002::/64', 'fd00:3::/56'],
      ),
    ).toEqual(['fd00:1::/64', 'fd00:3::/64']);
  });

  it('refuses what it cannot build', () => {
    expect(() => buildRouterAdvertisement({ gatewayMac: 'nope' })).toThrow(/not a MAC address/);
    expect(() => buildRouterAdvertisement({ gatewayMac: GW, lifetimeSeconds: 70_000 })).toThrow(/0 to 65535/);
    expect(() => buildRouterAdvertisement({ gatewayMac: GW, prefixes: ['fd00::/129'] })).toThrow(/prefix/);
    expect(() => buildRouterAdvertisement({ gatewayMac: GW, withdrawnPrefixes: ['fd00::1/64'] })).toThrow(
      /host bits/,
    );
    expect(() => buildRouterAdvertisement({ gatewayMac: GW, prefixLifetimeSeconds: -1 })).toThrow(/2\^32-1/);
    expect(() => buildRouterAdvertisement({ gatewayMac: GW, to: { mac: VM_MAC, ip: '10.0.0.1' } })).toThrow(
      /not an IPv6 address/,
    );
  });
});

describe('router solicitation frames', () => {
  it('reads a valid solicitation: addresses, and its source link-layer option', () => {
    expect(parseRouterSolicitation(rsFrame({ sll: VM_MAC }))).toEqual({
      ethSrc: VM_MAC,
      ethDst: '33:33:00:00:00:02',
      ipSrc: VM_LL,
      ipDst: 'ff02::2',
      sourceLinkLayer: VM_MAC,
    });
    // From the unspecified address (no SLL then), tagged, padded: still valid.
    expect(parseRouterSolicitation(rsFrame({ ipSrc: '::', vlan: 30, padding: 6 }))).toEqual({
      ethSrc: VM_MAC,
      ethDst: '33:33:00:00:00:02',
      ipSrc: '::',
      ipDst: 'ff02::2',
    });
  });

  it.each([
    ['hop limit 64', { hopLimit: 64 }, 'hop limit 64, not 255'],
    ['hop limit 254', { hopLimit: 254 }, 'hop limit 254, not 255'],
    ['a bad checksum', { checksum: 0x1234 }, 'ICMPv6 checksum 0x1234 does not hold'],
    ['another ICMPv6 type', { type: 135 }, 'ICMPv6 type 135 is not a router solicitation (133)'],
    ['code 1', { code: 1 }, 'ICMPv6 code 1, not 0'],
    [
      'a hop-by-hop header first',
      { nextHeader: 0 },
      'next header 0 is not ICMPv6 (extension headers are not followed)',
    ],
    ['a payload length past the frame', { payloadLength: 40 }, 'IPv6 payload length 40 runs past'],
    ['a message shorter than 8 bytes', { payloadLength: 4 }, 'ICMPv6 message of 4 bytes is shorter'],
    ['an option of length 0', { options: [1, 0, 0, 0, 0, 0, 0, 0] }, 'option 1 has length 0'],
    [
      'an option past the end',
      { options: [1, 2, 0, 0, 0, 0, 0, 0] },
      'option 1 of 16 bytes runs past the packet',
    ],
    ['an option header cut short', { options: [1] }, 'option header cut short'],
    [
      'an SLL from ::',
      { ipSrc: '::', sll: VM_MAC },
      'a source link-layer address option from the unspecified address',
    ],
  ])('refuses %s, saying why', (_what, spec, reason) => {
    const frame = rsFrame(spec);
    expect(() => parseRouterSolicitation(frame)).toThrow(RaParseError);
    expect(() => parseRouterSolicitation(frame)).toThrow(reason);
  });

  it('refuses frames that are no IPv6 at all, or cut short', () => {
    const good = rsFrame();
    const cases: Array<[Buffer, string]> = [
      [good.subarray(0, 10), 'ethertype none is not IPv6'],
      [
        Buffer.from([...good.subarray(0, 12), 0x08, 0x00, ...good.subarray(14)]),
        'ethertype 0x800 is not IPv6',
      ],
      [good.subarray(0, 40), 'ends inside the IPv6 header'],
      [good.subarray(0, good.length - 2), 'runs past'],
      [Buffer.from([...good.subarray(0, 14), 0x40, ...good.subarray(15)]), 'IP version 4, not 6'],
    ];
    for (const [frame, reason] of cases) {
      expect(() => parseRouterSolicitation(frame), reason).toThrow(RaParseError);
      expect(() => parseRouterSolicitation(frame)).toThrow(reason);
    }
  });

  it('tells a solicitation from the other frames the router sends up', () => {
    expect(isRouterSolicitationFrame(rsFrame())).toBe(true);
    expect(isRouterSolicitationFrame(rsFrame({ vlan: 30 }))).toBe(true);
    // Matched by the switch through an extension header: its own, refused by the parser.
    expect(isRouterSolicitationFrame(rsFrame({ nextHeader: 0 }))).toBe(true);
    expect(isRouterSolicitationFrame(rsFrame({ type: 135 }))).toBe(false);
    const arp = Buffer.alloc(60);
    arp.writeUInt16BE(0x0806, 12);
    expect(isRouterSolicitationFrame(arp)).toBe(false);
    expect(isRouterSolicitationFrame(rsFrame().subarray(0, 30))).toBe(false);
  });
});
