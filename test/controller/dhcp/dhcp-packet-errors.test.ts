import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildDhcpFrame,
  buildDhcpRequestFrame,
  DHCP,
  DhcpParseError,
  parseDhcpFrame,
  parseDhcpReplyFrame,
} from '../../../controller/dhcp/dhcp-packet.js';
import {
  BOOTP,
  expectParseError,
  fixLengths,
  IP,
  mutate,
  OPTIONS,
  reply,
  request,
  UDP,
  withOptions,
} from './dhcp-samples.js';

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
