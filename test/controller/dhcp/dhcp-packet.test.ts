import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildDhcpFrame,
  buildDhcpRequestFrame,
  DHCP,
  DhcpParseError,
  type DhcpReply,
  type DhcpRequest,
  parseDhcpFrame,
  parseDhcpReplyFrame,
} from '../../../controller/dhcp/dhcp-packet.js';

// Offsets in a frame with a 20-byte IPv4 header.
const IP = 14;
const UDP = 34;
const BOOTP = 42;
const OPTIONS = BOOTP + 240;

const request: DhcpRequest = {
  ethSrc: '52:54:00:12:34:56',
  ethDst: 'ff:ff:ff:ff:ff:ff',
  ipSrc: '0.0.0.0',
  ipDst: '255.255.255.255',
  xid: 0x3903f326,
  secs: 3,
  flags: 0x8000,
  ciaddr: '0.0.0.0',
  giaddr: '0.0.0.0',
  chaddr: '52:54:00:12:34:56',
  messageType: DHCP.REQUEST,
  requestedIp: '10.0.0.5',
  serverId: '10.0.0.1',
  hostname: 'vm-01',
  paramList: [1, 3, 6, 15, 26],
  clientId: Buffer.from('01525400123456', 'hex'),
};

const reply: DhcpReply = {
  messageType: DHCP.ACK,
  xid: 0x3903f326,
  secs: 0,
  flags: 0,
  chaddr: '52:54:00:12:34:56',
  ciaddr: '0.0.0.0',
  yiaddr: '10.0.0.5',
  giaddr: '0.0.0.0',
  ethSrc: '02:00:00:00:00:01',
  ethDst: '52:54:00:12:34:56',
  ipSrc: '10.0.0.1',
  ipDst: '10.0.0.5',
  serverId: '10.0.0.1',
  subnetMask: '255.255.255.0',
  router: '10.0.0.1',
  dnsServers: ['10.0.0.1', '1.1.1.1'],
  hostname: 'vm-01',
  domainName: 'tenant.example',
  mtu: 1450,
  leaseSeconds: 86400,
  renewalSeconds: 43200,
  rebindingSeconds: 75600,
};

function onesSum(b: Uint8Array, start: number, end: number): number {
  let s = 0;
  for (let i = start; i < end; i += 2) s += (b[i]! << 8) | (i + 1 < end ? b[i + 1]! : 0);
  while (s > 0xffff) s = (s & 0xffff) + (s >>> 16);
  return s;
}

function ipChecksumOk(frame: Buffer): boolean {
  const ihl = (frame[IP]! & 0xf) * 4;
  return onesSum(frame, IP, IP + ihl) === 0xffff;
}

function udpChecksumOk(frame: Buffer): boolean {
  const udpLen = frame.readUInt16BE(UDP + 4);
  const pseudo = Buffer.concat([
    frame.subarray(IP + 12, IP + 20),
    Buffer.of(0, 17, udpLen >> 8, udpLen & 0xff),
  ]);
  const all = Buffer.concat([pseudo, frame.subarray(UDP, UDP + udpLen)]);
  return onesSum(all, 0, all.length) === 0xffff;
}

/** Option codes in wire order up to and including END, and the offset just past END. */
function walkOptions(frame: Buffer): { codes: number[]; end: number } {
  const codes: number[] = [];
  let i = OPTIONS;
  while (i < frame.length) {
    const c = frame[i]!;
    codes.push(c);
    if (c === 255) return { codes, end: i + 1 };
    i += c === 0 ? 1 : 2 + frame[i + 1]!;
  }
  return { codes, end: i };
}

/** A valid request frame whose options are replaced by raw bytes, lengths fixed up (checksums left stale). */
function withOptions(raw: number[], base: Buffer = buildDhcpRequestFrame(request)): Buffer {
  const frame = Buffer.concat([base.subarray(0, OPTIONS), Buffer.from(raw)]);
  return fixLengths(frame);
}

function fixLengths(frame: Buffer): Buffer {
  const ihl = (frame[IP]! & 0xf) * 4;
  frame.writeUInt16BE(frame.length - IP, IP + 2);
  frame.writeUInt16BE(frame.length - IP - ihl, IP + ihl + 4);
  return frame;
}

