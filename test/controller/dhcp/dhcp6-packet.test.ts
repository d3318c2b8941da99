import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ALL_DHCP_SERVERS,
  buildDhcp6Frame,
  DHCP6,
  DHCP6_PORT,
  DHCP6_STATUS,
  Dhcp6ParseError,
  type Dhcp6Reply,
  type Dhcp6Request,
  isDhcp6Frame,
  parseDhcp6Frame,
} from '../../../controller/dhcp/dhcp6-packet.js';
import { icmpv6Checksum, ipv6UpperChecksum } from '../../../controller/inet-checksum.js';
import { formatIpv6 } from '../../../controller/intent/net.js';
import { onesComplementSum } from '../router/frames.js';
import {
  ALL_SERVERS_MAC,
  CLIENT_LL,
  CLIENT_MAC,
  type ClientSpec,
  clientFrame,
  DUID_LLT,
  opt,
  SERVER_DUID,
  u16,
  u32,
  udpChecksum,
} from './dhcp6-samples.js';

const parsed = (over: Partial<Dhcp6Request>): Dhcp6Request => ({
  ethSrc: CLIENT_MAC,
  ethDst: ALL_SERVERS_MAC,
  ipSrc: CLIENT_LL,
  ipDst: ALL_DHCP_SERVERS,
  messageType: DHCP6.SOLICIT,
  transactionId: 0xabcdef,
  clientId: DUID_LLT,
  iaNa: [{ iaid: 0x56341200, t1: 0, t2: 0, addresses: [] }],
  rapidCommit: false,
  requestedOptions: [23, 24],
  ...over,
});

describe('parseDhcp6Frame: client messages', () => {
  it('dhclient SOLICIT', () => {
    const frame = clientFrame({ messageType: DHCP6.SOLICIT });
    expect(isDhcp6Frame(frame)).toBe(true);
    expect(parseDhcp6Frame(frame)).toEqual(parsed({}));
  });

  it('REQUEST with the server id, rapid commit and address hints; ids are copies', () => {
    const addresses = [{ address: '2001:db8:1::5', preferred: 3600, valid: 7200 }];
    const frame = clientFrame({
      messageType: DHCP6.REQUEST,
      transactionId: 0x000102,
      serverId: SERVER_DUID,
      rapidCommit: true,
      oro: [],
      iaNa: [{ iaid: 1, t1: 10, t2: 20, addresses }, { iaid: 2 }],
    });
    const req = parseDhcp6Frame(frame);
    expect(req).toEqual(
      parsed({
        messageType: DHCP6.REQUEST,
        transactionId: 0x000102,
        serverId: SERVER_DUID,
        rapidCommit: true,
        requestedOptions: [],
        iaNa: [
          { iaid: 1, t1: 10, t2: 20, addresses },
          { iaid: 2, t1: 0, t2: 0, addresses: [] },
        ],
      }),
    );
    frame.fill(0);
    expect(req.clientId).toEqual(DUID_LLT);
    expect(req.serverId).toEqual(SERVER_DUID);
  });

  it('canonicalises addresses, keeps a status the client put in its IA, skips unknown options', () => {
    const ia = [...u32(7), ...u32(0), ...u32(0), ...opt(13, [...u16(3), ...Buffer.from('gone')])];
    const frame = clientFrame({
      messageType: DHCP6.RENEW,
      ipSrc: 'fe80::0:0:0:a',
      iaNa: [],
      tail: [...opt(3, ia), ...opt(0x1234, [1, 2, 3]), ...opt(16, [])],
    });
    expect(parseDhcp6Frame(frame)).toMatchObject({
      ipSrc: 'fe80::a',
      iaNa: [{ iaid: 7, t1: 0, t2: 0, addresses: [], status: { code: 3, message: 'gone' } }],
    });
  });

  it('a message without CLIENTID parses (the answer decides)', () => {
    expect(
      parseDhcp6Frame(clientFrame({ messageType: 11, clientId: null, iaNa: [] })).clientId,
    ).toBeUndefined();
  });

  it('accepts Ethernet padding after the packet', () => {
    const frame = Buffer.concat([clientFrame({ messageType: DHCP6.REBIND }), Buffer.alloc(6)]);
    expect(parseDhcp6Frame(frame).messageType).toBe(DHCP6.REBIND);
  });

  it('property: any client message survives build -> parse', () => {
    const address = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }).map(formatIpv6);
    // fc.nat stops at 2^31 - 1: two halves make the full uint32 range.
    const u32a = fc.tuple(fc.nat(0xffff), fc.nat(0xffff)).map(([hi, lo]) => hi * 0x10000 + lo);
    const ia = fc.record({
      iaid: u32a,
      t1: u32a,
      t2: u32a,
      addresses: fc.array(fc.record({ address, preferred: u32a, valid: u32a }), { maxLength: 3 }),
    });
    const arb = fc.record({
      messageType: fc.constantFrom(1, 3, 4, 5, 6, 8, 9, 11),
      transactionId: fc.nat({ max: 0xffffff }),
      clientId: fc.uint8Array({ minLength: 1, maxLength: 130 }),
      serverId: fc.option(fc.uint8Array({ minLength: 1, maxLength: 130 }), { nil: undefined }),
      iaNa: fc.array(ia, { maxLength: 3 }),
      oro: fc.array(fc.nat({ max: 0xffff }), { maxLength: 8 }),
      rapidCommit: fc.boolean(),
    });
    fc.assert(
      fc.property(arb, (s) => {
        const { oro, serverId, clientId, ...rest } = s;
        expect(parseDhcp6Frame(clientFrame(s))).toEqual({
          ...parsed({}),
          ...rest,
          clientId: Buffer.from(clientId),
          ...(serverId ? { serverId: Buffer.from(serverId) } : {}),
          requestedOptions: oro,
        });
      }),
    );
  });
});

