import { describe, expect, it } from 'vitest';
import { routerLinkLocal, routerMac } from '../../../controller/intent/model-router.js';
import {
  isNeighborFrame,
  protocolOf,
  readClaim,
  requestFrame,
  whyNotTaken,
} from '../../../controller/router/neighbor-wire.js';
import { icmp6ChecksumHolds, ipv6Frame } from './frames6.js';
import { decodeNs, type NaSpec, naBytes } from './nd-frames.js';
import { arp, decodeRequest, HOST_MAC } from './neighbor-service-fixture.js';

/**
 * controller/router/neighbor-wire.ts: what the router asks (an ARP request, an IPv6 neighbour
 * solicitation) and what it reads back (a claim: an address is at a MAC). The interface: router
 * on VNI 100, 10.1.0.1 and fd00:2::1, its MAC written upper case as the intent may hold it. The
 * frames are built and read here byte by byte (frames6.ts), not with nd-frame.ts.
 */

const GW = routerMac(100); // 0a:57:72:00:00:64
const IFACE = { ip: '10.1.0.1', ipv6: 'fd00:2::1', mac: GW.toUpperCase() };
const V4_ONLY = { ip: '10.1.0.1', mac: GW.toUpperCase() };
const OTHER_MAC = '02:00:00:00:bb:02';

/**
 * A Neighbor Advertisement from a host (fd00:2::99 at HOST_MAC, solicited + override, with a
 * TLLA option of HOST_MAC unless told) to the router's address.
 */
function naFrame(a: Partial<NaSpec> = {}): Buffer {
  const ipSrc = a.ipSrc ?? 'fd00:2::99';
  return naBytes({
    ethDst: a.ethDst ?? GW,
    ethSrc: a.ethSrc ?? HOST_MAC,
    ipSrc,
    ipDst: a.ipDst ?? 'fd00:2::1',
    target: a.target ?? ipSrc,
    tlla: a.tlla === undefined ? HOST_MAC : a.tlla,
    ...(a.flags === undefined ? {} : { flags: a.flags }),
    ...(a.hopLimit === undefined ? {} : { hopLimit: a.hopLimit }),
  });
}

describe('the test NA builder', () => {
  it('writes a well-formed advertisement (its checksum holds)', () => {
    const f = naFrame();
    expect(f.length).toBe(14 + 40 + 32);
    expect(icmp6ChecksumHolds(f)).toBe(true);
    expect(icmp6ChecksumHolds(naFrame({ tlla: null, target: 'fd00:2::abcd' }))).toBe(true);
  });
});

describe('protocolOf and isNeighborFrame', () => {
  it('IPv4 is ARP, IPv6 is neighbour discovery', () => {
    expect(protocolOf('10.1.0.50')).toBe('arp');
    expect(protocolOf('fd00:2::99')).toBe('nd');
    expect(protocolOf('::ffff:a01:203')).toBe('nd');
  });

  it('takes ARP and neighbour advertisements, not solicitations or other IPv6', () => {
    expect(isNeighborFrame(arp())).toBe(true);
    expect(isNeighborFrame(naFrame())).toBe(true);
    expect(isNeighborFrame(requestFrame(IFACE, 'fd00:2::99')!)).toBe(false);
    expect(isNeighborFrame(ipv6Frame({ nextHeader: 17, payload: new Uint8Array(8) }))).toBe(false);
    const v4 = Buffer.from(arp());
    v4.writeUInt16BE(0x0800, 12);
    expect(isNeighborFrame(v4)).toBe(false);
  });
});

