import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ARP_OP,
  ArpParseError,
  BROADCAST_MAC,
  buildArpRequest,
  ETH_TYPE_ARP,
  parseArpFrame,
} from '../../../controller/router/arp-frame.js';

/**
 * controller/router/arp-frame.ts against RFC 826 as read here, byte offset by byte offset: the
 * test decodes and builds frames with its own helpers (no code shared with the module).
 */

const hex = (b: Buffer, from: number, to: number): string =>
  [...b.subarray(from, to)].map((x) => x.toString(16).padStart(2, '0')).join(':');
const dotted = (b: Buffer, from: number): string => [...b.subarray(from, from + 4)].join('.');
const macBytes = (mac: string): number[] => mac.split(':').map((h) => Number.parseInt(h, 16));
const ipBytes = (ip: string): number[] => ip.split('.').map(Number);

/** An Ethernet frame of one ARP packet, every field settable, optionally 802.1Q-tagged. */
function arpFrame(
  a: {
    ethDst?: string;
    ethSrc?: string;
    vlan?: number;
    ethertype?: number;
    htype?: number;
    ptype?: number;
    hlen?: number;
    plen?: number;
    op?: number;
    sha?: string;
    spa?: string;
    tha?: string;
    tpa?: string;
    pad?: number;
  } = {},
): Buffer {
  const bytes: number[] = [
    ...macBytes(a.ethDst ?? '0a:57:72:00:00:64'),
    ...macBytes(a.ethSrc ?? '02:00:00:00:aa:01'),
  ];
  if (a.vlan !== undefined) bytes.push(0x81, 0x00, (a.vlan >> 8) & 0x0f, a.vlan & 0xff);
  const ethertype = a.ethertype ?? 0x0806;
  bytes.push(ethertype >> 8, ethertype & 0xff);
  const htype = a.htype ?? 1;
  const ptype = a.ptype ?? 0x0800;
  const op = a.op ?? 2;
  bytes.push(
    htype >> 8,
    htype & 0xff,
    ptype >> 8,
    ptype & 0xff,
    a.hlen ?? 6,
    a.plen ?? 4,
    op >> 8,
    op & 0xff,
  );
  bytes.push(...macBytes(a.sha ?? '02:00:00:00:aa:01'), ...ipBytes(a.spa ?? '10.1.0.50'));
  bytes.push(...macBytes(a.tha ?? '0a:57:72:00:00:64'), ...ipBytes(a.tpa ?? '10.1.0.1'));
  return Buffer.from([...bytes, ...new Array<number>(a.pad ?? 0).fill(0)]);
}

