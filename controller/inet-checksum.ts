/**
 * The Internet checksum (RFC 1071) of the packets the controller builds itself (DHCP answers, the
 * routers' ICMP errors). Pure.
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
