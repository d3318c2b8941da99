import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { icmpv6Checksum } from '../../../controller/inet-checksum.js';
import { formatIpv6, parseIp } from '../../../controller/intent/net.js';
import {
  buildNeighborSolicitation,
  ipv6MulticastMac,
  isNeighborAdvertisementFrame,
  NdParseError,
  parseNeighborAdvertisement,
  solicitedNodeAddress,
} from '../../../controller/router/nd-frame.js';

/**
 * controller/router/nd-frame.ts against RFC 4861 as read here, byte offset by byte offset: the test
 * decodes and builds frames with its own helpers (its own checksum too), sharing no code with the
 * module but the canonical address text of controller/intent/net.ts.
 */

const hex = (b: Buffer, from: number, to: number): string =>
  [...b.subarray(from, to)].map((x) => x.toString(16).padStart(2, '0')).join(':');
const macBytes = (mac: string): number[] => mac.split(':').map((h) => Number.parseInt(h, 16));
const v6Bytes = (ip: string): number[] => {
  const v = parseIp(ip)!.value;
  return Array.from({ length: 16 }, (_, i) => Number((v >> BigInt(8 * (15 - i))) & 0xffn));
};
const v6Text = (b: Buffer, at: number): string =>
  formatIpv6(BigInt(`0x${b.subarray(at, at + 16).toString('hex')}`));
const fromHex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