describe('buildArpRequest', () => {
  it('a broadcast who-has, field by field at its RFC 826 offsets, zero-padded to 60 bytes', () => {
    const f = buildArpRequest({
      senderMac: '0a:57:72:00:00:64',
      senderIp: '10.1.0.1',
      targetIp: '10.1.0.200',
    });
    expect(f.length).toBe(60);
    expect(hex(f, 0, 6)).toBe('ff:ff:ff:ff:ff:ff');
    expect(hex(f, 6, 12)).toBe('0a:57:72:00:00:64');
    expect(f.readUInt16BE(12)).toBe(0x0806);
    expect(f.readUInt16BE(14)).toBe(1); // htype Ethernet
    expect(f.readUInt16BE(16)).toBe(0x0800); // ptype IPv4
    expect([f[18], f[19]]).toEqual([6, 4]);
    expect(f.readUInt16BE(20)).toBe(1); // request
    expect(hex(f, 22, 28)).toBe('0a:57:72:00:00:64'); // sha
    expect(dotted(f, 28)).toBe('10.1.0.1'); // spa
    expect(hex(f, 32, 38)).toBe('00:00:00:00:00:00'); // tha unknown
    expect(dotted(f, 38)).toBe('10.1.0.200'); // tpa
    // 14 + 28 = 42 bytes of frame, then zeros up to Ethernet's minimum.
    expect([...f.subarray(42)]).toEqual(new Array(18).fill(0));
    expect(ETH_TYPE_ARP).toBe(0x0806);
    expect(ARP_OP).toEqual({ REQUEST: 1, REPLY: 2 });
  });

  it('a unicast probe goes to the MAC it re-validates, and nothing else in it changes', () => {
    const args = { senderMac: '0a:57:72:00:00:65', senderIp: '10.2.0.1', targetIp: '10.2.0.254' };
    const bcast = buildArpRequest(args);
    const ucast = buildArpRequest({ ...args, ethDst: '02:aa:bb:cc:dd:ee' });
    expect(hex(ucast, 0, 6)).toBe('02:aa:bb:cc:dd:ee');
    expect(ucast.subarray(6).equals(bcast.subarray(6))).toBe(true);
    // The target hardware address stays zero: it is still a question (RFC 5227 2.1.1).
    expect(hex(ucast, 32, 38)).toBe('00:00:00:00:00:00');
    // An explicit broadcast is the default.
    expect(buildArpRequest({ ...args, ethDst: BROADCAST_MAC }).equals(bcast)).toBe(true);
  });

  it('writes upper-case MAC text as the same bytes', () => {
    const lower = buildArpRequest({
      senderMac: '0a:57:72:00:00:ab',
      senderIp: '10.0.0.1',
      targetIp: '10.0.0.2',
    });
    const upper = buildArpRequest({
      senderMac: '0A:57:72:00:00:AB',
      senderIp: '10.0.0.1',
      targetIp: '10.0.0.2',
    });
    expect(upper.equals(lower)).toBe(true);
  });

  it('refuses a malformed MAC or IPv4 address with a RangeError naming it', () => {
    const ok = { senderMac: '0a:57:72:00:00:64', senderIp: '10.1.0.1', targetIp: '10.1.0.2' };
    for (const mac of [
      '',
      '0a:57:72:00:00',
      '0a:57:72:00:00:64:01',
      '0a:57:72:00:00:6',
      '0a:57:72:00:00:zz',
      '0a-57-72-00-00-64',
      '0a:57:72:00:00:1ff',
    ]) {
      expect(() => buildArpRequest({ ...ok, senderMac: mac }), mac).toThrow(RangeError);
      expect(() => buildArpRequest({ ...ok, senderMac: mac }), mac).toThrow(`'${mac}' is not a MAC address`);
      expect(() => buildArpRequest({ ...ok, ethDst: mac }), mac).toThrow(RangeError);
    }
    for (const ip of ['', '10.1.0', '10.1.0.256', '10.1.0.1.5', 'fe80::1', '10.1..1', 'x.1.0.1']) {
      expect(() => buildArpRequest({ ...ok, senderIp: ip }), ip).toThrow(RangeError);
      expect(() => buildArpRequest({ ...ok, targetIp: ip }), ip).toThrow(`'${ip}' is not an IPv4 address`);
    }
  });
});