describe('parseDhcp6Frame: what it refuses', () => {
  const bad = (frame: Buffer, message: string) => {
    expect(() => parseDhcp6Frame(frame)).toThrow(Dhcp6ParseError);
    expect(() => parseDhcp6Frame(frame)).toThrow(message);
  };
  const solicit = (over: Partial<ClientSpec> = {}) => clientFrame({ messageType: DHCP6.SOLICIT, ...over });

  it('short, not IPv6, not UDP, wrong port', () => {
    bad(solicit().subarray(0, 65), 'frame of 65 bytes is too short for Ethernet + IPv6 + UDP + DHCPv6');
    const v4 = solicit();
    v4.writeUInt16BE(0x0800, 12);
    bad(v4, 'ethertype 0x0800 is not IPv6');
    const v5 = solicit();
    v5[14] = 0x50;
    bad(v5, 'IP version 5 is not 6');
    bad(solicit({ nextHeader: 0 }), 'next header 0 is not UDP (extension headers are not followed)');
    bad(solicit({ dstPort: 546 }), 'UDP destination port 546 is not 547');
  });

  it('inconsistent lengths', () => {
    const frame = solicit();
    bad(solicit({ payloadLength: frame.length - 53 }), `IPv6 payload length ${frame.length - 53} runs past`);
    bad(solicit({ udpLength: 20 }), `UDP length 20 does not match IPv6 payload length ${frame.length - 54}`);
    bad(
      solicit({ payloadLength: 10, udpLength: 10 }),
      'UDP length 10 leaves no room for the 4-byte DHCPv6 header',
    );
  });

  it('does not verify the UDP checksum (with offload a VM frame may come up before it is filled in), as DHCPv4', () => {
    const good = parseDhcp6Frame(solicit());
    const wrong = udpChecksum(solicit()) === 1 ? 2 : 1;
    for (const checksum of [0, wrong]) expect(parseDhcp6Frame(solicit({ checksum }))).toEqual(good);
  });

  it('relay and unknown message types', () => {
    bad(clientFrame({ messageType: 12 }), 'message type 12 (RELAY-FORW) is a relay message');
    bad(clientFrame({ messageType: 13 }), 'message type 13 (RELAY-REPL) is a relay message');
    bad(clientFrame({ messageType: 0 }), 'message type 0 is not a known DHCPv6 client/server message');
    bad(clientFrame({ messageType: 14 }), 'message type 14 is not a known DHCPv6 client/server message');
  });

  it('options running past the end, short IA_NA / IAADDR / STATUS_CODE, odd ORO, two CLIENTIDs', () => {
    bad(solicit({ tail: [0, 8, 0, 9, 1] }), 'option 8 of 9 bytes runs past the end of the message');
    bad(solicit({ tail: [0, 8, 0] }), 'option header cut short by the end of the message (3 bytes left)');
    bad(solicit({ iaNa: [], tail: opt(3, new Array(11).fill(0)) }), 'IA_NA of 11 bytes is shorter than 12');
    const ia = (inner: number[]) => opt(3, [...new Array(12).fill(0), ...inner]);
    bad(
      solicit({ iaNa: [], tail: ia(opt(5, new Array(23).fill(0))) }),
      'IAADDR of 23 bytes is shorter than 24',
    );
    bad(
      solicit({ iaNa: [], tail: ia([0, 5, 0, 30, 1]) }),
      'option 5 of 30 bytes runs past the end of an IA_NA',
    );
    bad(
      solicit({ iaNa: [], tail: ia(opt(5, [...new Array(24).fill(0), 0, 13, 0, 9])) }),
      'option 13 of 9 bytes runs past the end of an IAADDR',
    );
    bad(
      solicit({ iaNa: [], tail: ia(opt(13, [0])) }),
      'STATUS_CODE of 1 bytes in an IA_NA is shorter than 2',
    );
    bad(solicit({ oro: [], tail: opt(6, [0, 23, 0]) }), 'ORO of 3 bytes is not a list of 2-byte codes');
    bad(solicit({ tail: opt(1, [1]) }), 'option 1 (clientId) appears twice');
    bad(solicit({ serverId: SERVER_DUID, tail: opt(2, [1]) }), 'option 2 (serverId) appears twice');
  });
});

