/**
 * ICMPv4 errors a weft router sends about a packet it could not forward (RFC 792, RFC 1812
 * 4.3.2): time exceeded when the TTL runs out (what makes traceroute show the router's hop),
 * destination unreachable when it has no route, no endpoint holds the address, or the packet is
 * for the router itself and not a ping. Pure byte work over the frame OVS sent up; no I/O.
 *
 * The frames come from VMs, so every length is checked before it is used and anything malformed
 * surfaces as an IcmpParseError.
 */

import { readIpv4, readMac, writeIpv4, writeMac } from '../../southbound/openflow/codec/values.js';
import { internetChecksum } from '../inet-checksum.js';
import { ipv4BroadcastOf, isMulticastMac, parseCidr, parseIp } from '../intent/net.js';

export const ICMP_TYPE = { ECHO_REPLY: 0, UNREACHABLE: 3, ECHO_REQUEST: 8, TIME_EXCEEDED: 11 } as const;
export const UNREACHABLE_CODE = { NET: 0, HOST: 1, PROTOCOL: 2, PORT: 3 } as const;

export type IcmpError =
  | { kind: 'time-exceeded' }
  | { kind: 'net-unreachable' }
  | { kind: 'host-unreachable' }
  | { kind: 'protocol-unreachable' }
  | { kind: 'port-unreachable' };

export const ICMP_ERROR_CODES: Record<IcmpError['kind'], { type: number; code: number }> = {
  'time-exceeded': { type: ICMP_TYPE.TIME_EXCEEDED, code: 0 },
  'net-unreachable': { type: ICMP_TYPE.UNREACHABLE, code: UNREACHABLE_CODE.NET },
  'host-unreachable': { type: ICMP_TYPE.UNREACHABLE, code: UNREACHABLE_CODE.HOST },
  'protocol-unreachable': { type: ICMP_TYPE.UNREACHABLE, code: UNREACHABLE_CODE.PROTOCOL },
  'port-unreachable': { type: ICMP_TYPE.UNREACHABLE, code: UNREACHABLE_CODE.PORT },
};

export class IcmpParseError extends Error {
  override name = 'IcmpParseError';
}

/** The IPv4 packet of an Ethernet II frame, as far as an ICMP error about it needs it. */
export interface Ipv4Packet {
  ethSrc: string;
  ethDst: string;
  ipSrc: string;
  ipDst: string;
  ttl: number;
  protocol: number;
  /** Offset 0 (a first fragment or no fragment at all). */
  firstFragment: boolean;
  /** The ICMP type when the packet is ICMP and its type is present. */
  icmpType?: number;
  /** The IPv4 packet's bytes within the frame: header and payload up to its total length. */
  ipStart: number;
  ipEnd: number;
  headerLength: number;
}

const ETH_LEN = 14;
const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_VLAN = 0x8100;
const IPV4_MIN = 20;
const ICMP_HEADER = 8;
const IPPROTO_ICMP = 1;
/** RFC 1812 4.3.2.3: as much of the packet as fits an error of at most 576 bytes. */
const MAX_ERROR_LENGTH = 576;
/** The TTL of the errors a router sends (what `weft trace` shows the sender receiving too). */
export const ERROR_TTL = 64;