function mutate(frame: Buffer, f: (b: Buffer) => void): Buffer {
  const b = Buffer.from(frame);
  f(b);
  return b;
}

function expectParseError(fn: () => unknown, message: RegExp): void {
  expect(fn).toThrow(DhcpParseError);
  expect(fn).toThrow(message);
}

const macArb = fc
  .uint8Array({ minLength: 6, maxLength: 6 })
  .map((b) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(':'));
const ipArb = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((q) => q.join('.'));
const u16 = fc.nat(0xffff);
const u32 = fc.nat(0xffffffff);
// Text must survive UTF-8 both ways, fit one option, and not end in the NULs that parsing strips.
const textArb = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
  .filter((s) => Buffer.byteLength(s) <= 255 && !s.endsWith('\0'));

const replyArb: fc.Arbitrary<DhcpReply> = fc.record(
  {
    messageType: fc.constantFrom(DHCP.OFFER, DHCP.ACK, DHCP.NAK),
    xid: u32,
    secs: u16,
    flags: fc.constantFrom(0, 0x8000),
    chaddr: macArb,
    ciaddr: ipArb,
    yiaddr: ipArb,
    giaddr: ipArb,
    ethSrc: macArb,
    ethDst: macArb,
    ipSrc: ipArb,
    ipDst: ipArb,
    serverId: ipArb,
    subnetMask: ipArb,
    router: ipArb,
    dnsServers: fc.array(ipArb, { minLength: 1, maxLength: 8 }),
    hostname: textArb,
    domainName: textArb,
    mtu: u16,
    leaseSeconds: u32,
    renewalSeconds: u32,
    rebindingSeconds: u32,
    message: textArb,
  },
  {
    requiredKeys: [
      'messageType',
      'xid',
      'flags',
      'chaddr',
      'ciaddr',
      'yiaddr',
      'ethSrc',
      'ethDst',
      'ipSrc',
      'ipDst',
      'serverId',
    ],
  },
);

const requestArb: fc.Arbitrary<DhcpRequest> = fc.record(
  {
    ethSrc: macArb,
    ethDst: macArb,
    ipSrc: ipArb,
    ipDst: ipArb,
    xid: u32,
    secs: u16,
    flags: u16,
    ciaddr: ipArb,
    giaddr: ipArb,
    chaddr: macArb,
    messageType: fc.integer({ min: 1, max: 8 }),
    requestedIp: ipArb,
    serverId: ipArb,
    hostname: textArb,
    paramList: fc.array(fc.nat(255), { maxLength: 40 }),
    clientId: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)),
  },
  {
    requiredKeys: [
      'ethSrc',
      'ethDst',
      'ipSrc',
      'ipDst',
      'xid',
      'secs',
      'flags',
      'ciaddr',
      'giaddr',
      'chaddr',
      'messageType',
      'paramList',
    ],
  },
);

describe('DHCP packet round trips', () => {
  it('client message: build -> parse', () => {
    expect(parseDhcpFrame(buildDhcpRequestFrame(request))).toEqual(request);
  });

  it('client message with only the required fields: absent options stay absent, paramList is []', () => {
    const { requestedIp, serverId, hostname, clientId, paramList, ...bare } = request;
    const parsed = parseDhcpFrame(buildDhcpRequestFrame({ ...bare, messageType: DHCP.DISCOVER }));
    expect(parsed).toEqual({ ...bare, messageType: DHCP.DISCOVER, paramList: [] });
    for (const k of ['requestedIp', 'serverId', 'hostname', 'clientId']) expect(k in parsed).toBe(false);
  });

  it('parseDhcpFrame returns a copy of the client id, not a view into the frame', () => {
    const frame = buildDhcpRequestFrame(request);
    const parsed = parseDhcpFrame(frame);
    frame.fill(0);
    expect(parsed.clientId).toEqual(request.clientId);
  });

  it('server reply: build -> parse', () => {
    expect(parseDhcpReplyFrame(buildDhcpFrame(reply))).toEqual(reply);
  });

  it('NAK with a message; secs and giaddr default to 0', () => {
    const nak: DhcpReply = {
      messageType: DHCP.NAK,
      xid: 7,
      flags: 0x8000,
      chaddr: '52:54:00:12:34:56',
      ciaddr: '0.0.0.0',
      yiaddr: '0.0.0.0',
      ethSrc: '02:00:00:00:00:01',
      ethDst: 'ff:ff:ff:ff:ff:ff',
      ipSrc: '10.0.0.1',
      ipDst: '255.255.255.255',
      serverId: '10.0.0.1',
      message: 'requested address not on this network',
    };
    expect(parseDhcpReplyFrame(buildDhcpFrame(nak))).toEqual({ ...nak, secs: 0, giaddr: '0.0.0.0' });
  });

  it('property: any reply survives build -> parse', () => {
    fc.assert(
      fc.property(replyArb, (r) => {
        const frame = buildDhcpFrame(r);
        expect(parseDhcpReplyFrame(frame)).toEqual({ secs: 0, giaddr: '0.0.0.0', ...r });
        expect(ipChecksumOk(frame)).toBe(true);
        expect(udpChecksumOk(frame)).toBe(true);
      }),
    );
  });

  it('property: any client message survives build -> parse', () => {
    fc.assert(
      fc.property(requestArb, (r) => {
        const frame = buildDhcpRequestFrame(r);
        expect(parseDhcpFrame(frame)).toEqual(r);
        expect(udpChecksumOk(frame)).toBe(true);
      }),
    );
  });
});

