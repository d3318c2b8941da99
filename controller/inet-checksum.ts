/**
 * The Internet checksum (RFC 1071) of the packets the controller builds itself (DHCP and DHCPv6
 * answers, the routers' ICMP errors and router advertisements). Pure.
 */

/** One's-complement sum of buf[start, end) added to `acc` (a pseudo-header's), not yet folded. */
export function onesSum(buf: Uint8Array, start: number, end: number, acc = 0): number {
  let i = start;
  for (; i + 1 < end; i += 2) acc += (buf[i]! << 8) | buf[i + 1]!;
  if (i < end) acc += buf[i]! << 8;
  return acc;
}

/** The sum folded to 16 bits and inverted: the value that goes in the header. */
export function foldChecksum(sum: number): number {
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** The checksum of buf[start, end) alone. */
export function internetChecksum(buf: Uint8Array, start: number, end: number): number {
  return foldChecksum(onesSum(buf, start, end));
}

const IPPROTO_ICMPV6 = 58;

/**
 * The checksum of an upper-layer message buf[start, end) carried over IPv6 (UDP, ICMPv6, ...): the
 * Internet checksum over the IPv6 pseudo-header (RFC 8200 8.1: source and destination address,
 * 32-bit upper-layer length, three zero bytes, `nextHeader`) and the message, with the 16-byte
 * addresses read at `srcAt` and `dstAt`. Over a message whose checksum field is filled in, 0 means
 * it holds.
 */
export function ipv6UpperChecksum(
  buf: Uint8Array,
  srcAt: number,
  dstAt: number,
  start: number,
  end: number,
  nextHeader: number,
): number {
  const length = end - start;
  let acc = onesSum(buf, srcAt, srcAt + 16);
  acc = onesSum(buf, dstAt, dstAt + 16, acc);
  acc += (length >>> 16) + (length & 0xffff) + nextHeader;
  return foldChecksum(onesSum(buf, start, end, acc));
}

/** The ICMPv6 checksum (RFC 4443 2.3): the IPv6 upper-layer checksum with next header 58. */
export function icmpv6Checksum(
  buf: Uint8Array,
  srcAt: number,
  dstAt: number,
  start: number,
  end: number,
): number {
  return ipv6UpperChecksum(buf, srcAt, dstAt, start, end, IPPROTO_ICMPV6);
}
