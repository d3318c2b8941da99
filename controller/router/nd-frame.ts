import { readMac, writeIpv6, writeMac } from '../../southbound/openflow/codec/values.js';
import { icmpv6Checksum } from '../inet-checksum.js';
import { formatIpv6, normalizeMac, parseIp } from '../intent/net.js';
import { IPV6_AT, IPV6_PAYLOAD_AT, ipv6Frame, ND_HOP_LIMIT, read128 } from '../ipv6-frame.js';

/**
 * IPv6 neighbour discovery frames for the router's neighbour resolution (RFC 4861, Ethernet only):
 * the Neighbor Solicitations weft sends for an address, and the Neighbor Advertisements hosts send
 * back (or unsolicited, to ff02::1, when an address moves). The IPv6 twin of arp-frame.ts. Pure:
 * bytes in, bytes out.
 *
 * The advertisements come from VMs, so every length is checked before it is used and a message
 * RFC 4861 7.1.2 tells a node to discard surfaces as an NdParseError instead.
 */

const ETH_TYPE_IPV6 = 0x86dd;
const ETH_TYPE_VLAN = 0x8100;
const IPV6_HEADER = 40;
const IPPROTO_ICMPV6 = 58;
export const ND_TYPE = { NEIGHBOR_SOLICITATION: 135, NEIGHBOR_ADVERTISEMENT: 136 } as const;
/** RFC 4861 4.6.1: Source and Target Link-Layer Address options. */
const OPTION = { SLLA: 1, TLLA: 2 } as const;
/** NS: type, code, checksum, reserved (4), target (16), then one SLLA option of 8 bytes. */
const NS_LENGTH = 32;
/** NA without options: type, code, checksum, flags (4), target (16). */
const NA_MIN_LENGTH = 24;
/** RFC 4291 2.7.1: ff02::1:ff00:0/104, the low 24 bits from the unicast address. */
const SOLICITED_NODE_PREFIX = 0xff0200000000000000000001ff000000n;

export class NdParseError extends Error {
  override name = 'NdParseError';
}

export interface NeighborAdvertisement {
  ethSrc: string;
  ethDst: string;
  /** Canonical text (controller/intent/net.ts), as the intent stores addresses. */
  ipSrc: string;
  ipDst: string;
  /** The address advertised, canonical text. */
  target: string;
  router: boolean;
  solicited: boolean;
  override: boolean;
  /** The Target Link-Layer Address option's MAC, if present (lower case, colon-separated). */
  targetMac?: string;
}

function v6(ip: string): bigint {
  const a = parseIp(ip);
  if (a?.family !== 6) throw new RangeError(`'${ip}' is not an IPv6 address`);
  return a.value;
}

function mac(text: string): string {
  // Colon-separated only, as weft writes MACs everywhere (writeMac also takes '-').
  const m = normalizeMac(text);
  if (m === undefined) throw new RangeError(`'${text}' is not a MAC address`);
  return m;
}

/** ff00::/8. */
const isMulticast = (v: bigint): boolean => v >> 120n === 0xffn;

/** Solicited-node multicast address of `ip` (ff02::1:ffXX:XXXX, RFC 4291 2.7.1), canonical text. */
export function solicitedNodeAddress(ip: string): string {
  return formatIpv6(SOLICITED_NODE_PREFIX | (v6(ip) & 0xffffffn));
}

/** Its Ethernet multicast MAC (33:33 + last 4 bytes of the IPv6 address, RFC 2464 7). */
export function ipv6MulticastMac(ip: string): string {
  const v = v6(ip);
  return `33:33:${[24n, 16n, 8n, 0n].map((b) => ((v >> b) & 0xffn).toString(16).padStart(2, '0')).join(':')}`;
}

/**
 * A Neighbor Solicitation for `targetIp` from `senderIp`/`senderMac` (with the Source Link-Layer
 * Address option = senderMac, so the target can answer without resolving us first). Multicast to
 * the target's solicited-node address by default; a known `ethDst` makes it unicast (to ethDst,
 * IPv6 destination = targetIp): re-validating an entry (RFC 4861 7.3.1). Hop limit 255, ICMPv6
 * type 135 code 0, checksum filled in. Throws RangeError naming a malformed MAC or address.
 */
export function buildNeighborSolicitation(a: {
  senderMac: string;
  senderIp: string;
  targetIp: string;
  ethDst?: string;
}): Buffer {
  v6(a.senderIp);
  const senderMac = mac(a.senderMac);
  const group = solicitedNodeAddress(a.targetIp);
  const frame = ipv6Frame({
    ethDst: a.ethDst === undefined ? ipv6MulticastMac(group) : mac(a.ethDst),
    ethSrc: senderMac,
    ipSrc: a.senderIp,
    ipDst: a.ethDst === undefined ? group : a.targetIp,
    nextHeader: IPPROTO_ICMPV6,
    hopLimit: ND_HOP_LIMIT,
    payloadLength: NS_LENGTH,
  });
  const at = IPV6_PAYLOAD_AT;
  frame[at] = ND_TYPE.NEIGHBOR_SOLICITATION;
  // code, checksum and reserved stay zero until the checksum below
  writeIpv6(frame, at + 8, a.targetIp); // checked by solicitedNodeAddress
  frame[at + 24] = OPTION.SLLA;
  frame[at + 25] = 1; // in units of 8 bytes
  writeMac(frame, at + 26, senderMac);
  const sum = icmpv6Checksum(frame, IPV6_AT + 8, IPV6_AT + 24, at, at + NS_LENGTH);
  frame.writeUInt16BE(sum, at + 2);
  return frame;
}