describe('DHCP packet wire bytes', () => {
  const frame = buildDhcpFrame(reply);

  it('Ethernet, IPv4 and UDP headers', () => {
    expect(frame.subarray(0, 6).toString('hex')).toBe('525400123456');
    expect(frame.subarray(6, 12).toString('hex')).toBe('020000000001');
    expect(frame.readUInt16BE(12)).toBe(0x0800);
    expect(frame[IP]).toBe(0x45);
    expect(frame.readUInt16BE(IP + 2)).toBe(frame.length - IP);
    expect(frame.readUInt16BE(IP + 4)).toBe(0); // id
    expect(frame.readUInt16BE(IP + 6)).toBe(0); // no DF, no fragment
    expect(frame[IP + 8]).toBe(64);
    expect(frame[IP + 9]).toBe(17);
    expect(frame.subarray(IP + 12, IP + 20).toString('hex')).toBe('0a0000010a000005');
    expect(frame.readUInt16BE(UDP)).toBe(67);
    expect(frame.readUInt16BE(UDP + 2)).toBe(68);
    expect(frame.readUInt16BE(UDP + 4)).toBe(frame.length - UDP);
  });

  it('IPv4 header checksum sums to zero; UDP checksum verifies over the pseudo-header', () => {
    expect(frame.readUInt16BE(IP + 10)).not.toBe(0);
    expect(ipChecksumOk(frame)).toBe(true);
    expect(frame.readUInt16BE(UDP + 6)).not.toBe(0);
    expect(udpChecksumOk(frame)).toBe(true);
    const req = buildDhcpRequestFrame(request);
    expect(ipChecksumOk(req)).toBe(true);
    expect(udpChecksumOk(req)).toBe(true);
  });

  it('BOOTP: op 2, Ethernet hardware, chaddr padded, sname/file zero, magic cookie', () => {
    expect([...frame.subarray(BOOTP, BOOTP + 4)]).toEqual([2, 1, 6, 0]);
    expect(frame.subarray(BOOTP + 28, BOOTP + 44).toString('hex')).toBe(`525400123456${'00'.repeat(10)}`);
    expect(frame.subarray(BOOTP + 44, BOOTP + 236).every((b) => b === 0)).toBe(true);
    expect(frame.subarray(BOOTP + 236, BOOTP + 240).toString('hex')).toBe('63825363');
    expect(buildDhcpRequestFrame(request)[BOOTP]).toBe(1);
  });

  it('BOOTP part is at least 300 bytes even with few options', () => {
    const small = buildDhcpFrame({
      ...reply,
      dnsServers: undefined,
      domainName: undefined,
      hostname: undefined,
    });
    expect(small.length - BOOTP).toBe(300);
    expect(frame.length - BOOTP).toBeGreaterThanOrEqual(300);
    expect(buildDhcpRequestFrame({ ...request, hostname: undefined }).length - BOOTP).toBe(300);
  });

  it('options: 53 first, then numeric order, END last, zero padding after', () => {
    const { codes, end } = walkOptions(frame);
    expect(codes).toEqual([53, 1, 3, 6, 12, 15, 26, 51, 54, 58, 59, 255]);
    expect(frame.subarray(OPTIONS, OPTIONS + 3).toString('hex')).toBe('350105');
    expect(frame.subarray(OPTIONS + 3, OPTIONS + 9).toString('hex')).toBe('0104ffffff00');
    expect(frame.subarray(end).every((b) => b === 0)).toBe(true);
    expect(walkOptions(buildDhcpRequestFrame(request)).codes).toEqual([53, 12, 50, 54, 55, 61, 255]);
  });

  it('a DHCPDISCOVER as udhcpc sends it, written by hand from RFC 2131', () => {
    const hex = [
      // Ethernet: broadcast <- 52:54:00:12:34:56, IPv4
      'ffffffffffff',
      '525400123456',
      '0800',
      // IPv4: v4 IHL 5, total 328, id 0, no flags, TTL 64, UDP, checksum, 0.0.0.0 -> 255.255.255.255
      '4500 0148 0000 0000 4011 79a6 00000000 ffffffff',
      // UDP 68 -> 67, length 308, checksum
      '0044 0043 0134 73e0',
      // BOOTP: op 1, htype 1, hlen 6, hops 0, xid, secs 0, flags 0
      '01010600 3903f326 0000 0000',
      // ciaddr, yiaddr, siaddr, giaddr
      '00000000 00000000 00000000 00000000',
      // chaddr (16 bytes), then sname (64) and file (128) all zero
      `525400123456${'00'.repeat(10)}`,
      '00'.repeat(192),
      '63825363',
      '350101', // 53 message type: DISCOVER
      '3d07 01 525400123456', // 61 client id: htype 1 + MAC
      '3902 0240', // 57 max message size 576
      '3707 01 03 06 0c 0f 1c 2a', // 55 parameter request list
      '0c05 766d2d3031', // 12 hostname "vm-01"
      'ff',
      '00'.repeat(27), // padding to 300 bytes of BOOTP
    ];
    const frame = Buffer.from(hex.join('').replace(/ /g, ''), 'hex');
    expect(frame.length).toBe(14 + 328);
    expect(ipChecksumOk(frame)).toBe(true);
    expect(udpChecksumOk(frame)).toBe(true);
    expect(parseDhcpFrame(frame)).toEqual({
      ethSrc: '52:54:00:12:34:56',
      ethDst: 'ff:ff:ff:ff:ff:ff',
      ipSrc: '0.0.0.0',
      ipDst: '255.255.255.255',
      xid: 0x3903f326,
      secs: 0,
      flags: 0,
      ciaddr: '0.0.0.0',
      giaddr: '0.0.0.0',
      chaddr: '52:54:00:12:34:56',
      messageType: DHCP.DISCOVER,
      hostname: 'vm-01',
      paramList: [1, 3, 6, 12, 15, 28, 42],
      clientId: Buffer.from('01525400123456', 'hex'),
    });
  });
});