describe('isDhcp6Frame', () => {
  it('only untagged IPv6/UDP to port 547', () => {
    const frame = clientFrame({ messageType: DHCP6.SOLICIT });
    expect(isDhcp6Frame(frame)).toBe(true);
    expect(isDhcp6Frame(frame.subarray(0, 61))).toBe(false);
    expect(isDhcp6Frame(clientFrame({ messageType: 1, dstPort: 546 }))).toBe(false);
    expect(isDhcp6Frame(clientFrame({ messageType: 1, nextHeader: 0 }))).toBe(false);
    const tagged = Buffer.concat([frame.subarray(0, 12), Buffer.from([0x81, 0, 0, 5]), frame.subarray(12)]);
    expect(isDhcp6Frame(tagged)).toBe(false);
  });
});

const reply: Dhcp6Reply = {
  ethSrc: '0a:00:00:77:65:66',
  ethDst: CLIENT_MAC,
  ipSrc: 'fe80::800:ff:fe77:6566',
  ipDst: CLIENT_LL,
  messageType: DHCP6.REPLY,
  transactionId: 0xabcdef,
  clientId: DUID_LLT,
  serverId: SERVER_DUID,
  iaNa: [
    {
      iaid: 0x56341200,
      t1: 1800,
      t2: 2880,
      addresses: [{ address: '2001:db8:1::5', preferred: 3600, valid: 3600 }],
      status: { code: DHCP6_STATUS.SUCCESS, message: 'ok' },
    },
  ],
  status: { code: DHCP6_STATUS.SUCCESS, message: '' },
  rapidCommit: true,
  dnsServers: ['2001:db8::53'],
  domainSearch: ['corp.example', 'b.'],
};

const hex = (...parts: string[]) => parts.join('').replace(/\s/g, '');