/**
 * Whether an untagged Ethernet frame (as classify hands it on, tag popped) carries IPv6 with ICMPv6
 * (next header 58, no extension header) of type 136: the cheap test before parsing. Never throws.
 */
export const isNeighborAdvertisementFrame = (frame: Buffer): boolean =>
  frame.length > IPV6_PAYLOAD_AT &&
  frame.readUInt16BE(12) === ETH_TYPE_IPV6 &&
  frame[IPV6_AT]! >> 4 === 6 &&
  frame[IPV6_AT + 6] === IPPROTO_ICMPV6 &&
  frame[IPV6_PAYLOAD_AT] === ND_TYPE.NEIGHBOR_ADVERTISEMENT;

/**
 * Reads an NA (Ethernet II, one 802.1Q tag allowed) and validates it as RFC 4861 7.1.2 says a node
 * must before using it: a forged or routed answer must not move a neighbour entry. Ethernet padding
 * past the IPv6 payload length is ignored (the message ends where the payload length says, never
 * past the frame). Throws NdParseError naming what was wrong.
 */
export function parseNeighborAdvertisement(frame: Buffer): NeighborAdvertisement {
  if (frame.length < 14)
    throw new NdParseError(`frame of ${frame.length} bytes is shorter than an Ethernet header`);
  let ip = 14;
  let type = frame.readUInt16BE(12);
  if (type === ETH_TYPE_VLAN) {
    if (frame.length < 18) throw new NdParseError('802.1Q frame cut short in its tag');
    type = frame.readUInt16BE(16);
    ip += 4;
  }
  if (type !== ETH_TYPE_IPV6)
    throw new NdParseError(`ethertype 0x${type.toString(16).padStart(4, '0')} is not IPv6`);
  if (frame.length < ip + IPV6_HEADER)
    throw new NdParseError(`IPv6 header of ${frame.length - ip} bytes is shorter than ${IPV6_HEADER}`);
  if (frame[ip]! >> 4 !== 6) throw new NdParseError(`IP version ${frame[ip]! >> 4}, not 6`);
  const nextHeader = frame[ip + 6]!;
  if (nextHeader !== IPPROTO_ICMPV6) throw new NdParseError(`next header ${nextHeader}, not ICMPv6 (58)`);
  const hopLimit = frame[ip + 7]!;
  if (hopLimit !== ND_HOP_LIMIT) throw new NdParseError(`hop limit ${hopLimit}, not 255`);
  const at = ip + IPV6_HEADER;
  const end = Math.min(frame.length, at + frame.readUInt16BE(ip + 4));
  const tooShort = () =>
    new NdParseError(`ICMPv6 message of ${end - at} bytes is shorter than ${NA_MIN_LENGTH}`);
  if (end - at < 2) throw tooShort();
  if (frame[at] !== ND_TYPE.NEIGHBOR_ADVERTISEMENT)
    throw new NdParseError(`ICMPv6 type ${frame[at]}, not a Neighbor Advertisement (136)`);
  if (frame[at + 1] !== 0) throw new NdParseError(`ICMPv6 code ${frame[at + 1]}, not 0`);
  if (end - at < NA_MIN_LENGTH) throw tooShort();
  if (icmpv6Checksum(frame, ip + 8, ip + 24, at, end) !== 0)
    throw new NdParseError(`ICMPv6 checksum 0x${frame.readUInt16BE(at + 2).toString(16)} does not hold`);
  const target = read128(frame, at + 8);
  if (isMulticast(target)) throw new NdParseError(`target ${formatIpv6(target)} is multicast`);
  const dst = read128(frame, ip + 24);
  const flags = frame[at + 4]!;
  const solicited = (flags & 0x40) !== 0;
  if (solicited && isMulticast(dst))
    throw new NdParseError(`solicited flag set on an advertisement to multicast ${formatIpv6(dst)}`);
  let targetMac: string | undefined;
  for (let opt = at + NA_MIN_LENGTH; opt < end; ) {
    if (end - opt < 2) throw new NdParseError(`option at byte ${opt - at} cut short in its header`);
    const optType = frame[opt]!;
    const length = frame[opt + 1]! * 8;
    if (length === 0) throw new NdParseError(`option type ${optType} has length 0`);
    if (opt + length > end)
      throw new NdParseError(`option type ${optType} of ${length} bytes runs past the message end`);
    // The first TLLA counts; its 6 bytes fit since its length is at least 8.
    if (optType === OPTION.TLLA && targetMac === undefined) targetMac = readMac(frame, opt + 2);
    opt += length;
  }
  return {
    ethDst: readMac(frame, 0),
    ethSrc: readMac(frame, 6),
    ipSrc: formatIpv6(read128(frame, ip + 8)),
    ipDst: formatIpv6(dst),
    target: formatIpv6(target),
    router: (flags & 0x80) !== 0,
    solicited,
    override: (flags & 0x20) !== 0,
    ...(targetMac === undefined ? {} : { targetMac }),
  };
}
