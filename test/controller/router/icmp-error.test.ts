import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { internetChecksum } from '../../../controller/inet-checksum.js';
import {
  buildIcmpError,
  type IcmpError,
  IcmpParseError,
  parseIpv4Frame,
  whyNoError,
} from '../../../controller/router/icmp-error.js';
import {
  checksumHolds,
  type FrameSpec,
  icmp,
  icmpParts,
  ipv4Frame,
  onesComplementSum,
  udp,
} from './frames.js';

const GATEWAY = { ethSrc: '0a:57:72:00:00:64', ethDst: '02:00:00:00:01:05', ipSrc: '10.1.0.1' };
const parse = (s: FrameSpec) => parseIpv4Frame(ipv4Frame(s));

/** The error about the packet `s` describes, as the router sends it. */
const errorAbout = (s: FrameSpec, kind: IcmpError['kind'] = 'time-exceeded', frame = ipv4Frame(s)) =>
  buildIcmpError(frame, parseIpv4Frame(frame), { kind }, GATEWAY);

function parseError(frame: Buffer): IcmpParseError {
  try {
    parseIpv4Frame(frame);
  } catch (err) {
    if (err instanceof IcmpParseError) return err;
    throw err;
  }
  throw new Error(`frame of ${frame.length} bytes parsed`);
}

