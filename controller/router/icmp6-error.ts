import { IPV6_AT, IPV6_PAYLOAD_AT, ipv6Frame, read128 } from '../ipv6-frame.js';
/**
 * ICMPv6 errors a weft router sends about an IPv6 packet it could not forward (RFC 4443): the
 * same four cases as its ICMPv4 errors (icmp-error.ts), in ICMPv6's types and codes: time
 * exceeded when the hop limit runs out, destination unreachable without a route or a neighbour,
 * port unreachable and parameter problem (unrecognized next header) for a packet to the router
 * itself. Pure byte work over the frame OVS sent up; no I/O.
 *
 * The frames come from VMs, so every length is checked before it is used and anything malformed
 * surfaces as an IcmpParseError.
 */

import { readMac } from '../../southbound/openflow/codec/values.js';
import { icmpv6Checksum } from '../inet-checksum.js';
import { formatIpv6, isMulticastMac, parseCidr, parseIp } from '../intent/net.js';
import {
  ERROR_TTL,
  type IcmpError,
  type IcmpErrorAddresses,
  IcmpParseError,
  type Ipv4Packet,
  parseIpv4Frame,
} from './icmp-error.js';

export const ICMPV6_TYPE = {
  UNREACHABLE: 1,
  PACKET_TOO_BIG: 2,
  TIME_EXCEEDED: 3,
  PARAMETER_PROBLEM: 4,
  ECHO_REQUEST: 128,
  ECHO_REPLY: 129,
} as const;
/** RFC 4443 3.1: no route to destination, address unreachable, port unreachable. */
export const UNREACHABLE6_CODE = { NO_ROUTE: 0, ADDRESS: 3, PORT: 4 } as const;
/** RFC 4443 3.4: unrecognized Next Header type encountered. */
export const UNRECOGNIZED_NEXT_HEADER = 1;
/** Where the Next Header field lies in an IPv6 header: the parameter problem's pointer at it. */
export const NEXT_HEADER_OFFSET = 6;

export const ICMPV6_ERROR_CODES: Record<IcmpError['kind'], { type: number; code: number; pointer?: number }> =
  {
    'time-exceeded': { type: ICMPV6_TYPE.TIME_EXCEEDED, code: 0 },
    'net-unreachable': { type: ICMPV6_TYPE.UNREACHABLE, code: UNREACHABLE6_CODE.NO_ROUTE },
    'host-unreachable': { type: ICMPV6_TYPE.UNREACHABLE, code: UNREACHABLE6_CODE.ADDRESS },
    'port-unreachable': { type: ICMPV6_TYPE.UNREACHABLE, code: UNREACHABLE6_CODE.PORT },
    'protocol-unreachable': {
      type: ICMPV6_TYPE.PARAMETER_PROBLEM,
      code: UNRECOGNIZED_NEXT_HEADER,
      pointer: NEXT_HEADER_OFFSET,
    },
  };

/** The IPv6 packet of an Ethernet II frame, as far as an ICMPv6 error about it needs it. */
export interface Ipv6Packet {
  ethSrc: string;
  ethDst: string;
  /** Canonical text (controller/intent/net.ts), as the intent stores addresses. */
  ipSrc: string;
  ipDst: string;
  hopLimit: number;
  /** The fixed header's Next Header: an extension header's type, or the upper-layer protocol. */
  nextHeader: number;
  /** The ICMPv6 type when the next header is ICMPv6 and its type is present. */
  icmpType?: number;
  /** The IPv6 packet's bytes within the frame: header and payload up to its payload length. */
  ipStart: number;
  ipEnd: number;
}

/** A frame the routers' flows sent up, read by its IP version. */
export type IpFrame = { family: 4; p: Ipv4Packet } | { family: 6; p: Ipv6Packet };