describe('parseArpFrame', () => {
  it('reads a reply, padding after it ignored', () => {
    const f = arpFrame({
      ethDst: '0a:57:72:00:00:64',
      ethSrc: '02:00:00:00:aa:01',
      sha: '02:00:00:00:aa:02',
      spa: '10.1.0.50',
      tha: '0a:57:72:00:00:64',
      tpa: '10.1.0.1',
      pad: 18,
    });
    expect(f.length).toBe(60);
    expect(parseArpFrame(f)).toEqual({
      ethDst: '0a:57:72:00:00:64',
      ethSrc: '02:00:00:00:aa:01',
      op: 2,
      sha: '02:00:00:00:aa:02',
      spa: '10.1.0.50',
      tha: '0a:57:72:00:00:64',
      tpa: '10.1.0.1',
    });
  });

  it('reads one behind an 802.1Q tag exactly as the untagged one', () => {
    const plain = arpFrame({ spa: '192.0.2.7', sha: 'f2:00:00:00:00:07' });
    const tagged = arpFrame({ spa: '192.0.2.7', sha: 'f2:00:00:00:00:07', vlan: 30 });
    expect(tagged.length).toBe(plain.length + 4);
    expect(parseArpFrame(tagged)).toEqual(parseArpFrame(plain));
    expect(parseArpFrame(tagged)).toMatchObject({ spa: '192.0.2.7', sha: 'f2:00:00:00:00:07', op: 2 });
  });

  it('reads the op as it is (a request stays a request)', () => {
    expect(parseArpFrame(arpFrame({ op: 1 })).op).toBe(1);
    expect(parseArpFrame(arpFrame({ op: 0x1234 })).op).toBe(0x1234);
  });

  it('names what is wrong in every malformed frame', () => {
    const good = arpFrame();
    const cases: Array<[string, Buffer, RegExp]> = [
      ['empty', Buffer.alloc(0), /0 bytes is shorter than an Ethernet header/],
      ['13 bytes', good.subarray(0, 13), /13 bytes is shorter than an Ethernet header/],
      ['tag cut short', arpFrame({ vlan: 30 }).subarray(0, 16), /802\.1Q frame cut short/],
      ['IPv4', arpFrame({ ethertype: 0x0800 }), /ethertype 0x0800 is not ARP/],
      ['IPv6 behind a tag', arpFrame({ vlan: 5, ethertype: 0x86dd }), /ethertype 0x86dd is not ARP/],
      ['QinQ outer tag', arpFrame({ ethertype: 0x88a8 }), /ethertype 0x88a8 is not ARP/],
      ['ARP cut to 27 bytes', good.subarray(0, 14 + 27), /ARP of 27 bytes is shorter than 28/],
      ['header only', good.subarray(0, 14), /ARP of 0 bytes is shorter than 28/],
      [
        'tagged ARP cut short',
        arpFrame({ vlan: 30 }).subarray(0, 18 + 20),
        /ARP of 20 bytes is shorter than 28/,
      ],
      ['htype 6 (IEEE 802)', arpFrame({ htype: 6 }), /hardware 6 .*not Ethernet \/ IPv4/],
      ['ptype IPv6', arpFrame({ ptype: 0x86dd }), /protocol 0x86dd.*not Ethernet \/ IPv4/],
    ];
    for (const [what, frame, message] of cases) {
      let thrown: unknown;
      try {
        parseArpFrame(frame);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, what).toBeInstanceOf(ArpParseError);
      expect((thrown as Error).name, what).toBe('ArpParseError');
      expect((thrown as Error).message, what).toMatch(message);
    }
  });

  it('refuses address lengths other than 6 and 4 (the offsets would be wrong)', () => {
    for (const bad of [{ hlen: 8 }, { plen: 16 }, { hlen: 0, plen: 0 }]) {
      expect(() => parseArpFrame(arpFrame(bad)), JSON.stringify(bad)).toThrow(ArpParseError);
    }
  });

  it('a request it builds reads back as it was asked (property)', () => {
    const mac = fc
      .uint8Array({ minLength: 6, maxLength: 6 })
      .map((b) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(':'));
    fc.assert(
      fc.property(
        mac,
        fc.ipV4(),
        fc.ipV4(),
        fc.option(mac, { nil: undefined }),
        fc.boolean(),
        fc.integer({ min: 0, max: 4095 }),
        (senderMac, senderIp, targetIp, ethDst, tag, vlan) => {
          const built = buildArpRequest({ senderMac, senderIp, targetIp, ...(ethDst ? { ethDst } : {}) });
          // The same frame with an 802.1Q tag inserted after the MACs, as it would cross a trunk.
          const frame = tag
            ? Buffer.concat([
                built.subarray(0, 12),
                Buffer.from([0x81, 0x00, vlan >> 8, vlan & 0xff]),
                built.subarray(12),
              ])
            : built;
          expect(parseArpFrame(frame)).toEqual({
            ethDst: ethDst ?? 'ff:ff:ff:ff:ff:ff',
            ethSrc: senderMac,
            op: 1,
            sha: senderMac,
            spa: senderIp,
            tha: '00:00:00:00:00:00',
            tpa: targetIp,
          });
        },
      ),
    );
  });

  it('throws nothing but ArpParseError on any bytes (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.boolean(), (bytes, arp) => {
        const b = Buffer.from(bytes);
        // Half of them claim to be ARP, so the later checks are reached too.
        if (arp && b.length >= 14) b.writeUInt16BE(0x0806, 12);
        try {
          parseArpFrame(b);
        } catch (err) {
          expect(err).toBeInstanceOf(ArpParseError);
        }
      }),
    );
  });
});