describe('parseIpv4Frame', () => {
  it('reads an untagged frame: addresses, TTL, protocol, where the packet lies', () => {
    const payload = udp(40000, 53);
    const p = parse({
      ethDst: '0a:57:72:00:00:64',
      ethSrc: '02:00:00:00:01:05',
      ipSrc: '10.1.0.5',
      ipDst: '8.8.8.8',
      ttl: 7,
      payload,
    });
    expect(p).toEqual({
      ethDst: '0a:57:72:00:00:64',
      ethSrc: '02:00:00:00:01:05',
      ipSrc: '10.1.0.5',
      ipDst: '8.8.8.8',
      ttl: 7,
      protocol: 17,
      firstFragment: true,
      icmpType: undefined,
      ipStart: 14,
      ipEnd: 14 + 20 + payload.length,
      headerLength: 20,
    });
  });

  it('reads past one 802.1Q tag, past IPv4 options to the ICMP type, and stops before padding', () => {
    const tagged = parse({ vlan: 30, protocol: 1, payload: icmp(8) });
    expect(tagged).toMatchObject({ ipStart: 18, ipEnd: 18 + 20 + 16, icmpType: 8, protocol: 1 });
    const options = Uint8Array.from([0x94, 4, 0, 0, 1, 1, 1, 0]); // router alert, NOPs, end
    const withOptions = parse({ options, protocol: 1, payload: icmp(13) });
    expect(withOptions).toMatchObject({ headerLength: 28, icmpType: 13, ipEnd: 14 + 28 + 16 });
    // A 28-byte packet in a minimum (60-byte) frame: the padding is not the packet's.
    const padded = parse({ payload: udp(1, 2, new Uint8Array(0)), padding: 18 });
    expect(padded.ipEnd).toBe(14 + 28);
    // A packet the switch truncated (total length beyond the frame): never more packet than frame.
    const cut = ipv4Frame({ payload: udp(1, 2, new Uint8Array(100)) }).subarray(0, 60);
    expect(parseIpv4Frame(cut).ipEnd).toBe(60);
  });

  it('tells a first fragment from a later one, and reads no ICMP type in a later one', () => {
    expect(parse({ protocol: 1, payload: icmp(3), moreFragments: true }).firstFragment).toBe(true);
    const later = parse({ protocol: 1, payload: icmp(3), fragmentOffset: 185 });
    expect(later).toMatchObject({ firstFragment: false, icmpType: undefined });
    // An ICMP packet ending right after its IP header has no type to read.
    expect(parse({ protocol: 1, payload: new Uint8Array(0), padding: 20 }).icmpType).toBeUndefined();
  });

  it('throws IcmpParseError naming what is wrong with a malformed frame', () => {
    const good = ipv4Frame({ payload: udp(1, 2) });
    const cases: [string, Buffer, RegExp][] = [
      ['empty', Buffer.alloc(0), /frame of 0 bytes is too short/],
      ['cut in the IP header', good.subarray(0, 33), /frame of 33 bytes is too short/],
      ['tagged, cut', ipv4Frame({ vlan: 5 }).subarray(0, 37), /tagged frame too short/],
      ['IPv6 ethertype', ipv4Frame({ ethertype: 0x86dd }), /ethertype 0x86dd is not IPv4/],
      ['ARP behind a tag', ipv4Frame({ vlan: 5, ethertype: 0x0806 }), /ethertype 0x806 is not IPv4/],
      ['version 6', ipv4Frame({ version: 6 }), /IP version 6, not 4/],
      ['IHL 4', ipv4Frame({ ihl: 4 }), /header length 16 is below 20/],
      ['IHL 0', ipv4Frame({ ihl: 0 }), /header length 0 is below 20/],
      ['total below header', ipv4Frame({ totalLength: 19 }), /total length 19 is below its header's 20/],
      // IHL 15 says 60 header bytes; the frame holds 40 of them.
      [
        'ends in header',
        ipv4Frame({ ihl: 15, totalLength: 60, payload: new Uint8Array(20) }),
        /ends inside the IPv4 header/,
      ],
    ];
    for (const [name, frame, message] of cases) expect(parseError(frame).message, name).toMatch(message);
    expect(parseError(Buffer.alloc(10)).name).toBe('IcmpParseError');
  });
});

describe('whyNoError (RFC 1812 4.3.2.7)', () => {
  it('refuses to answer an ICMP error with one, but answers other ICMP', () => {
    for (const type of [3, 4, 5, 11, 12]) {
      expect(whyNoError(parse({ protocol: 1, payload: icmp(type) }))).toBe(
        `it is itself an ICMP error (type ${type})`,
      );
    }
    for (const type of [0, 8, 13])
      expect(whyNoError(parse({ protocol: 1, payload: icmp(type) })), `type ${type}`).toBeUndefined();
    // Type 3 in another protocol's header is not an ICMP error.
    expect(whyNoError(parse({ protocol: 17, payload: icmp(3) }))).toBeUndefined();
  });

  it('refuses fragments but the first', () => {
    expect(whyNoError(parse({ fragmentOffset: 1 }))).toBe('it is a fragment other than the first');
    expect(whyNoError(parse({ moreFragments: true }))).toBeUndefined();
  });

  it('refuses the broadcast address of a subnet it is told of, and only that (none for /31 and /32)', () => {
    const subnets = ['10.2.0.0/24', '192.0.2.0/30', '198.51.100.0/31', '198.51.100.9/32'];
    expect(whyNoError(parse({ ipDst: '10.2.0.255' }), subnets)).toBe(
      'its destination 10.2.0.255 is the broadcast address of 10.2.0.0/24',
    );
    expect(whyNoError(parse({ ipDst: '192.0.2.3' }), subnets)).toBe(
      'its destination 192.0.2.3 is the broadcast address of 192.0.2.0/30',
    );
    for (const ipDst of ['10.2.0.254', '10.2.1.255', '192.0.2.2', '198.51.100.1', '198.51.100.9'])
      expect(whyNoError(parse({ ipDst }), subnets), ipDst).toBeUndefined();
    // Without the subnets, a directed broadcast looks like any host address.
    expect(whyNoError(parse({ ipDst: '10.2.0.255' }))).toBeUndefined();
  });

  it('refuses broadcast and multicast destinations, and sources that name no single host', () => {
    for (const ipDst of ['255.255.255.255', '224.0.0.1', '239.255.255.250']) {
      expect(whyNoError(parse({ ipDst }))).toBe(`its destination ${ipDst} is broadcast or multicast`);
    }
    for (const ipSrc of ['0.0.0.0', '0.1.2.3', '127.0.0.1', '224.0.0.5', '240.0.0.1', '255.255.255.255']) {
      expect(whyNoError(parse({ ipSrc }))).toBe(`its source ${ipSrc} names no single host`);
    }
    for (const ethDst of ['ff:ff:ff:ff:ff:ff', '01:00:5e:00:00:01', '33:33:00:00:00:01']) {
      expect(whyNoError(parse({ ethDst }))).toBe(`it was sent to the link-layer ${ethDst}`);
    }
    for (const [ipSrc, ipDst] of [
      ['1.0.0.1', '223.255.255.255'],
      ['126.255.255.254', '128.0.0.1'],
      ['223.1.1.1', '10.0.0.0'],
    ]) {
      expect(whyNoError(parse({ ipSrc, ipDst })), `${ipSrc} -> ${ipDst}`).toBeUndefined();
    }
  });
});

describe('buildIcmpError', () => {
  it('sends Ethernet II + IPv4 (TTL 64, ICMP) from the gateway to the packet source, checksums valid', () => {
    const frame = ipv4Frame({ ipSrc: '10.1.0.5', ipDst: '10.9.9.9', ttl: 1, payload: udp(33434, 33434) });
    const e = icmpParts(errorAbout({}, 'time-exceeded', frame));
    expect(e).toMatchObject({
      ethDst: GATEWAY.ethDst,
      ethSrc: GATEWAY.ethSrc,
      ethertype: 0x0800,
      versionIhl: 0x45,
      ttl: 64,
      protocol: 1,
      ipSrc: '10.1.0.1',
      ipDst: '10.1.0.5',
      type: 11,
      code: 0,
      unused: 0,
    });
    expect(e.totalLength).toBe(20 + 8 + (frame.length - 14));
    expect(checksumHolds(e.ipHeader)).toBe(true);
    expect(checksumHolds(e.message)).toBe(true);
    // The quote: the offending IP header and payload, byte for byte.
    expect(Buffer.compare(e.quote, frame.subarray(14))).toBe(0);
  });

  it('names each error by its RFC 792 type and code', () => {
    const expected: Record<IcmpError['kind'], [number, number]> = {
      'time-exceeded': [11, 0],
      'net-unreachable': [3, 0],
      'host-unreachable': [3, 1],
      'protocol-unreachable': [3, 2],
      'port-unreachable': [3, 3],
    };
    for (const [kind, [type, code]] of Object.entries(expected)) {
      const e = icmpParts(errorAbout({ payload: udp(5, 6) }, kind as IcmpError['kind']));
      expect([e.type, e.code], kind).toEqual([type, code]);
      expect(checksumHolds(e.message), kind).toBe(true);
    }
  });

  it('quotes as much as keeps the error IP packet within 576 bytes', () => {
    const big = ipv4Frame({
      payload: udp(
        1,
        2,
        Uint8Array.from({ length: 1500 - 28 }, (_, i) => i * 7),
      ),
    });
    expect(big.length - 14).toBe(1500);
    const e = errorAbout({}, 'net-unreachable', big);
    expect(e.length - 14).toBe(576);
    const parts = icmpParts(e);
    expect(parts.totalLength).toBe(576);
    expect(Buffer.compare(parts.quote, big.subarray(14, 14 + 576 - 28))).toBe(0);
    expect(checksumHolds(parts.ipHeader) && checksumHolds(parts.message)).toBe(true);
    // At the edge: a packet that just fits is quoted whole, one byte more is cut.
    for (const ipLength of [548, 549]) {
      const f = ipv4Frame({ payload: new Uint8Array(ipLength - 20) });
      const q = icmpParts(errorAbout({}, 'net-unreachable', f)).quote;
      expect(q.length).toBe(Math.min(ipLength, 548));
    }
  });

  it('quotes neither the padding nor the VLAN tag, and always sends untagged', () => {
    const payload = udp(1, 2, new Uint8Array(0));
    const padded = ipv4Frame({ payload, padding: 18, vlan: 30 });
    const e = errorAbout({}, 'port-unreachable', padded);
    const parts = icmpParts(e);
    expect(parts.ethertype).toBe(0x0800);
    expect(Buffer.compare(parts.quote, padded.subarray(18, 18 + 28))).toBe(0);
    expect(e.length).toBe(14 + 20 + 8 + 28);
  });

  it('checksums an odd-length quote as if padded with a zero byte', () => {
    const frame = ipv4Frame({ payload: udp(1, 2, Uint8Array.from([0xff, 0xfe, 0xfd])) });
    const parts = icmpParts(errorAbout({}, 'port-unreachable', frame));
    expect(parts.message.length % 2).toBe(1);
    expect(checksumHolds(parts.message)).toBe(true);
    // Read the other way: the checksum field is the complement of the sum of the rest.
    const zeroed = Buffer.from(parts.message);
    zeroed.writeUInt16BE(0, 2);
    expect(parts.message.readUInt16BE(2)).toBe(~onesComplementSum(zeroed) & 0xffff);
  });

  it('throws on addresses it cannot write', () => {
    const frame = ipv4Frame();
    const p = parseIpv4Frame(frame);
    const kind = { kind: 'net-unreachable' } as const;
    expect(() => buildIcmpError(frame, p, kind, { ...GATEWAY, ethDst: 'nope' })).toThrow(/ethDst: 'nope'/);
    expect(() => buildIcmpError(frame, p, kind, { ...GATEWAY, ethSrc: '0a:57:72' })).toThrow(/ethSrc/);
    expect(() => buildIcmpError(frame, p, kind, { ...GATEWAY, ipSrc: '10.1.0.256' })).toThrow(/ipSrc/);
  });
});

describe('internetChecksum', () => {
  it('matches the RFC 1071 example and an independent sum over any range', () => {
    // RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2; its checksum is the complement.
    expect(internetChecksum(Buffer.from('0001f203f4f5f6f7', 'hex'), 0, 8)).toBe(~0xddf2 & 0xffff);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const buf = Buffer.from(bytes);
        const start = bytes.length === 0 ? 0 : a % (bytes.length + 1);
        const end = start + (bytes.length === 0 ? 0 : b % (bytes.length - start + 1));
        expect(internetChecksum(buf, start, end)).toBe(~onesComplementSum(buf.subarray(start, end)) & 0xffff);
      }),
    );
  });
});

