import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type IcmpError, IcmpParseError } from '../../../controller/router/icmp-error.js';
import {
  buildIcmp6Error,
  parseIpFrame,
  parseIpv6Frame,
  whyNoError6,
} from '../../../controller/router/icmp6-error.js';
import { ipv4Frame, udp } from './frames.js';
import {
  type Frame6Spec,
  hexOf,
  icmp6,
  icmp6ChecksumHolds,
  icmp6Parts,
  ipv6Bytes,
  ipv6Frame,
} from './frames6.js';

const GATEWAY = { ethSrc: '0a:57:72:00:00:64', ethDst: '02:00:00:00:01:05', ipSrc: 'fd00:1::1' };
const parse = (s: Frame6Spec) => parseIpv6Frame(ipv6Frame(s));

/** The error about the packet `s` describes, as the router sends it. */
const errorAbout = (s: Frame6Spec, kind: IcmpError['kind'] = 'time-exceeded', frame = ipv6Frame(s)) =>
  buildIcmp6Error(frame, parseIpv6Frame(frame), { kind }, GATEWAY);

function parseError(frame: Buffer): IcmpParseError {
  try {
    parseIpv6Frame(frame);
  } catch (err) {
    if (err instanceof IcmpParseError) return err;
    throw err;
  }
  throw new Error(`frame of ${frame.length} bytes parsed`);
}

describe('parseIpv6Frame', () => {
  it('reads an untagged frame: canonical addresses, hop limit, next header, where the packet lies', () => {
    const payload = udp(40000, 53);
    const p = parse({
      ethDst: '0a:57:72:00:00:64',
      ethSrc: '02:00:00:00:01:05',
      ipSrc: 'fd00:1:0:0:0:0:0:5',
      ipDst: '2001:db8:0:0:1:0:0:1',
      hopLimit: 7,
      payload,
    });
    expect(p).toEqual({
      ethDst: '0a:57:72:00:00:64',
      ethSrc: '02:00:00:00:01:05',
      // As controller/intent/net.ts writes them (RFC 5952): the intent's text for the same address.
      ipSrc: 'fd00:1::5',
      ipDst: '2001:db8::1:0:0:1',
      hopLimit: 7,
      nextHeader: 17,
      icmpType: undefined,
      ipStart: 14,
      ipEnd: 14 + 40 + payload.length,
    });
  });

  it('reads past one 802.1Q tag to the ICMPv6 type, and stops before padding', () => {
    const tagged = parse({ vlan: 30, nextHeader: 58, payload: icmp6(128) });
    expect(tagged).toMatchObject({ ipStart: 18, ipEnd: 18 + 40 + 16, icmpType: 128, nextHeader: 58 });
    const padded = parse({ payload: udp(1, 2, new Uint8Array(0)), padding: 10 });
    expect(padded.ipEnd).toBe(14 + 48);
    // Truncated by the switch (payload length beyond the frame): never more packet than frame.
    const cut = ipv6Frame({ payload: udp(1, 2, new Uint8Array(100)) }).subarray(0, 80);
    expect(parseIpv6Frame(cut).ipEnd).toBe(80);
    // ICMPv6 ending right after the header has no type; another protocol's first byte is none.
    expect(parse({ nextHeader: 58, payload: new Uint8Array(0), padding: 8 }).icmpType).toBeUndefined();
    expect(parse({ nextHeader: 17, payload: icmp6(1) }).icmpType).toBeUndefined();
    // An extension header is read as the next header, nothing behind it.
    expect(parse({ nextHeader: 0, payload: icmp6(1) })).toMatchObject({ nextHeader: 0, icmpType: undefined });
  });

  it('throws IcmpParseError naming what is wrong with a malformed frame', () => {
    const cases: [string, Buffer, RegExp][] = [
      ['empty', Buffer.alloc(0), /frame of 0 bytes is too short for IPv6/],
      ['cut in the header', ipv6Frame().subarray(0, 53), /frame of 53 bytes is too short for IPv6/],
      ['tagged, cut', ipv6Frame({ vlan: 5 }).subarray(0, 57), /tagged frame too short for IPv6/],
      ['IPv4 ethertype', ipv6Frame({ ethertype: 0x0800 }), /ethertype 0x800 is not IPv6/],
      ['version 4', ipv6Frame({ version: 4 }), /IP version 4, not 6/],
    ];
    for (const [name, frame, message] of cases) expect(parseError(frame).message, name).toMatch(message);
  });
});