describe('DHCP packet parsing: tolerated input', () => {
  const base = buildDhcpRequestFrame(request);

  it('IPv4 header with options (IHL 6)', () => {
    // Router Alert (RFC 2113), the one IP option a DHCP packet might plausibly carry.
    const frame = Buffer.concat([base.subarray(0, UDP), Buffer.from('94040000', 'hex'), base.subarray(UDP)]);
    frame[IP] = 0x46;
    fixLengths(frame);
    expect(parseDhcpFrame(frame)).toEqual(request);
  });

  it('checksums are not verified (offload may leave them unset)', () => {
    const frame = mutate(base, (b) => {
      b.writeUInt16BE(0, IP + 10);
      b.writeUInt16BE(0x1234, UDP + 6);
    });
    expect(parseDhcpFrame(frame)).toEqual(request);
  });

  it('Ethernet padding after the IPv4 total length is ignored', () => {
    const frame = Buffer.concat([base, Buffer.alloc(20, 0xee)]);
    expect(parseDhcpFrame(frame)).toEqual(request);
  });

  it('bytes after the UDP length (within the IPv4 packet) are ignored', () => {
    const frame = withOptions([53, 1, 1, 255]);
    frame.writeUInt16BE(frame.readUInt16BE(UDP + 4) - 1, UDP + 4); // cuts END off
    expect(parseDhcpFrame(frame).messageType).toBe(DHCP.DISCOVER);
  });

  it('missing END, PAD bytes, and anything after END', () => {
    expect(parseDhcpFrame(withOptions([0, 0, 53, 1, 1, 0, 12, 2, 0x61, 0x62])).hostname).toBe('ab');
    // After END even an overrunning option is not looked at.
    expect(parseDhcpFrame(withOptions([53, 1, 1, 255, 12, 200, 1])).messageType).toBe(DHCP.DISCOVER);
  });

  it('duplicate options: the last one wins', () => {
    const parsed = parseDhcpFrame(withOptions([53, 1, 1, 12, 1, 0x61, 53, 1, 3, 12, 1, 0x62, 255]));
    expect(parsed.messageType).toBe(DHCP.REQUEST);
    expect(parsed.hostname).toBe('b');
  });

  it('hostname: empty is absent, trailing NULs dropped, non-UTF-8 read as latin1', () => {
    expect('hostname' in parseDhcpFrame(withOptions([53, 1, 1, 12, 0, 255]))).toBe(false);
    expect(parseDhcpFrame(withOptions([53, 1, 1, 12, 3, 0x61, 0, 0, 255])).hostname).toBe('a');
    expect(parseDhcpFrame(withOptions([53, 1, 1, 12, 3, 0x63, 0x61, 0xe9, 255])).hostname).toBe('caé');
    expect(parseDhcpFrame(withOptions([53, 1, 1, 12, 4, 0x63, 0x61, 0xc3, 0xa9, 255])).hostname).toBe('caé');
  });

  it('empty parameter list is [], empty client id is absent, option 52 is ignored', () => {
    const parsed = parseDhcpFrame(withOptions([53, 1, 1, 55, 0, 61, 0, 52, 1, 3, 255]));
    expect(parsed.paramList).toEqual([]);
    expect('clientId' in parsed).toBe(false);
  });
});