const ETH_LEN = 14;
const ETHERTYPE_IPV6 = 0x86dd;
const ETHERTYPE_VLAN = 0x8100;
const IPV6_HEADER = 40;
const ICMPV6_HEADER = 8;
const IPPROTO_ICMPV6 = 58;
/** RFC 4443 2.4(c): as much of the packet as fits an error packet of the minimum IPv6 MTU. */
const IPV6_MIN_MTU = 1280;

/**
 * The IPv6 extension headers (IANA's registry: hop-by-hop, routing, fragment, ESP, AH,
 * destination options, mobility, HIP, shim6, experiments). The router reads only the fixed
 * header's Next Header: behind one of these, the protocol it would answer about is unknown.
 */
const EXTENSION_HEADERS = new Set([0, 43, 44, 50, 51, 60, 135, 139, 140, 253, 254]);

/** Parses the IPv6 packet in `frame` (Ethernet II, one 802.1Q tag allowed). */
export function parseIpv6Frame(frame: Buffer): Ipv6Packet {
  if (frame.length < ETH_LEN + IPV6_HEADER)
    throw new IcmpParseError(`frame of ${frame.length} bytes is too short for IPv6`);
  let ethType = frame.readUInt16BE(12);
  let ip = ETH_LEN;
  if (ethType === ETHERTYPE_VLAN) {
    if (frame.length < ETH_LEN + 4 + IPV6_HEADER) throw new IcmpParseError('tagged frame too short for IPv6');
    ethType = frame.readUInt16BE(16);
    ip += 4;
  }
  if (ethType !== ETHERTYPE_IPV6) throw new IcmpParseError(`ethertype 0x${ethType.toString(16)} is not IPv6`);
  const version = frame[ip]! >> 4;
  if (version !== 6) throw new IcmpParseError(`IP version ${version}, not 6`);
  // A frame may carry padding after the packet; never more packet than frame.
  const ipEnd = Math.min(frame.length, ip + IPV6_HEADER + frame.readUInt16BE(ip + 4));
  const nextHeader = frame[ip + 6]!;
  const l4 = ip + IPV6_HEADER;
  return {
    ethDst: readMac(frame, 0),
    ethSrc: readMac(frame, 6),
    ipSrc: formatIpv6(read128(frame, ip + 8)),
    ipDst: formatIpv6(read128(frame, ip + 24)),
    hopLimit: frame[ip + 7]!,
    nextHeader,
    icmpType: nextHeader === IPPROTO_ICMPV6 && l4 < ipEnd ? frame[l4] : undefined,
    ipStart: ip,
    ipEnd,
  };
}

/** Parses `frame` as IPv6 when its ethertype (past one 802.1Q tag) says so, else as IPv4. */
export function parseIpFrame(frame: Buffer): IpFrame {
  const at = frame.length >= 18 && frame.readUInt16BE(12) === ETHERTYPE_VLAN ? 16 : 12;
  if (frame.length >= at + 2 && frame.readUInt16BE(at) === ETHERTYPE_IPV6)
    return { family: 6, p: parseIpv6Frame(frame) };
  return { family: 4, p: parseIpv4Frame(frame) };
}

/** Neighbour discovery (router/neighbour solicitation and advertisement) and redirect. */
const ND_TYPES = new Set([133, 134, 135, 136, 137]);

/** The 128 bits of IPv6 text (any form), or undefined. */
const v6Value = (ip: string): bigint | undefined => {
  const a = parseIp(ip);
  return a?.family === 6 ? a.value : undefined;
};
/** ff00::/8. */
const isMulticast6 = (ip: string): boolean => (v6Value(ip) ?? 0n) >> 120n === 0xffn;
/** The unspecified address and the loopback address: no node on a link sends from them. */
const isUnspecifiedOrLoopback = (ip: string): boolean => {
  const v = v6Value(ip);
  return v === 0n || v === 1n;
};