describe('parseIpFrame', () => {
  it('reads IPv6 by its ethertype, tagged or not, and everything else as IPv4', () => {
    expect(parseIpFrame(ipv6Frame()).family).toBe(6);
    expect(parseIpFrame(ipv6Frame({ vlan: 9 }))).toMatchObject({ family: 6, p: { ipStart: 18 } });
    expect(parseIpFrame(ipv4Frame()).family).toBe(4);
    expect(parseIpFrame(ipv4Frame({ vlan: 9 }))).toMatchObject({ family: 4, p: { ipStart: 18 } });
    // An IPv4 header behind IPv6's ethertype is a malformed IPv6 packet; short frames IPv4's error.
    expect(() => parseIpFrame(ipv4Frame({ ethertype: 0x86dd }))).toThrow(/34 bytes is too short for IPv6/);
    const long = ipv4Frame({ ethertype: 0x86dd, payload: udp(1, 2, new Uint8Array(20)) });
    expect(() => parseIpFrame(long)).toThrow(/IP version 4, not 6/);
    expect(() => parseIpFrame(Buffer.alloc(10))).toThrow(IcmpParseError);
    expect(() => parseIpFrame(ipv6Frame({ ethertype: 0x0806 }))).toThrow(/ethertype 0x806 is not IPv4/);
  });
});

describe('whyNoError6 (RFC 4443 2.4(e))', () => {
  it('refuses to answer an ICMPv6 error, a redirect or a neighbour discovery message; answers other ICMPv6', () => {
    for (const type of [1, 2, 3, 4, 100, 127]) {
      expect(whyNoError6(parse({ nextHeader: 58, payload: icmp6(type) }))).toBe(
        `it is itself an ICMPv6 error (type ${type})`,
      );
    }
    for (const type of [133, 134, 135, 136, 137]) {
      expect(whyNoError6(parse({ nextHeader: 58, payload: icmp6(type) }))).toBe(
        `it is a neighbour discovery or redirect message (type ${type})`,
      );
    }
    for (const type of [128, 129, 130, 138, 200])
      expect(whyNoError6(parse({ nextHeader: 58, payload: icmp6(type) })), `type ${type}`).toBeUndefined();
    // Type 1 in another protocol's header is not an ICMPv6 error.
    expect(whyNoError6(parse({ nextHeader: 17, payload: icmp6(1) }))).toBeUndefined();
  });

  it('refuses a packet with an extension header: the protocol behind it is unknown', () => {
    for (const nextHeader of [0, 43, 44, 50, 51, 60, 135]) {
      expect(whyNoError6(parse({ nextHeader, payload: udp(1, 2) }))).toBe(
        `it carries an IPv6 extension header (next header ${nextHeader})`,
      );
    }
    for (const nextHeader of [6, 17, 47, 59, 132])
      expect(whyNoError6(parse({ nextHeader })), String(nextHeader)).toBeUndefined();
  });

  it('refuses multicast destinations, sources that name no single node, link-layer group frames', () => {
    for (const ipDst of ['ff02::1', 'ff02::1:ff00:5', 'ff0e::101'])
      expect(whyNoError6(parse({ ipDst }))).toBe(`its destination ${ipDst} is multicast`);
    for (const ipSrc of ['::', '::1', 'ff02::2'])
      expect(whyNoError6(parse({ ipSrc }))).toBe(`its source ${ipSrc} names no single node`);
    for (const ethDst of ['ff:ff:ff:ff:ff:ff', '33:33:00:00:00:01', '01:00:5e:00:00:01'])
      expect(whyNoError6(parse({ ethDst }))).toBe(`it was sent to the link-layer ${ethDst}`);
    // Link-local sources are answered (the router is on their link), ff:: is not multicast.
    for (const [ipSrc, ipDst] of [
      ['fe80::1', 'fd00:2::5'],
      ['fd00:1::5', 'ff::1'],
      ['::2', 'fe80::857:72ff:fe00:64'],
    ])
      expect(whyNoError6(parse({ ipSrc, ipDst })), `${ipSrc} -> ${ipDst}`).toBeUndefined();
  });

  it("refuses a source that is one of the router's subnets' subnet-router anycast address", () => {
    const subnets = ['10.1.0.0/24', 'fd00:1::/64', 'fd00:9::/127'];
    expect(whyNoError6(parse({ ipSrc: 'fd00:1::' }), subnets)).toBe(
      'its source fd00:1:: is the subnet-router anycast address of fd00:1::/64',
    );
    for (const ipSrc of ['fd00:1::5', 'fd00:2::', 'fd00:9::'])
      expect(whyNoError6(parse({ ipSrc }), subnets), ipSrc).toBeUndefined();
  });
});

