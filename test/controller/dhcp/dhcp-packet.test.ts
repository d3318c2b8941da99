import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildDhcpFrame,
  buildDhcpRequestFrame,
  DHCP,
  type DhcpReply,
  parseDhcpFrame,
  parseDhcpReplyFrame,
} from '../../../controller/dhcp/dhcp-packet.js';
import {
  BOOTP,
  fixLengths,
  IP,
  ipChecksumOk,
  mutate,
  OPTIONS,
  reply,
  replyArb,
  request,
  requestArb,
  UDP,
  udpChecksumOk,
  walkOptions,
  withOptions,
} from './dhcp-samples.js';

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