/** The IPv6 prefix (CIDR text) of `subnets` whose subnet-router anycast address `ip` is. */
function anycastOf(ip: string, subnets: readonly string[]): string | undefined {
  const v = v6Value(ip);
  return subnets.find((text) => {
    const c = parseCidr(text);
    return typeof c !== 'string' && c.family === 6 && c.prefix < 127 && v === c.network;
  });
}

/**
 * Why no ICMPv6 error may be sent about this packet (RFC 4443 2.4(e)), or undefined when one may:
 * not about an ICMPv6 error, a redirect or neighbour discovery message, nor a packet with an
 * extension header (its protocol is unknown), to a multicast address, or from an address that
 * names no single node (unspecified, loopback, multicast, the subnet-router anycast address of
 * one of `subnets`), nor a link-layer multicast or broadcast. Link-local sources are answered: the
 * router is on their link. Only the headers it names: `weft trace` asks it about a probe it never
 * builds the bytes of.
 */
export function whyNoError6(
  p: Pick<Ipv6Packet, 'nextHeader' | 'icmpType' | 'ipDst' | 'ipSrc' | 'ethDst'>,
  /** The router's subnets: a source that is one's subnet-router anycast address gets no error. */
  subnets: readonly string[] = [],
): string | undefined {
  if (p.icmpType !== undefined && p.icmpType < ICMPV6_TYPE.ECHO_REQUEST)
    return `it is itself an ICMPv6 error (type ${p.icmpType})`;
  if (p.icmpType !== undefined && ND_TYPES.has(p.icmpType))
    return `it is a neighbour discovery or redirect message (type ${p.icmpType})`;
  if (EXTENSION_HEADERS.has(p.nextHeader))
    return `it carries an IPv6 extension header (next header ${p.nextHeader})`;
  if (isMulticast6(p.ipDst)) return `its destination ${p.ipDst} is multicast`;
  if (isUnspecifiedOrLoopback(p.ipSrc) || isMulticast6(p.ipSrc))
    return `its source ${p.ipSrc} names no single node`;
  const anycast = anycastOf(p.ipSrc, subnets);
  if (anycast) return `its source ${p.ipSrc} is the subnet-router anycast address of ${anycast}`;
  if (isMulticastMac(p.ethDst)) return `it was sent to the link-layer ${p.ethDst}`;
  return undefined;
}

/**
 * The ICMPv6 error about `p` (parsed from `frame`): Ethernet II + IPv6 (hop limit 64, no
 * extension headers) + ICMPv6, quoting as much of the offending packet, from its IPv6 header on,
 * as keeps the error packet within the minimum IPv6 MTU (1280 bytes), to the packet's source.
 */
export function buildIcmp6Error(
  frame: Buffer,
  p: Ipv6Packet,
  error: IcmpError,
  to: IcmpErrorAddresses,
): Buffer {
  const { type, code, pointer } = ICMPV6_ERROR_CODES[error.kind];
  const quoteLength = Math.min(p.ipEnd - p.ipStart, IPV6_MIN_MTU - IPV6_HEADER - ICMPV6_HEADER);
  const payloadLength = ICMPV6_HEADER + quoteLength;
  const out = ipv6Frame({
    ethDst: to.ethDst,
    ethSrc: to.ethSrc,
    ipSrc: to.ipSrc,
    ipDst: p.ipSrc,
    nextHeader: IPPROTO_ICMPV6,
    hopLimit: ERROR_TTL,
    payloadLength,
  });
  const ip = IPV6_AT;
  const icmp = IPV6_PAYLOAD_AT;
  out[icmp] = type;
  out[icmp + 1] = code;
  if (pointer !== undefined) out.writeUInt32BE(pointer, icmp + 4);
  frame.copy(out, icmp + ICMPV6_HEADER, p.ipStart, p.ipStart + quoteLength);
  out.writeUInt16BE(icmpv6Checksum(out, ip + 8, ip + 24, icmp, out.length), icmp + 2);
  return out;
}