describe('buildIcmp6Error', () => {
  const expected: Record<IcmpError['kind'], [type: number, code: number, word: number]> = {
    'time-exceeded': [3, 0, 0],
    'net-unreachable': [1, 0, 0], // no route to destination
    'host-unreachable': [1, 3, 0], // address unreachable
    'port-unreachable': [1, 4, 0],
    // Parameter problem, unrecognized next header, pointing at the Next Header field (offset 6).
    'protocol-unreachable': [4, 1, 6],
  };

  it('sends Ethernet II + IPv6 (hop limit 64, ICMPv6) from the gateway to the packet source', () => {
    const frame = ipv6Frame({
      ipSrc: 'fd00:1::5',
      ipDst: 'fd00:9::9',
      hopLimit: 1,
      payload: udp(33434, 33434),
    });
    const out = errorAbout({}, 'time-exceeded', frame);
    const e = icmp6Parts(out);
    expect(e).toMatchObject({
      ethDst: GATEWAY.ethDst,
      ethSrc: GATEWAY.ethSrc,
      ethertype: 0x86dd,
      first: 0x6000_0000, // version 6, traffic class 0, flow label 0
      nextHeader: 58,
      hopLimit: 64,
      ipSrc: hexOf('fd00:1::1'),
      ipDst: hexOf('fd00:1::5'),
      type: 3,
      code: 0,
      word: 0,
    });
    expect(e.payloadLength).toBe(8 + (frame.length - 14));
    expect(out.length).toBe(14 + 40 + e.payloadLength);
    expect(icmp6ChecksumHolds(out)).toBe(true);
    // The quote: the offending IPv6 header (flow label and all) and payload, byte for byte.
    expect(Buffer.compare(e.quote, frame.subarray(14))).toBe(0);
  });

  it('names each error by its RFC 4443 type and code; protocol unreachable points at the next header', () => {
    for (const [kind, [type, code, word]] of Object.entries(expected)) {
      const out = errorAbout({ payload: udp(5, 6) }, kind as IcmpError['kind']);
      const e = icmp6Parts(out);
      expect([e.type, e.code, e.word], kind).toEqual([type, code, word]);
      expect(out.subarray(54, 62).toString('hex'), kind).toBe(
        Buffer.from([type, code, e.checksum >> 8, e.checksum & 0xff, 0, 0, 0, word]).toString('hex'),
      );
      expect(icmp6ChecksumHolds(out), kind).toBe(true);
    }
  });

  it('checksums with the pseudo-header: a changed destination breaks it, a sum by hand agrees', () => {
    const out = errorAbout({ payload: udp(1, 2, Uint8Array.from([1, 2, 3])) }, 'port-unreachable');
    expect(icmp6Parts(out).message.length % 2).toBe(1);
    expect(icmp6ChecksumHolds(out)).toBe(true);
    const moved = Buffer.from(out);
    moved[53] = moved[53]! ^ 1; // the destination's last byte
    expect(icmp6ChecksumHolds(moved)).toBe(false);
    // Hand-computed for one small case: the sum of pseudo-header and message with checksum 0.
    const small = errorAbout({ payload: new Uint8Array(0) }, 'time-exceeded');
    const words: number[] = [];
    const pseudo = [...small.subarray(22, 54), 0, 0, 0, 8 + 40, 0, 0, 0, 58];
    const zeroed = [...small.subarray(54)];
    zeroed[2] = 0;
    zeroed[3] = 0;
    const all = [...pseudo, ...zeroed];
    for (let i = 0; i < all.length; i += 2) words.push(all[i]! * 256 + (all[i + 1] ?? 0));
    let sum = words.reduce((a, b) => a + b, 0);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    expect(icmp6Parts(small).checksum).toBe(~sum & 0xffff);
  });

  it('quotes as much as keeps the error packet within 1280 bytes (the IPv6 minimum MTU)', () => {
    const data = Uint8Array.from({ length: 1500 - 48 }, (_, i) => i * 7);
    const big = ipv6Frame({ payload: udp(1, 2, data) });
    expect(big.length - 14).toBe(1500);
    const out = errorAbout({}, 'net-unreachable', big);
    expect(out.length - 14).toBe(1280);
    const parts = icmp6Parts(out);
    expect(parts.payloadLength).toBe(1240);
    expect(parts.quote.length).toBe(1232);
    expect(Buffer.compare(parts.quote, big.subarray(14, 14 + 1232))).toBe(0);
    expect(icmp6ChecksumHolds(out)).toBe(true);
    // At the edge: a packet that just fits is quoted whole, one byte more is cut.
    for (const ipLength of [1232, 1233]) {
      const f = ipv6Frame({ payload: new Uint8Array(ipLength - 40) });
      const q = icmp6Parts(errorAbout({}, 'net-unreachable', f)).quote;
      expect(q.length).toBe(Math.min(ipLength, 1232));
    }
  });

  it('quotes neither the padding nor the VLAN tag, and always sends untagged', () => {
    const padded = ipv6Frame({ payload: udp(1, 2, new Uint8Array(0)), padding: 12, vlan: 30 });
    const out = errorAbout({}, 'port-unreachable', padded);
    expect(icmp6Parts(out).ethertype).toBe(0x86dd);
    expect(Buffer.compare(icmp6Parts(out).quote, padded.subarray(18, 18 + 48))).toBe(0);
    expect(out.length).toBe(14 + 40 + 8 + 48);
  });

  it('throws on addresses it cannot write', () => {
    const frame = ipv6Frame();
    const p = parseIpv6Frame(frame);
    const kind = { kind: 'net-unreachable' } as const;
    expect(() => buildIcmp6Error(frame, p, kind, { ...GATEWAY, ethDst: 'nope' })).toThrow(/ethDst: 'nope'/);
    expect(() => buildIcmp6Error(frame, p, kind, { ...GATEWAY, ethSrc: '0a:57:72' })).toThrow(/ethSrc/);
    expect(() => buildIcmp6Error(frame, p, kind, { ...GATEWAY, ipSrc: '10.1.0.1' })).toThrow(
      /ipSrc: '10.1.0.1' is not an IPv6 address/,
    );
  });
});