describe('DHCP packet parsing: errors name the problem', () => {
  const base = buildDhcpRequestFrame(request);
  const replyFrame = buildDhcpFrame(reply);

  it('short frame', () => {
    expectParseError(
      () => parseDhcpFrame(Buffer.alloc(40)),
      /frame: 40 bytes is too short for Ethernet \+ IPv4 \+ UDP/,
    );
  });

  it('non-IPv4 ethertypes, including an 802.1Q tag', () => {
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => b.writeUInt16BE(0x86dd, 12))),
      /ethertype 0x86dd is not IPv4/,
    );
    const tagged = Buffer.concat([base.subarray(0, 12), Buffer.from('81000064', 'hex'), base.subarray(12)]);
    expectParseError(() => parseDhcpFrame(tagged), /ethertype 0x8100 is not IPv4/);
  });

  it('IP version and header length', () => {
    expectParseError(() => parseDhcpFrame(mutate(base, (b) => (b[IP] = 0x65))), /IP version 6 is not 4/);
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => (b[IP] = 0x44))),
      /IPv4 header length 4 words is invalid/,
    );
    // IHL 15 with a total length that covers only 20 + 8 bytes.
    expectParseError(
      () =>
        parseDhcpFrame(
          mutate(base, (b) => {
            b[IP] = 0x4f;
            b.writeUInt16BE(28, IP + 2);
          }),
        ),
      /IPv4 total length 28 is less than the 60-byte header plus a UDP header/,
    );
  });

  it('IPv4 total length beyond the frame', () => {
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => b.writeUInt16BE(base.length - IP + 1, IP + 2))),
      /IPv4 total length \d+ exceeds the frame/,
    );
  });

  it('fragments', () => {
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => b.writeUInt16BE(0x2000, IP + 6))),
      /IPv4 fragment \(MF 1, offset 0\)/,
    );
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => b.writeUInt16BE(0x0010, IP + 6))),
      /IPv4 fragment \(MF 0, offset 128\)/,
    );
    // DF alone is fine.
    expect(parseDhcpFrame(mutate(base, (b) => b.writeUInt16BE(0x4000, IP + 6)))).toEqual(request);
  });

  it('not UDP', () => {
    expectParseError(() => parseDhcpFrame(mutate(base, (b) => (b[IP + 9] = 6))), /IP protocol 6 is not UDP/);
  });

  it('UDP ports', () => {
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => b.writeUInt16BE(1234, UDP))),
      /UDP ports 1234->67 are not DHCP client->server \(68->67\)/,
    );
    expectParseError(() => parseDhcpFrame(replyFrame), /UDP ports 67->68 are not DHCP client->server/);
    expectParseError(
      () => parseDhcpReplyFrame(base),
      /UDP ports 68->67 are not DHCP server->client \(67->68\)/,
    );
  });

  it('UDP length', () => {
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => b.writeUInt16BE(base.length - UDP + 1, UDP + 4))),
      /UDP length \d+ does not fit the \d+ bytes of IPv4 payload/,
    );
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => b.writeUInt16BE(7, UDP + 4))),
      /UDP length 7 does not fit/,
    );
  });

  it('BOOTP shorter than its fixed part', () => {
    expectParseError(
      () => parseDhcpFrame(fixLengths(Buffer.from(base.subarray(0, BOOTP + 100)))),
      /BOOTP message: 100 bytes is shorter than the 236-byte fixed part/,
    );
  });

  it('BOOTP op, htype/hlen', () => {
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => (b[BOOTP] = 2))),
      /BOOTP op 2 is not a request/,
    );
    expectParseError(
      () => parseDhcpReplyFrame(mutate(replyFrame, (b) => (b[BOOTP] = 1))),
      /BOOTP op 1 is not a reply/,
    );
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => (b[BOOTP + 1] = 6))),
      /htype 6\/hlen 6 is not Ethernet/,
    );
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => (b[BOOTP + 2] = 16))),
      /htype 1\/hlen 16 is not Ethernet/,
    );
  });

  it('magic cookie', () => {
    expectParseError(
      () => parseDhcpFrame(mutate(base, (b) => (b[BOOTP + 239] = 0x64))),
      /magic cookie missing/,
    );
    // Plain BOOTP: the 236-byte fixed part and nothing after it.
    expectParseError(
      () => parseDhcpFrame(fixLengths(Buffer.from(base.subarray(0, BOOTP + 236)))),
      /magic cookie missing/,
    );
  });

  it('options that overrun the message', () => {
    expectParseError(() => parseDhcpFrame(withOptions([53, 5, 1])), /option 53 overruns the message/);
    expectParseError(() => parseDhcpFrame(withOptions([53])), /option 53 overruns the message/);
    expectParseError(
      () => parseDhcpFrame(withOptions([53, 1, 1, 12, 9, 0x61])),
      /option 12 overruns the message/,
    );
  });

  it('no message type', () => {
    expectParseError(() => parseDhcpFrame(withOptions([])), /no DHCP message type \(option 53\)/);
    expectParseError(
      () => parseDhcpFrame(withOptions([12, 1, 0x61, 255])),
      /no DHCP message type \(option 53\)/,
    );
    // Option 53 after END does not count.
    expectParseError(
      () => parseDhcpFrame(withOptions([255, 53, 1, 1])),
      /no DHCP message type \(option 53\)/,
    );
  });

  it('options of the wrong size', () => {
    expectParseError(
      () => parseDhcpFrame(withOptions([53, 2, 1, 1, 255])),
      /option 53 must be 1 byte, got 2/,
    );
    expectParseError(
      () => parseDhcpFrame(withOptions([53, 1, 1, 50, 3, 10, 0, 0, 255])),
      /option 50 must be 4 bytes, got 3/,
    );
    expectParseError(
      () => parseDhcpFrame(withOptions([53, 1, 3, 54, 5, 10, 0, 0, 1, 0, 255])),
      /option 54 must be 4 bytes, got 5/,
    );
  });

  it('reply-only checks', () => {
    const replyWith = (raw: number[]) => withOptions(raw, replyFrame);
    const sid = [54, 4, 10, 0, 0, 1];
    expect(parseDhcpReplyFrame(replyWith([53, 1, 2, ...sid, 255])).messageType).toBe(DHCP.OFFER);
    expectParseError(
      () => parseDhcpReplyFrame(replyWith([53, 1, 5, 255])),
      /no server identifier \(option 54\)/,
    );
    expectParseError(
      () => parseDhcpReplyFrame(replyWith([53, 1, 3, ...sid, 255])),
      /DHCP message type 3 is not OFFER, ACK or NAK/,
    );
    expectParseError(
      () => parseDhcpReplyFrame(replyWith([53, 1, 5, ...sid, 6, 6, 1, 1, 1, 1, 2, 2, 255])),
      /option 6 must be a non-empty multiple of 4 bytes, got 6/,
    );
    expectParseError(
      () => parseDhcpReplyFrame(replyWith([53, 1, 5, ...sid, 26, 4, 0, 0, 5, 0xdc, 255])),
      /option 26 must be 2 bytes, got 4/,
    );
    expectParseError(
      () => parseDhcpReplyFrame(replyWith([53, 1, 5, ...sid, 51, 2, 1, 0, 255])),
      /option 51 must be 4 bytes, got 2/,
    );
  });

  it('a frame truncated at any length throws DhcpParseError', () => {
    for (const [frame, parse] of [
      [base, parseDhcpFrame],
      [replyFrame, parseDhcpReplyFrame],
    ] as const) {
      for (let len = 0; len < frame.length; len++) {
        expect(() => parse(frame.subarray(0, len)), `length ${len}`).toThrow(DhcpParseError);
      }
    }
  });

  it('truncated with consistent IPv4/UDP lengths: parses or throws DhcpParseError, nothing else', () => {
    for (let len = 42; len < base.length; len++) {
      const frame = fixLengths(Buffer.from(base.subarray(0, len)));
      try {
        parseDhcpFrame(frame);
      } catch (e) {
        expect(e, `length ${len}`).toBeInstanceOf(DhcpParseError);
      }
    }
  });

  it('property: corrupted frames parse or throw DhcpParseError, nothing else', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(base, replyFrame),
        fc.array(fc.tuple(fc.nat(base.length + 20), fc.nat(255)), { minLength: 1, maxLength: 8 }),
        fc.nat(base.length + 20),
        (frame, edits, cut) => {
          const b = Buffer.from(frame);
          // Bias edits toward the headers and option area, where lengths live.
          for (const [at, v] of edits) if (at < b.length) b[at < 200 ? at : OPTIONS + (at % 40)] = v;
          for (const parse of [parseDhcpFrame, parseDhcpReplyFrame]) {
            try {
              parse(b.subarray(0, cut));
            } catch (e) {
              expect(e).toBeInstanceOf(DhcpParseError);
            }
          }
        },
      ),
    );
  });
});