describe('requestFrame', () => {
  it('IPv4: a broadcast ARP request from the interface address and its MAC (lower case)', () => {
    for (const iface of [IFACE, V4_ONLY]) {
      expect(decodeRequest(requestFrame(iface, '10.1.0.50')!)).toEqual({
        length: 60,
        ethDst: 'ff:ff:ff:ff:ff:ff',
        ethSrc: GW,
        ethertype: 0x0806,
        op: 1,
        sha: GW,
        spa: '10.1.0.1',
        tha: '00:00:00:00:00:00',
        tpa: '10.1.0.50',
      });
    }
  });

  it('IPv4 unicast: the same request to the MAC re-validated', () => {
    expect(decodeRequest(requestFrame(IFACE, '10.1.0.50', HOST_MAC)!)).toMatchObject({
      ethDst: HOST_MAC,
      ethSrc: GW,
      op: 1,
      spa: '10.1.0.1',
      tpa: '10.1.0.50',
    });
  });

  it("IPv6: a neighbour solicitation from the interface's IPv6 address to the target's solicited-node group", () => {
    expect(decodeNs(requestFrame(IFACE, 'fd00:2::1:2345:6789')!)).toEqual({
      length: 86,
      ethDst: '33:33:ff:45:67:89',
      ethSrc: GW,
      ethertype: 0x86dd,
      version: 6,
      payloadLength: 32,
      nextHeader: 58,
      hopLimit: 255,
      ipSrc: 'fd00:2::1',
      ipDst: 'ff02::1:ff45:6789',
      type: 135,
      code: 0,
      target: 'fd00:2::1:2345:6789',
      option: [1, 1],
      sourceMac: GW,
      checksumHolds: true,
    });
  });

  it('IPv6 unicast: to the MAC and the address re-validated', () => {
    expect(decodeNs(requestFrame(IFACE, 'fd00:2::99', HOST_MAC)!)).toMatchObject({
      ethDst: HOST_MAC,
      ethSrc: GW,
      hopLimit: 255,
      ipSrc: 'fd00:2::1',
      ipDst: 'fd00:2::99',
      type: 135,
      target: 'fd00:2::99',
      sourceMac: GW,
      checksumHolds: true,
    });
  });

  it("a link-local target (a physical router's, a route's next hop): asked from the router's own link-local address", () => {
    const ll = routerLinkLocal(GW);
    expect(decodeNs(requestFrame(IFACE, 'fe80::1')!)).toMatchObject({
      ethDst: '33:33:ff:00:00:01',
      ethSrc: GW,
      ipSrc: ll,
      ipDst: 'ff02::1:ff00:1',
      target: 'fe80::1',
      checksumHolds: true,
    });
    expect(decodeNs(requestFrame(IFACE, 'fe80::1', HOST_MAC)!)).toMatchObject({
      ipSrc: ll,
      ipDst: 'fe80::1',
    });
  });

  it('IPv6 on an interface without an IPv6 address: nothing to send', () => {
    expect(requestFrame(V4_ONLY, 'fd00:2::99')).toBeUndefined();
    expect(requestFrame(V4_ONLY, 'fd00:2::99', HOST_MAC)).toBeUndefined();
  });
});

describe('readClaim: neighbour advertisements', () => {
  it("a reply to the interface's IPv6 address: its target at its TLLA's MAC", () => {
    expect(readClaim(naFrame(), 'reply', IFACE)).toEqual({ ip: 'fd00:2::99', mac: HOST_MAC });
  });

  it("a reply to the router's link-local address is the router's too", () => {
    const ll = routerLinkLocal(GW);
    expect(ll).toBe('fe80::857:72ff:fe00:64');
    expect(readClaim(naFrame({ ipDst: ll }), 'reply', IFACE)).toEqual({ ip: 'fd00:2::99', mac: HOST_MAC });
    // Even where the interface has no IPv6 address of its own.
    expect(readClaim(naFrame({ ipDst: ll }), 'reply', V4_ONLY)).toEqual({ ip: 'fd00:2::99', mac: HOST_MAC });
  });

  it('a reply to any other address is refused, naming it', () => {
    for (const [ipDst, iface] of [
      ['fd00:2::2', IFACE],
      ['ff02::1', IFACE],
      // Another router's link-local address.
      [routerLinkLocal(routerMac(101)), IFACE],
      // The interface's would-be address when it has none.
      ['fd00:2::1', V4_ONLY],
    ] as const) {
      const flags = ipDst === 'ff02::1' ? 0x20 : 0x60;
      expect(readClaim(naFrame({ ipDst, flags }), 'reply', iface), ipDst).toBe(
        `advertisement to ${ipDst}, not to the router's addresses`,
      );
    }
  });

  it('an announcement is taken only when sent to all nodes (ff02::1)', () => {
    const unsolicited = naFrame({ ethDst: '33:33:00:00:00:01', ipDst: 'ff02::1', flags: 0x20 });
    expect(readClaim(unsolicited, 'announce', IFACE)).toEqual({ ip: 'fd00:2::99', mac: HOST_MAC });
    expect(readClaim(naFrame(), 'announce', IFACE)).toBe(
      'advertisement to fd00:2::1 is no announcement to all nodes',
    );
    expect(readClaim(naFrame({ ipDst: 'ff02::2', flags: 0x20 }), 'announce', IFACE)).toBe(
      'advertisement to ff02::2 is no announcement to all nodes',
    );
  });

  it("the claim's MAC is the TLLA option's; without the option, the frame's source MAC", () => {
    expect(readClaim(naFrame({ ethSrc: OTHER_MAC }), 'reply', IFACE)).toEqual({
      ip: 'fd00:2::99',
      mac: HOST_MAC,
    });
    expect(readClaim(naFrame({ ethSrc: OTHER_MAC, tlla: null }), 'reply', IFACE)).toEqual({
      ip: 'fd00:2::99',
      mac: OTHER_MAC,
      macFromFrame: true,
    });
    // Without the override flag (a proxy's answer): said so.
    expect(readClaim(naFrame({ flags: 0x40 }), 'reply', IFACE)).toEqual({
      ip: 'fd00:2::99',
      mac: HOST_MAC,
      noOverride: true,
    });
    // An unsolicited one must name its MAC.
    const bare = naFrame({ ethDst: '33:33:00:00:00:01', ipDst: 'ff02::1', flags: 0x20, tlla: null });
    expect(readClaim(bare, 'announce', IFACE)).toBe(
      'an unsolicited advertisement without its target link-layer address says no MAC',
    );
    // The target, not the IPv6 source, is the address claimed.
    expect(readClaim(naFrame({ ipSrc: 'fe80::1', target: 'fd00:2::77' }), 'reply', IFACE)).toEqual({
      ip: 'fd00:2::77',
      mac: HOST_MAC,
    });
  });

  it("a malformed advertisement: 'malformed advertisement:' and the parser's reason", () => {
    expect(readClaim(naFrame({ hopLimit: 64 }), 'reply', IFACE)).toBe(
      'malformed advertisement: hop limit 64, not 255',
    );
    const bad = naFrame();
    bad[bad.length - 1]! ^= 1;
    const why = readClaim(bad, 'announce', IFACE);
    expect(typeof why).toBe('string');
    expect(why as string).toMatch(/^malformed advertisement: ICMPv6 checksum 0x[0-9a-f]+ does not hold$/);
    // Solicited, to all nodes: RFC 4861 7.1.2 has it discarded.
    expect(readClaim(naFrame({ ipDst: 'ff02::1', flags: 0x60 }), 'announce', IFACE)).toMatch(
      /^malformed advertisement: solicited flag set/,
    );
  });
});

