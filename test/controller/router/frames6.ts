/**
 * Test-side frame building and checking for the router's ICMPv6 errors, written independently of
 * controller/router/icmp6-error.ts and controller/inet-checksum.ts (no shared helpers) so the
 * tests check them against a second reading of RFC 8200/4443 rather than against themselves.
 */

import { onesComplementSum } from './frames.js';

export interface Frame6Spec {
  ethDst?: string;
  ethSrc?: string;
  /** An 802.1Q tag with this VLAN id. */
  vlan?: number;
  ipSrc?: string;
  ipDst?: string;
  hopLimit?: number;
  nextHeader?: number;
  /** Everything after the fixed IPv6 header. */
  payload?: Uint8Array;
  /** Bytes after the IPv6 packet (Ethernet padding). */
  padding?: number;
  /** Overrides, to build malformed packets. */
  version?: number;
  payloadLength?: number;
  ethertype?: number;
}

const macBytes = (mac: string): number[] => mac.split(':').map((h) => Number.parseInt(h, 16));

/** The 16 bytes of IPv6 text in hex groups ('::' at most once; no embedded IPv4). */
export function ipv6Bytes(ip: string): number[] {
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  if (all.length !== 8) throw new Error(`test: '${ip}' is not 8 groups`);
  return all.flatMap((g) => [g >> 8, g & 0xff]);
}

/** An Ethernet II frame carrying one IPv6 packet, byte by byte. */
export function ipv6Frame(s: Frame6Spec = {}): Buffer {
  const payload = [...(s.payload ?? [])];
  const length = s.payloadLength ?? payload.length;
  const header = [
    ((s.version ?? 6) << 4) | 0x0, // traffic class 0x00 ...
    0x01, // ... flow label 0x12345: present, to be quoted as it is
    0x23,
    0x45,
    length >> 8,
    length & 0xff,
    s.nextHeader ?? 17,
    s.hopLimit ?? 64,
    ...ipv6Bytes(s.ipSrc ?? 'fd00:1::5'),
    ...ipv6Bytes(s.ipDst ?? 'fd00:2::5'),
  ];
  const eth = [...macBytes(s.ethDst ?? '0a:57:72:00:00:64'), ...macBytes(s.ethSrc ?? '02:00:00:00:01:05')];
  if (s.vlan !== undefined) eth.push(0x81, 0x00, s.vlan >> 8, s.vlan & 0xff);
  const ethertype = s.ethertype ?? 0x86dd;
  eth.push(ethertype >> 8, ethertype & 0xff);
  return Buffer.from([...eth, ...header, ...payload, ...new Array<number>(s.padding ?? 0).fill(0)]);
}

/** An ICMPv6 message of this type and code with `data` after its 8-byte header (checksum left 0). */
export function icmp6(type: number, code = 0, data: Uint8Array = new Uint8Array(8)): Uint8Array {
  return Uint8Array.from([type, code, 0, 0, 0, 0, 0, 0, ...data]);
}

const hex = (b: Uint8Array): string => [...b].map((x) => x.toString(16).padStart(2, '0')).join('');

/** The parts of an untagged frame carrying an IPv6 packet (no extension header) with ICMPv6. */
export function icmp6Parts(frame: Buffer) {
  const ip = frame.subarray(14, 54);
  const message = frame.subarray(54);
  return {
    ethDst: [...frame.subarray(0, 6)].map((b) => b.toString(16).padStart(2, '0')).join(':'),
    ethSrc: [...frame.subarray(6, 12)].map((b) => b.toString(16).padStart(2, '0')).join(':'),
    ethertype: frame.readUInt16BE(12),
    /** Version, traffic class and flow label: the first 4 bytes. */
    first: ip.readUInt32BE(0),
    payloadLength: ip.readUInt16BE(4),
    nextHeader: ip[6]!,
    hopLimit: ip[7]!,
    /** The addresses as 32 hex digits. */
    ipSrc: hex(ip.subarray(8, 24)),
    ipDst: hex(ip.subarray(24, 40)),
    message,
    type: message[0]!,
    code: message[1]!,
    checksum: message.readUInt16BE(2),
    /** The unused word, or the parameter problem's pointer. */
    word: message.readUInt32BE(4),
    quote: message.subarray(8),
  };
}

/** IPv6 text as icmp6Parts shows it: 32 hex digits. */
export const hexOf = (ip: string): string => hex(Uint8Array.from(ipv6Bytes(ip)));

/**
 * Whether the ICMPv6 checksum of the untagged frame's message holds: the sum over the IPv6
 * pseudo-header (source, destination, 32-bit upper-layer length, three zero bytes, next header
 * 58) and the message, its checksum included, is all ones (RFC 8200 8.1, RFC 4443 2.3).
 */
export function icmp6ChecksumHolds(frame: Buffer): boolean {
  const message = frame.subarray(54);
  const n = message.length;
  const pseudo = [
    ...frame.subarray(22, 38),
    ...frame.subarray(38, 54),
    (n >>> 24) & 0xff,
    (n >>> 16) & 0xff,
    (n >>> 8) & 0xff,
    n & 0xff,
    0,
    0,
    0,
    58,
  ];
  return onesComplementSum(Uint8Array.from([...pseudo, ...message])) === 0xffff;
}