/** Parses the IPv4 packet in `frame` (Ethernet II, one 802.1Q tag allowed). */
export function parseIpv4Frame(frame: Buffer): Ipv4Packet {
  if (frame.length < ETH_LEN + IPV4_MIN)
    throw new IcmpParseError(`frame of ${frame.length} bytes is too short for IPv4`);
  let ethType = frame.readUInt16BE(12);
  let ip = ETH_LEN;
  if (ethType === ETHERTYPE_VLAN) {
    if (frame.length < ETH_LEN + 4 + IPV4_MIN) throw new IcmpParseError('tagged frame too short for IPv4');
    ethType = frame.readUInt16BE(16);
    ip += 4;
  }
  if (ethType !== ETHERTYPE_IPV4) throw new IcmpParseError(`ethertype 0x${ethType.toString(16)} is not IPv4`);
  const version = frame[ip]! >> 4;
  const headerLength = (frame[ip]! & 0x0f) * 4;
  if (version !== 4) throw new IcmpParseError(`IP version ${version}, not 4`);
  if (headerLength < IPV4_MIN) throw new IcmpParseError(`IPv4 header length ${headerLength} is below 20`);
  const totalLength = frame.readUInt16BE(ip + 2);
  if (totalLength < headerLength)
    throw new IcmpParseError(`IPv4 total length ${totalLength} is below its header's ${headerLength}`);
  // A frame may carry padding after the packet (Ethernet minimum); never more packet than frame.
  const ipEnd = Math.min(frame.length, ip + totalLength);
  if (ipEnd < ip + headerLength) throw new IcmpParseError('frame ends inside the IPv4 header');
  const fragmentOffset = frame.readUInt16BE(ip + 6) & 0x1fff;
  const protocol = frame[ip + 9]!;
  const l4 = ip + headerLength;
  return {
    ethDst: readMac(frame, 0),
    ethSrc: readMac(frame, 6),
    ipSrc: readIpv4(frame, ip + 12),
    ipDst: readIpv4(frame, ip + 16),
    ttl: frame[ip + 8]!,
    protocol,
    firstFragment: fragmentOffset === 0,
    icmpType: protocol === IPPROTO_ICMP && fragmentOffset === 0 && l4 < ipEnd ? frame[l4] : undefined,
    ipStart: ip,
    ipEnd,
    headerLength,
  };
}

/** ICMP types that are errors themselves (RFC 1122 3.2.2: never answer an error with one). */
const ERROR_TYPES = new Set([3, 4, 5, 11, 12]);

/**
 * Why no ICMP error may be sent about this packet (RFC 1812 4.3.2.7), or undefined when one may:
 * not about an ICMP error, a fragment other than the first, a packet to a broadcast or multicast
 * address, or from an address that names no single host. Only the headers it names: `weft trace`
 * asks it about a probe it never builds the bytes of.
 */
export function whyNoError(
  p: Pick<Ipv4Packet, 'icmpType' | 'firstFragment' | 'ipDst' | 'ipSrc' | 'ethDst'>,
  /** IPv4 subnets whose broadcast address (a directed broadcast) gets no error either. */
  subnets: readonly string[] = [],
): string | undefined {
  if (p.icmpType !== undefined && ERROR_TYPES.has(p.icmpType))
    return `it is itself an ICMP error (type ${p.icmpType})`;
  if (!p.firstFragment) return 'it is a fragment other than the first';
  const dst = whyNoHostAt(p.ipDst, subnets);
  if (dst) return dst;
  if (!isSingleHost(p.ipSrc)) return `its source ${p.ipSrc} names no single host`;
  if (isMulticastMac(p.ethDst)) return `it was sent to the link-layer ${p.ethDst}`;
  return undefined;
}

/**
 * Why `ip` is no single host's address (broadcast, multicast, the directed broadcast of one of
 * `subnets`), or undefined: such a destination gets no ICMP error, nor an ARP resolution.
 */
export function whyNoHostAt(ip: string, subnets: readonly string[] = []): string | undefined {
  if (isGroupOrBroadcast(ip)) return `its destination ${ip} is broadcast or multicast`;
  const directed = subnets.find((c) => isBroadcastOf(c, ip));
  if (directed) return `its destination ${ip} is the broadcast address of ${directed}`;
  return undefined;
}

/** Whether ip is the broadcast address of the IPv4 subnet `cidr`. */
function isBroadcastOf(cidr: string, ip: string): boolean {
  const c = parseCidr(cidr);
  const b = typeof c === 'string' ? undefined : ipv4BroadcastOf(c);
  const a = parseIp(ip);
  return b !== undefined && a?.family === 4 && a.value === b;
}

function firstOctet(ip: string): number {
  return Number(ip.slice(0, ip.indexOf('.')));
}