describe('readClaim: ARP', () => {
  it("a reply for the router's address: its sender's address at its sender's MAC", () => {
    expect(readClaim(arp(), 'reply', IFACE)).toEqual({ ip: '10.1.0.50', mac: HOST_MAC });
    expect(readClaim(arp({ sha: OTHER_MAC, spa: '10.1.0.60' }), 'reply', V4_ONLY)).toEqual({
      ip: '10.1.0.60',
      mac: OTHER_MAC,
    });
  });

  it('a reply for another address, or a request heard as a reply, is refused', () => {
    expect(readClaim(arp({ tpa: '10.1.0.2' }), 'reply', IFACE)).toBe(
      "reply for 10.1.0.2, not the router's 10.1.0.1",
    );
    expect(readClaim(arp({ op: 1 }), 'reply', IFACE)).toBe('ARP op 1 is no reply');
  });

  it('an announcement is a request or a reply (a gratuitous ARP), for any target', () => {
    const garp = arp({ op: 1, tpa: '10.1.0.50', ethDst: 'ff:ff:ff:ff:ff:ff' });
    expect(readClaim(garp, 'announce', IFACE)).toEqual({ ip: '10.1.0.50', mac: HOST_MAC });
    expect(readClaim(arp({ tpa: '10.1.0.50' }), 'announce', IFACE)).toEqual({
      ip: '10.1.0.50',
      mac: HOST_MAC,
    });
    expect(readClaim(arp({ op: 3 }), 'announce', IFACE)).toBe('ARP op 3 is no request or reply');
  });

  it("a malformed ARP packet: 'malformed:' and the parser's reason", () => {
    expect(readClaim(arp().subarray(0, 30), 'reply', IFACE)).toBe(
      'malformed: ARP of 16 bytes is shorter than 28',
    );
  });
});

describe('whyNotTaken: what an advertisement may change (RFC 4861 7.2.5)', () => {
  const claim = { ip: 'fd00:2::99', mac: HOST_MAC };
  const reachable = { state: 'reachable', mac: HOST_MAC };
  it('takes a full answer, and an ARP claim, whatever the entry', () => {
    for (const entry of [
      undefined,
      { state: 'incomplete' },
      reachable,
      { state: 'reachable', mac: OTHER_MAC },
    ])
      expect(whyNotTaken(claim, entry)).toBeUndefined();
  });
  it('takes one without a TLLA only as a confirmation of the reachable MAC', () => {
    const bare = { ...claim, macFromFrame: true };
    expect(whyNotTaken(bare, reachable)).toBeUndefined();
    expect(whyNotTaken(bare, undefined)).toMatch(/only confirms a reachable neighbour/);
    expect(whyNotTaken(bare, { state: 'incomplete' })).toMatch(/only confirms a reachable neighbour/);
    expect(whyNotTaken(bare, { state: 'reachable', mac: OTHER_MAC })).toBe(
      `an advertisement without its target link-layer address names no new MAC (known: ${OTHER_MAC})`,
    );
  });
  it('takes one without the override flag unless it changes a known MAC', () => {
    const proxy = { ...claim, noOverride: true };
    expect(whyNotTaken(proxy, undefined)).toBeUndefined();
    expect(whyNotTaken(proxy, reachable)).toBeUndefined();
    expect(whyNotTaken(proxy, { state: 'reachable', mac: OTHER_MAC })).toBe(
      `an advertisement without the override flag does not change the known MAC ${OTHER_MAC}`,
    );
  });
});