/** RFC 1071 by hand: 16-bit words summed, carries folded, inverted. */
function checksum16(bytes: number[]): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) sum += (bytes[i]! << 8) | (bytes[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** The ICMPv6 checksum of `msg` (its checksum field zero) from `src` to `dst` (RFC 8200 8.1). */
const icmp6Sum = (src: string, dst: string, msg: number[]): number =>
  checksum16([
    ...v6Bytes(src),
    ...v6Bytes(dst),
    0,
    0,
    msg.length >> 8,
    msg.length & 0xff,
    0,
    0,
    0,
    58,
    ...msg,
  ]);

/** An Ethernet frame of one Neighbor Advertisement, every field settable, optionally 802.1Q-tagged. */
function naFrame(
  a: {
    ethDst?: string;
    ethSrc?: string;
    vlan?: number;
    ethertype?: number;
    nextHeader?: number;
    hopLimit?: number;
    ipSrc?: string;
    ipDst?: string;
    type?: number;
    code?: number;
    flags?: number;
    target?: string;
    /** Option bytes after the target; a TLLA of targetMac by default. */
    options?: number[];
    targetMac?: string;
    /** Replaces the computed checksum. */
    checksum?: number;
    /** Replaces the IPv6 payload length (the ICMPv6 message's). */
    payloadLength?: number;
    pad?: number;
  } = {},
): Buffer {
  const ipSrc = a.ipSrc ?? 'fd00:99::5';
  const ipDst = a.ipDst ?? 'fd00:99::1';
  const options = a.options ?? [2, 1, ...macBytes(a.targetMac ?? '02:00:00:00:99:05')];
  const msg = [a.type ?? 136, a.code ?? 0, 0, 0, a.flags ?? 0x60, 0, 0, 0];
  msg.push(...v6Bytes(a.target ?? ipSrc), ...options);
  const sum = a.checksum ?? icmp6Sum(ipSrc, ipDst, msg);
  msg[2] = sum >> 8;
  msg[3] = sum & 0xff;
  const bytes = [...macBytes(a.ethDst ?? '0a:57:72:00:00:64'), ...macBytes(a.ethSrc ?? '02:00:00:00:99:05')];
  if (a.vlan !== undefined) bytes.push(0x81, 0x00, (a.vlan >> 8) & 0x0f, a.vlan & 0xff);
  const ethertype = a.ethertype ?? 0x86dd;
  const length = a.payloadLength ?? msg.length;
  bytes.push(ethertype >> 8, ethertype & 0xff, 0x60, 0, 0, 0, length >> 8, length & 0xff);
  bytes.push(a.nextHeader ?? 58, a.hopLimit ?? 255, ...v6Bytes(ipSrc), ...v6Bytes(ipDst), ...msg);
  return Buffer.from([...bytes, ...new Array<number>(a.pad ?? 0).fill(0)]);
}

describe('solicitedNodeAddress and ipv6MulticastMac', () => {
  it('keeps the low 24 bits under ff02::1:ff00:0/104, and the low 32 under 33:33', () => {
    expect(solicitedNodeAddress('fd00::1:2345:6789')).toBe('ff02::1:ff45:6789');
    expect(ipv6MulticastMac('ff02::1:ff45:6789')).toBe('33:33:ff:45:67:89');
    expect(solicitedNodeAddress('FE80::0000:00AB:0001')).toBe('ff02::1:ffab:1');
    expect(ipv6MulticastMac('ff02::1')).toBe('33:33:00:00:00:01');
  });

  it('refuses what is not IPv6', () => {
    expect(() => solicitedNodeAddress('10.0.0.1')).toThrow("'10.0.0.1' is not an IPv6 address");
    expect(() => ipv6MulticastMac('fd00::g')).toThrow(RangeError);
  });
});

describe('buildNeighborSolicitation', () => {
  const args = { senderMac: '0a:57:72:00:00:64', senderIp: 'fd00:99::1', targetIp: 'fd00:99::1:2345:6789' };

  it('a multicast NS to the solicited-node group, field by field, its checksum holding', () => {
    const f = buildNeighborSolicitation(args);
    expect(f.length).toBe(86);
    expect(hex(f, 0, 6)).toBe('33:33:ff:45:67:89');
    expect(hex(f, 6, 12)).toBe('0a:57:72:00:00:64');
    expect(f.readUInt16BE(12)).toBe(0x86dd);
    expect(f[14]! >> 4).toBe(6);
    expect(f.readUInt16BE(18)).toBe(32); // payload length
    expect(f[20]).toBe(58);
    expect(f[21]).toBe(255);
    expect(v6Text(f, 22)).toBe('fd00:99::1');
    expect(v6Text(f, 38)).toBe('ff02::1:ff45:6789');
    expect([f[54], f[55]]).toEqual([135, 0]);
    expect(f.readUInt32BE(58)).toBe(0); // reserved
    expect(v6Text(f, 62)).toBe('fd00:99::1:2345:6789');
    expect([f[78], f[79]]).toEqual([1, 1]); // SLLA, 8 bytes
    expect(hex(f, 80, 86)).toBe('0a:57:72:00:00:64');
    expect(icmpv6Checksum(f, 22, 38, 54, 86)).toBe(0);
    const zeroed = [...f.subarray(54, 86)];
    zeroed[2] = zeroed[3] = 0;
    expect(f.readUInt16BE(56)).toBe(icmp6Sum('fd00:99::1', 'ff02::1:ff45:6789', zeroed));
  });

  it('a unicast NS goes to the MAC and address it re-validates', () => {
    const f = buildNeighborSolicitation({ ...args, ethDst: '02:AA:BB:CC:DD:EE' });
    expect(hex(f, 0, 6)).toBe('02:aa:bb:cc:dd:ee');
    expect(v6Text(f, 38)).toBe('fd00:99::1:2345:6789');
    expect(v6Text(f, 62)).toBe('fd00:99::1:2345:6789');
    expect(f[21]).toBe(255);
    expect(icmpv6Checksum(f, 22, 38, 54, 86)).toBe(0);
  });

  it('refuses a malformed MAC or IPv6 address with a RangeError naming it', () => {
    expect(() => buildNeighborSolicitation({ ...args, senderMac: '0a-57-72-00-00-64' })).toThrow(
      "'0a-57-72-00-00-64' is not a MAC address",
    );
    expect(() => buildNeighborSolicitation({ ...args, ethDst: '0a:57:72' })).toThrow(RangeError);
    expect(() => buildNeighborSolicitation({ ...args, senderIp: '10.0.0.1' })).toThrow(
      "'10.0.0.1' is not an IPv6 address",
    );
    expect(() => buildNeighborSolicitation({ ...args, targetIp: 'fd00::1::2' })).toThrow(RangeError);
  });
});

describe('isNeighborAdvertisementFrame', () => {
  it('says yes to an untagged NA only, and never throws', () => {
    expect(isNeighborAdvertisementFrame(naFrame())).toBe(true);
    expect(isNeighborAdvertisementFrame(naFrame({ vlan: 5 }))).toBe(false);
    expect(isNeighborAdvertisementFrame(naFrame({ type: 135 }))).toBe(false);
    expect(isNeighborAdvertisementFrame(naFrame({ nextHeader: 0 }))).toBe(false);
    expect(isNeighborAdvertisementFrame(naFrame({ ethertype: 0x0800 }))).toBe(false);
    expect(
      isNeighborAdvertisementFrame(
        buildNeighborSolicitation({
          senderMac: '0a:57:72:00:00:64',
          senderIp: 'fd00::1',
          targetIp: 'fd00::2',
        }),
      ),
    ).toBe(false);
    expect(isNeighborAdvertisementFrame(naFrame().subarray(0, 54))).toBe(false);
    expect(isNeighborAdvertisementFrame(Buffer.alloc(0))).toBe(false);
  });
});

describe('parseNeighborAdvertisement', () => {
  it('reads a golden unsolicited NA, as a Linux host sends on failover', () => {
    // fd00:99::5 -> ff02::1, override flag, target fd00:99::5, TLLA 02:00:00:00:99:05.
    const f = fromHex(`
      333300000001 020000009905 86dd
      60000000 0020 3a ff
      fd000099000000000000000000000005
      ff020000000000000000000000000001
      88 00 c05c 20000000
      fd000099000000000000000000000005
      02 01 020000009905`);
    const msg = [...f.subarray(54)];
    msg[2] = msg[3] = 0;
    expect(icmp6Sum('fd00:99::5', 'ff02::1', msg)).toBe(0xc05c);
    expect(isNeighborAdvertisementFrame(f)).toBe(true);
    expect(parseNeighborAdvertisement(f)).toEqual({
      ethDst: '33:33:00:00:00:01',
      ethSrc: '02:00:00:00:99:05',
      ipSrc: 'fd00:99::5',
      ipDst: 'ff02::1',
      target: 'fd00:99::5',
      router: false,
      solicited: false,
      override: true,
      targetMac: '02:00:00:00:99:05',
    });
  });

  it('reads a solicited unicast NA without a TLLA, padding after it ignored', () => {
    const f = naFrame({ flags: 0xc0, options: [], target: 'fd00:99::1:5', pad: 20 });
    const na = parseNeighborAdvertisement(f);
    expect(na).toMatchObject({
      ipSrc: 'fd00:99::5',
      ipDst: 'fd00:99::1',
      target: 'fd00:99::1:5',
      router: true,
      solicited: true,
      override: false,
    });
    expect(na.targetMac).toBeUndefined();
    expect('targetMac' in na).toBe(false);
  });

  it('reads one behind an 802.1Q tag exactly as the untagged one', () => {
    expect(parseNeighborAdvertisement(naFrame({ vlan: 30 }))).toEqual(parseNeighborAdvertisement(naFrame()));
  });

  it('skips other options and takes the TLLA among them; writes addresses canonically', () => {
    const f = naFrame({
      target: 'FD00:0:0:0:0:0:0:A',
      options: [14, 1, 1, 2, 3, 4, 5, 6, 2, 1, ...macBytes('f2:00:00:00:00:0a')],
    });
    expect(parseNeighborAdvertisement(f)).toMatchObject({
      target: 'fd00::a',
      targetMac: 'f2:00:00:00:00:0a',
    });
  });

  const expectNdError = (frame: Buffer, message: RegExp): void => {
    expect(() => parseNeighborAdvertisement(frame)).toThrow(NdParseError);
    expect(() => parseNeighborAdvertisement(frame)).toThrow(message);
  };

  it('too short', () => {
    expectNdError(Buffer.alloc(10), /10 bytes is shorter than an Ethernet header/);
    expectNdError(naFrame().subarray(0, 40), /IPv6 header of 26 bytes is shorter than 40/);
    expectNdError(naFrame({ vlan: 3 }).subarray(0, 16), /802\.1Q frame cut short/);
  });
  it('not IPv6', () => {
    expectNdError(naFrame({ ethertype: 0x0800 }), /ethertype 0x0800 is not IPv6/);
    expectNdError(naFrame({ vlan: 2, ethertype: 0x0806 }), /ethertype 0x0806 is not IPv6/);
    const v4 = naFrame();
    v4[14] = 0x45;
    expectNdError(v4, /IP version 4, not 6/);
  });
  it('next header not 58', () => {
    expectNdError(naFrame({ nextHeader: 0 }), /next header 0, not ICMPv6 \(58\)/);
  });
  it('hop limit not 255', () => {
    expectNdError(naFrame({ hopLimit: 64 }), /hop limit 64, not 255/);
  });
  it('type not 136', () => {
    expectNdError(naFrame({ type: 135 }), /ICMPv6 type 135, not a Neighbor Advertisement \(136\)/);
  });
  it('code not 0', () => {
    expectNdError(naFrame({ code: 1 }), /ICMPv6 code 1, not 0/);
  });
  it('ICMPv6 too short', () => {
    expectNdError(
      naFrame({ options: [] }).subarray(0, 54 + 20),
      /ICMPv6 message of 20 bytes is shorter than 24/,
    );
    // The payload length, not the frame's padding, ends the message.
    expectNdError(naFrame({ payloadLength: 16, pad: 40 }), /ICMPv6 message of 16 bytes is shorter than 24/);
    expectNdError(naFrame({ payloadLength: 1 }), /ICMPv6 message of 1 bytes is shorter than 24/);
  });
  it('checksum wrong', () => {
    expectNdError(naFrame({ checksum: 0x1234 }), /ICMPv6 checksum 0x1234 does not hold/);
    const flipped = naFrame();
    flipped[flipped.length - 1]! ^= 1;
    expectNdError(flipped, /checksum .* does not hold/);
  });
  it('multicast target', () => {
    expectNdError(naFrame({ target: 'ff02::1:ff00:5' }), /target ff02::1:ff00:5 is multicast/);
  });
  it('solicited flag to a multicast destination', () => {
    expectNdError(naFrame({ ipDst: 'ff02::1', flags: 0x40 }), /solicited flag set .* multicast ff02::1/);
  });
  it('option of length 0', () => {
    expectNdError(naFrame({ options: [2, 0, 0, 0, 0, 0, 0, 0] }), /option type 2 has length 0/);
  });
  it('option past the end', () => {
    expectNdError(
      naFrame({ options: [2, 2, ...macBytes('02:00:00:00:99:05')] }),
      /option type 2 of 16 bytes runs past the message end/,
    );
    expectNdError(naFrame({ options: [2] }), /option at byte 24 cut short/);
  });

  it('reads back the target and TLLA of any NA (property)', () => {
    const unicast = fc.bigInt(0n, (1n << 128n) - 1n).filter((v) => v >> 120n !== 0xffn);
    const mac = fc.uint8Array({ minLength: 6, maxLength: 6 }).map((b) => hex(Buffer.from(b), 0, 6));
    fc.assert(
      fc.property(unicast, mac, (v, targetMac) => {
        const target = formatIpv6(v);
        const na = parseNeighborAdvertisement(naFrame({ target, targetMac }));
        expect(na.target).toBe(target);
        expect(na.targetMac).toBe(targetMac);
      }),
    );
  });

  it('throws nothing but NdParseError on arbitrary bytes (property)', () => {
    const good = naFrame();
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 120 }),
      // Mostly a real NA with a few bytes changed, so the later checks are reached too.
      fc
        .array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 4 })
        .map((edits) => {
          const b = Uint8Array.from(good);
          for (const [at, value] of edits) b[at] = value;
          return b;
        }),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        try {
          parseNeighborAdvertisement(Buffer.from(b));
        } catch (err) {
          expect(err).toBeInstanceOf(NdParseError);
        }
      }),
    );
  });
});
