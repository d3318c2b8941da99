import { writeIpv6, writeMac } from '../southbound/openflow/codec/values.js';

/** Where an untagged frame's IPv6 header starts, and its payload (the upper-layer message). */
export const IPV6_AT = 14;
export const IPV6_PAYLOAD_AT = IPV6_AT + 40;
/** Neighbour discovery's hop limit: sent with it, taken only with it, so it was not routed (RFC 4861 6.1, 7.1). */
export const ND_HOP_LIMIT = 255;

/** The 16 bytes of an IPv6 address at `off` as a number (net.ts formatIpv6 makes it canonical text). */
export const read128 = (buf: Uint8Array, off: number): bigint =>
  BigInt(`0x${Buffer.from(buf.subarray(off, off + 16)).toString('hex')}`);

export interface Ipv6FrameHead {
  ethDst: string;
  ethSrc: string;
  ipSrc: string;
  ipDst: string;
  nextHeader: number;
  hopLimit: number;
  /** The upper-layer message's length; the frame has room for it, zeroed, from IPV6_PAYLOAD_AT. */
  payloadLength: number;
}

/**
 * An Ethernet II + IPv6 frame the controller sends (an ICMPv6 error, a router advertisement, a
 * DHCPv6 answer): both headers written (traffic class and flow label 0), the payload left to the
 * caller. Pure; throws TypeError naming the field a MAC or address in it is not.
 */
export function ipv6Frame(h: Ipv6FrameHead): Buffer {
  const out = Buffer.alloc(IPV6_PAYLOAD_AT + h.payloadLength);
  for (const [at, field] of [
    [0, 'ethDst'],
    [6, 'ethSrc'],
  ] as const)
    if (!writeMac(out, at, h[field])) throw new TypeError(`${field}: '${h[field]}' is not a MAC address`);
  out.writeUInt16BE(0x86dd, 12);
  out[IPV6_AT] = 0x60; // version 6, traffic class and flow label 0
  out.writeUInt16BE(h.payloadLength, IPV6_AT + 4);
  out[IPV6_AT + 6] = h.nextHeader;
  out[IPV6_AT + 7] = h.hopLimit;
  for (const [at, field] of [
    [IPV6_AT + 8, 'ipSrc'],
    [IPV6_AT + 24, 'ipDst'],
  ] as const)
    if (!writeIpv6(out, at, h[field])) throw new TypeError(`${field}: '${h[field]}' is not an IPv6 address`);
  return out;
}