describe('buildDhcp6Frame', () => {
  it('lays out Ethernet, IPv6, UDP and every option at fixed offsets', () => {
    const f = buildDhcp6Frame(reply);
    expect(f.subarray(0, 14).toString('hex')).toBe(hex('525400123456', '0a0000776566', '86dd'));
    // Version 6, traffic class 0, flow label 0; payload length; UDP; hop limit 255.
    expect(f.readUInt32BE(14)).toBe(0x60000000);
    expect(f.readUInt16BE(18)).toBe(f.length - 54);
    expect([f[20], f[21]]).toEqual([17, 255]);
    expect(f.subarray(22, 38).toString('hex')).toBe('fe80000000000000080000fffe776566');
    expect(f.subarray(38, 54).toString('hex')).toBe('fe80000000000000505400fffe123456');
    expect([f.readUInt16BE(54), f.readUInt16BE(56), f.readUInt16BE(58)]).toEqual([547, 546, f.length - 54]);
    expect(f.subarray(62).toString('hex')).toBe(
      hex(
        '07 abcdef',
        '0001 000e 000100012f3c4d5e525400123456', // CLIENTID
        '0002 000a 000300010a0000776566', // SERVERID
        '0003 0030 56341200 00000708 00000b40', // IA_NA: 12 + IAADDR 28 + STATUS 8 = 48
        '0005 0018 20010db8000100000000000000000005 00000e10 00000e10',
        '000d 0004 0000 6f6b',
        '000d 0002 0000', // top-level status, empty message
        '000e 0000', // RAPID_COMMIT
        '0017 0010 20010db8000000000000000000000053',
        '0018 0011 04636f7270076578616d706c6500 016200', // corp.example, b.
      ),
    );
  });

  it('fills in a UDP checksum that holds, checked independently', () => {
    const f = buildDhcp6Frame(reply);
    const stored = f.readUInt16BE(60);
    expect(udpChecksum(f)).toBe(stored);
    const pseudo = [...f.subarray(22, 54), ...u32(f.length - 54), 0, 0, 0, 17];
    expect(onesComplementSum(Uint8Array.from([...pseudo, ...f.subarray(54)]))).toBe(0xffff);
  });

  it('omits absent options: a bare ADVERTISE is header, CLIENTID and SERVERID', () => {
    const f = buildDhcp6Frame({
      ...reply,
      messageType: DHCP6.ADVERTISE,
      iaNa: undefined,
      status: undefined,
      rapidCommit: false,
      dnsServers: [],
      domainSearch: [],
    });
    expect(f.length).toBe(62 + 4 + 18 + 14);
    expect(f[62]).toBe(DHCP6.ADVERTISE);
  });

  it('refuses what it cannot encode', () => {
    expect(() => buildDhcp6Frame({ ...reply, transactionId: 0x1000000 })).toThrow(
      'transactionId: 16777216 is not a uint24',
    );
    expect(() => buildDhcp6Frame({ ...reply, ipDst: '10.0.0.1' })).toThrow(
      "ipDst: '10.0.0.1' is not an IPv6",
    );
    expect(() => buildDhcp6Frame({ ...reply, ethDst: 'nope' })).toThrow("ethDst: 'nope' is not a MAC");
    expect(() => buildDhcp6Frame({ ...reply, domainSearch: ['a..b'] })).toThrow("label '' is not 1-63");
    expect(() => buildDhcp6Frame({ ...reply, domainSearch: [`${'x'.repeat(64)}.example`] })).toThrow(
      'is not 1-63 printable ASCII',
    );
    const long = Array.from({ length: 5 }, () => 'y'.repeat(60)).join('.');
    expect(() => buildDhcp6Frame({ ...reply, domainSearch: [long] })).toThrow('longer than 255 bytes');
    expect(() => buildDhcp6Frame({ ...reply, iaNa: [{ iaid: -1, t1: 0, t2: 0, addresses: [] }] })).toThrow(
      'IAID: -1 is not a uint32',
    );
  });
});

describe('ipv6UpperChecksum', () => {
  it('is icmpv6Checksum with next header 58, and differs by the next header', () => {
    const f = buildDhcp6Frame(reply);
    expect(icmpv6Checksum(f, 22, 38, 54, f.length)).toBe(ipv6UpperChecksum(f, 22, 38, 54, f.length, 58));
    expect(ipv6UpperChecksum(f, 22, 38, 54, f.length, 17)).toBe(0);
  });

  it('ports are the DHCPv6 ones', () => {
    expect(DHCP6_PORT).toEqual({ CLIENT: 546, SERVER: 547 });
  });
});