function isGroupOrBroadcast(ip: string): boolean {
  // IPv6 (canonical text, lower case): multicast is ff00::/8, there is no broadcast.
  const a = parseIp(ip);
  if (a?.family === 6) return a.value >> 120n === 0xffn;
  return ip === '255.255.255.255' || (firstOctet(ip) >= 224 && firstOctet(ip) <= 239);
}

function isSingleHost(ip: string): boolean {
  const a = firstOctet(ip);
  return a !== 0 && a !== 127 && a < 224;
}

/** Where the error goes and whom it is from. */
export interface IcmpErrorAddresses {
  /** The router's gateway MAC on the network the packet came from. */
  ethSrc: string;
  /** The sender's MAC. */
  ethDst: string;
  /** The router's address on that network. */
  ipSrc: string;
}

/**
 * The ICMP error about `p` (parsed from `frame`): Ethernet II + IPv4 (TTL 64) + ICMP, quoting the
 * offending packet's header and as much of its payload as keeps the error within 576 bytes,
 * to the packet's source address.
 */
/**
 * The frame and its header with the IPv4 source and/or destination rewritten (the header checksum
 * updated): a packet a floating IP's rewrite changed (apps/router/floating.ts), restored to what
 * its sender sent, so that the error goes to the sender and quotes its own packet (the quoted
 * transport checksum stays the rewritten packet's: no stack checks it in an error).
 */
export function withIpv4Addresses(
  frame: Buffer,
  p: Ipv4Packet,
  to: { src?: string; dst?: string },
): { frame: Buffer; p: Ipv4Packet } {
  const copy = Buffer.from(frame);
  for (const [ip, at] of [
    [to.src, 12],
    [to.dst, 16],
  ] as const) {
    if (ip !== undefined && !writeIpv4(copy, p.ipStart + at, ip))
      throw new TypeError(`'${ip}' is not an IPv4 address`);
  }
  copy.writeUInt16BE(0, p.ipStart + 10);
  const headerEnd = p.ipStart + (copy[p.ipStart]! & 0x0f) * 4;
  copy.writeUInt16BE(internetChecksum(copy, p.ipStart, headerEnd), p.ipStart + 10);
  return { frame: copy, p: { ...p, ipSrc: to.src ?? p.ipSrc, ipDst: to.dst ?? p.ipDst } };
}

export function buildIcmpError(
  frame: Buffer,
  p: Ipv4Packet,
  error: IcmpError,
  to: IcmpErrorAddresses,
): Buffer {
  const { type, code } = ICMP_ERROR_CODES[error.kind];
  const quoteLength = Math.min(p.ipEnd - p.ipStart, MAX_ERROR_LENGTH - IPV4_MIN - ICMP_HEADER);
  const ipLength = IPV4_MIN + ICMP_HEADER + quoteLength;
  const out = Buffer.alloc(ETH_LEN + ipLength);
  if (!writeMac(out, 0, to.ethDst)) throw new TypeError(`ethDst: '${to.ethDst}' is not a MAC address`);
  if (!writeMac(out, 6, to.ethSrc)) throw new TypeError(`ethSrc: '${to.ethSrc}' is not a MAC address`);
  out.writeUInt16BE(ETHERTYPE_IPV4, 12);
  const ip = ETH_LEN;
  out[ip] = 0x45;
  out.writeUInt16BE(ipLength, ip + 2);
  out[ip + 8] = ERROR_TTL;
  out[ip + 9] = IPPROTO_ICMP;
  if (!writeIpv4(out, ip + 12, to.ipSrc)) throw new TypeError(`ipSrc: '${to.ipSrc}' is not an IPv4 address`);
  writeIpv4(out, ip + 16, p.ipSrc);
  out.writeUInt16BE(internetChecksum(out, ip, ip + IPV4_MIN), ip + 10);
  const icmp = ip + IPV4_MIN;
  out[icmp] = type;
  out[icmp + 1] = code;
  frame.copy(out, icmp + ICMP_HEADER, p.ipStart, p.ipStart + quoteLength);
  out.writeUInt16BE(internetChecksum(out, icmp, out.length), icmp + 2);
  return out;
}
