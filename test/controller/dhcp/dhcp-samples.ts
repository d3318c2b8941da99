import fc from 'fast-check';
import { expect } from 'vitest';
import {
  buildDhcpRequestFrame,
  DHCP,
  DhcpParseError,
  type DhcpReply,
  type DhcpRequest,
} from '../../../controller/dhcp/dhcp-packet.js';

/** Frames, samples, checks and arbitraries shared by the DHCP codec tests. */
// Offsets in a frame with a 20-byte IPv4 header.
export const IP = 14;
export const UDP = 34;
export const BOOTP = 42;
export const OPTIONS = BOOTP + 240;

export const request: DhcpRequest = {
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

export const reply: DhcpReply = {
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

export function onesSum(b: Uint8Array, start: number, end: number): number {
  let s = 0;
  for (let i = start; i < end; i += 2) s += (b[i]! << 8) | (i + 1 < end ? b[i + 1]! : 0);
  while (s > 0xffff) s = (s & 0xffff) + (s >>> 16);
  return s;
}

export function ipChecksumOk(frame: Buffer): boolean {
  const ihl = (frame[IP]! & 0xf) * 4;
  return onesSum(frame, IP, IP + ihl) === 0xffff;
}

export function udpChecksumOk(frame: Buffer): boolean {
  const udpLen = frame.readUInt16BE(UDP + 4);
  const pseudo = Buffer.concat([
    frame.subarray(IP + 12, IP + 20),
    Buffer.of(0, 17, udpLen >> 8, udpLen & 0xff),
  ]);
  const all = Buffer.concat([pseudo, frame.subarray(UDP, UDP + udpLen)]);
  return onesSum(all, 0, all.length) === 0xffff;
}

/** Option codes in wire order up to and including END, and the offset just past END. */
export function walkOptions(frame: Buffer): { codes: number[]; end: number } {
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
export function withOptions(raw: number[], base: Buffer = buildDhcpRequestFrame(request)): Buffer {
  const frame = Buffer.concat([base.subarray(0, OPTIONS), Buffer.from(raw)]);
  return fixLengths(frame);
}

export function fixLengths(frame: Buffer): Buffer {
  const ihl = (frame[IP]! & 0xf) * 4;
  frame.writeUInt16BE(frame.length - IP, IP + 2);
  frame.writeUInt16BE(frame.length - IP - ihl, IP + ihl + 4);
  return frame;
}

export function mutate(frame: Buffer, f: (b: Buffer) => void): Buffer {
  const b = Buffer.from(frame);
  f(b);
  return b;
}

export function expectParseError(fn: () => unknown, message: RegExp): void {
  expect(fn).toThrow(DhcpParseError);
  expect(fn).toThrow(message);
}

export const macArb = fc
  .uint8Array({ minLength: 6, maxLength: 6 })
  .map((b) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(':'));
export const ipArb = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((q) => q.join('.'));
export const u16 = fc.nat(0xffff);
export const u32 = fc.nat(0xffffffff);
// Text must survive UTF-8 both ways, fit one option, and not end in the NULs that parsing strips.
export const textArb = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
  .filter((s) => Buffer.byteLength(s) <= 255 && !s.endsWith('\0'));

export const replyArb: fc.Arbitrary<DhcpReply> = fc.record(
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

export const requestArb: fc.Arbitrary<DhcpRequest> = fc.record(
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