describe('DHCP packet building: bad input is a TypeError naming the field', () => {
  it('addresses and numbers', () => {
    expect(() => buildDhcpFrame({ ...reply, chaddr: '52:54:00:12:34' })).toThrow(
      /chaddr: '52:54:00:12:34' is not a MAC/,
    );
    expect(() => buildDhcpFrame({ ...reply, ethDst: 'nope' })).toThrow(TypeError);
    expect(() => buildDhcpFrame({ ...reply, yiaddr: '10.0.0.256' })).toThrow(/yiaddr: '10.0.0.256' is not/);
    expect(() => buildDhcpFrame({ ...reply, router: '10.0.0' })).toThrow(/option 3: '10.0.0' is not/);
    expect(() => buildDhcpFrame({ ...reply, xid: 2 ** 32 })).toThrow(/xid: 4294967296 is not a uint32/);
    expect(() => buildDhcpFrame({ ...reply, mtu: 70000 })).toThrow(/option 26: 70000 is not a uint16/);
    expect(() => buildDhcpFrame({ ...reply, dnsServers: [] })).toThrow(
      /option 6: an address list cannot be empty/,
    );
    expect(() => buildDhcpRequestFrame({ ...request, paramList: [1, 256] })).toThrow(/paramList\[1\]: 256/);
  });

  it('an option over 255 bytes', () => {
    expect(() => buildDhcpFrame({ ...reply, domainName: 'x'.repeat(256) })).toThrow(
      /option 15: 256 bytes is over the 255-byte option limit/,
    );
    expect(
      parseDhcpReplyFrame(buildDhcpFrame({ ...reply, domainName: 'x'.repeat(255) })).domainName,
    ).toHaveLength(255);
  });
});
