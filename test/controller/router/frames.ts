/**
 * Test-side frame building and checking for the router's ICMP errors, written independently of
 * controller/router/icmp-error.ts (no shared helpers) so the tests check it against a second
 * reading of RFC 791/792/1071 rather than against itself.
 */

export interface FrameSpec {
  ethDst?: string;
  ethSrc?: string;
  /** An 802.1Q tag with this VLAN id. */
  vlan?: number;
  ipSrc?: string;
  ipDst?: string;
  ttl?: number;
  protocol?: number;
  /** Everything after the IPv4 header (the L4 header and its data). */
  payload?: Uint8Array;
  /** IPv4 options: a multiple of 4 bytes. */
  options?: Uint8Array;
  /** Fragment offset in 8-byte units, and the more-fragments flag. */
  fragmentOffset?: number;
  moreFragments?: boolean;
  /** Bytes after the IPv4 packet (Ethernet padding). */
  padding?: number;
  /** Overrides of header fields, to build malformed packets. */
  version?: number;
  ihl?: number;
  totalLength?: number;
  ethertype?: number;
}

const macBytes = (mac: string): number[] => mac.split(':').map((h) => Number.parseInt(h, 16));
const ipBytes = (ip: string): number[] => ip.split('.').map(Number);

/** An Ethernet II frame carrying one IPv4 packet, byte by byte. */
export function ipv4Frame(s: FrameSpec = {}): Buffer {
  const options = [...(s.options ?? [])];
  const payload = [...(s.payload ?? [])];
  const header: number[] = [];
  const ihl = s.ihl ?? 5 + options.length / 4;
  const total = s.totalLength ?? 20 + options.length + payload.length;
  const frag = ((s.moreFragments ? 1 : 0) << 13) | (s.fragmentOffset ?? 0);
  header.push(((s.version ?? 4) << 4) | ihl, 0, total >> 8, total & 0xff, 0x12, 0x34, frag >> 8, frag & 0xff);
  header.push(s.ttl ?? 64, s.protocol ?? 17, 0, 0);
  header.push(...ipBytes(s.ipSrc ?? '10.1.0.5'), ...ipBytes(s.ipDst ?? '10.2.0.5'), ...options);
  const sum = onesComplementSum(Uint8Array.from(header));
  header[10] = (~sum >> 8) & 0xff;
  header[11] = ~sum & 0xff;
  const eth = [...macBytes(s.ethDst ?? '0a:57:72:00:00:64'), ...macBytes(s.ethSrc ?? '02:00:00:00:01:05')];
  if (s.vlan !== undefined) eth.push(0x81, 0x00, s.vlan >> 8, s.vlan & 0xff);
  const ethertype = s.ethertype ?? 0x0800;
  eth.push(ethertype >> 8, ethertype & 0xff);
  return Buffer.from([...eth, ...header, ...payload, ...new Array<number>(s.padding ?? 0).fill(0)]);
}

/** A UDP header and `data` bytes (the checksum left 0: optional in IPv4). */
export function udp(srcPort: number, dstPort: number, data: Uint8Array = new Uint8Array(4)): Uint8Array {
  const len = 8 + data.length;
  return Uint8Array.from([
    srcPort >> 8,
    srcPort & 0xff,
    dstPort >> 8,
    dstPort & 0xff,
    len >> 8,
    len & 0xff,
    0,
    0,
    ...data,
  ]);
}

/** An ICMP message of this type and code with `data` after its 8-byte header (checksum left 0). */
export function icmp(type: number, code = 0, data: Uint8Array = new Uint8Array(8)): Uint8Array {
  return Uint8Array.from([type, code, 0, 0, 0, 0, 0, 0, ...data]);
}

/**
 * The 16-bit one's complement sum of `bytes` (RFC 1071), folding the carry back in after every
 * addition, an odd last byte as the high half of a word.
 */
export function onesComplementSum(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) {
    const word = bytes[i]! * 256 + (i + 1 < bytes.length ? bytes[i + 1]! : 0);
    sum += word;
    if (sum > 0xffff) sum -= 0xffff;
  }
  return sum;
}

/** A checksummed region is intact when its sum, its checksum included, is all ones. */
export const checksumHolds = (bytes: Uint8Array): boolean => onesComplementSum(bytes) === 0xffff;

/** The parts of an untagged frame carrying an IPv4 packet with a 20-byte header and ICMP. */
export function icmpParts(frame: Buffer) {
  const ip = frame.subarray(14, 34);
  const message = frame.subarray(34);
  return {
    ethDst: [...frame.subarray(0, 6)].map((b) => b.toString(16).padStart(2, '0')).join(':'),
    ethSrc: [...frame.subarray(6, 12)].map((b) => b.toString(16).padStart(2, '0')).join(':'),
    ethertype: frame.readUInt16BE(12),
    versionIhl: ip[0]!,
    totalLength: ip.readUInt16BE(2),
    ttl: ip[8]!,
    protocol: ip[9]!,
    ipSrc: [...ip.subarray(12, 16)].join('.'),
    ipDst: [...ip.subarray(16, 20)].join('.'),
    ipHeader: ip,
    message,
    type: message[0]!,
    code: message[1]!,
    unused: message.readUInt32BE(4),
    quote: message.subarray(8),
  };
}