describe('property: any valid IPv4 packet', () => {
  const octet = fc.integer({ min: 0, max: 255 });
  const ip = (first: fc.Arbitrary<number>) => fc.tuple(first, octet, octet, octet).map((o) => o.join('.'));
  const packet = fc.record({
    ipSrc: ip(fc.integer({ min: 1, max: 223 }).filter((a) => a !== 127)),
    ipDst: ip(fc.integer({ min: 0, max: 255 })),
    ttl: octet,
    protocol: octet,
    payload: fc.uint8Array({ maxLength: 1600 }),
    options: fc.integer({ min: 0, max: 10 }).map((words) => new Uint8Array(words * 4).fill(1)),
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
        const frame = ipv4Frame(spec);
        const ipLength = 20 + spec.options.length + spec.payload.length;
        const ipStart = spec.vlan === undefined ? 14 : 18;
        const out = buildIcmpError(frame, parseIpv4Frame(frame), { kind: k }, GATEWAY);
        const back = parseIpv4Frame(out);
        expect(back).toMatchObject({
          ethSrc: GATEWAY.ethSrc,
          ethDst: GATEWAY.ethDst,
          ipSrc: GATEWAY.ipSrc,
          ipDst: spec.ipSrc,
          ttl: 64,
          protocol: 1,
          headerLength: 20,
          ipStart: 14,
          ipEnd: out.length,
        });
        const parts = icmpParts(out);
        expect(back.icmpType).toBe(parts.type);
        expect(out.length - 14).toBeLessThanOrEqual(576);
        expect(checksumHolds(parts.ipHeader)).toBe(true);
        expect(checksumHolds(parts.message)).toBe(true);
        const quoted = Math.min(ipLength, 576 - 28);
        expect(Buffer.compare(parts.quote, frame.subarray(ipStart, ipStart + quoted))).toBe(0);
        expect(whyNoError(back)).toMatch(/itself an ICMP error/);
      }),
      { numRuns: 300 },
    );
  });
});