describe('property: any IPv6 packet', () => {
  const group = fc.integer({ min: 0, max: 0xffff }).map((g) => g.toString(16));
  // A unicast source (not ff00::/8), any destination.
  const ip = (first: fc.Arbitrary<number>) =>
    fc
      .tuple(first, fc.array(group, { minLength: 7, maxLength: 7 }))
      .map(([f, rest]) => [f.toString(16), ...rest].join(':'));
  const packet = fc.record({
    ipSrc: ip(fc.integer({ min: 0x2000, max: 0xfeff })),
    ipDst: ip(fc.integer({ min: 0, max: 0xffff })),
    hopLimit: fc.integer({ min: 0, max: 255 }),
    nextHeader: fc.integer({ min: 0, max: 255 }),
    payload: fc.uint8Array({ maxLength: 1600 }),
    vlan: fc.option(fc.integer({ min: 1, max: 4094 }), { nil: undefined }),
    padding: fc.integer({ min: 0, max: 30 }),
  });
  const kind = fc.constantFrom<IcmpError['kind']>(
    'time-exceeded',
    'net-unreachable',
    'host-unreachable',
    'protocol-unreachable',
    'port-unreachable',
  );

  it('gets an error that parses back, checksums right, quotes its first bytes, and is never answered itself', () => {
    fc.assert(
      fc.property(packet, kind, (spec, k) => {
        const frame = ipv6Frame(spec);
        const ipLength = 40 + spec.payload.length;
        const ipStart = spec.vlan === undefined ? 14 : 18;
        const out = buildIcmp6Error(frame, parseIpv6Frame(frame), { kind: k }, GATEWAY);
        const back = parseIpv6Frame(out);
        expect(back).toMatchObject({
          ethSrc: GATEWAY.ethSrc,
          ethDst: GATEWAY.ethDst,
          ipSrc: GATEWAY.ipSrc,
          hopLimit: 64,
          nextHeader: 58,
          ipStart: 14,
          ipEnd: out.length,
        });
        expect(Buffer.from(ipv6Bytes(back.ipDst))).toEqual(Buffer.from(ipv6Bytes(spec.ipSrc)));
        expect(out.length - 14).toBeLessThanOrEqual(1280);
        expect(icmp6ChecksumHolds(out)).toBe(true);
        const quoted = Math.min(ipLength, 1280 - 48);
        expect(Buffer.compare(icmp6Parts(out).quote, frame.subarray(ipStart, ipStart + quoted))).toBe(0);
        expect(whyNoError6(back)).toMatch(/itself an ICMPv6 error/);
      }),
      { numRuns: 300 },
    );
  });
});
