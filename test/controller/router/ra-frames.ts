import { onesComplementSum } from './frames.js';

/**
 * Test-side router solicitations (built) and advertisements (decoded field by field), written
 * independently of controller/router/ra-frame.ts and controller/inet-checksum.ts (no shared
 * helpers but frames.ts's one's complement sum), so the tests check it against a second reading
 * of RFC 4861, RFC 4443 2.3 and RFC 8200 8.1 rather than against itself.
 */

const macBytes = (mac: string): number[] => mac.split(':').map((h) => Number.parseInt(h, 16));
const hexMac = (b: Uint8Array): string => [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');

/** IPv6 text (with at most one `::`) as its 16 bytes. */
export function ipv6Bytes(text: string): number[] {
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) throw new Error(`test helper: '${text}' is not IPv6 text it reads`);
  return groups.flatMap((g) => {
    const v = Number.parseInt(g, 16);
    return [v >> 8, v & 0xff];
  });
}

/** 16 address bytes as 8 uncompressed groups (`fe80:0:0:0:857:72ff:fe00:3c1`). */
export const groupsOf = (b: Uint8Array | number[]): string =>
  Array.from({ length: 8 }, (_, i) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16)).join(':');
/** IPv6 text in the form groupsOf prints, to compare decoded addresses with. */
export const v6 = (text: string): string => groupsOf(ipv6Bytes(text));

/** The ICMPv6 sum over the pseudo-header (source, destination, 32-bit length, next header 58) and message. */
function icmpv6Sum(src: number[], dst: number[], message: Uint8Array): number {
  const len = message.length;
  const pseudo = [...src, ...dst, (len >>> 24) & 0xff, (len >>> 16) & 0xff, (len >> 8) & 0xff, len & 0xff];
  pseudo.push(0, 0, 0, 58);
  return onesComplementSum(Uint8Array.from([...pseudo, ...message]));
}

/** Whether the ICMPv6 checksum of an untagged frame's message holds (the sum with it is all ones). */
export function icmpv6ChecksumHolds(frame: Buffer): boolean {
  const payloadLength = frame.readUInt16BE(18);
  const src = [...frame.subarray(22, 38)];
  const dst = [...frame.subarray(38, 54)];
  return icmpv6Sum(src, dst, frame.subarray(54, 54 + payloadLength)) === 0xffff;
}

export interface RsSpec {
  ethSrc?: string;
  ethDst?: string;
  ipSrc?: string;
  ipDst?: string;
  hopLimit?: number;
  nextHeader?: number;
  type?: number;
  code?: number;
  /** Options after the 8-byte header, raw. */
  options?: number[];
  /** The source link-layer address option with this MAC. */
  sll?: string;
  /** Overrides of the computed fields, to build invalid packets. */
  checksum?: number;
  payloadLength?: number;
  /** An 802.1Q tag with this VLAN id. */
  vlan?: number;
  /** Bytes after the packet (Ethernet padding). */
  padding?: number;
}

export const VM_MAC = '02:00:00:00:01:05';
export const VM_LL = 'fe80::ff:fe00:105';

/** A router solicitation frame, byte by byte (valid unless `s` says otherwise). */
export function rsFrame(s: RsSpec = {}): Buffer {
  const src = ipv6Bytes(s.ipSrc ?? VM_LL);
  const dst = ipv6Bytes(s.ipDst ?? 'ff02::2');
  const options = [...(s.options ?? [])];
  if (s.sll) options.push(1, 1, ...macBytes(s.sll));
  const message = Uint8Array.from([s.type ?? 133, s.code ?? 0, 0, 0, 0, 0, 0, 0, ...options]);
  const sum = icmpv6Sum(src, dst, message);
  const checksum = s.checksum ?? ~sum & 0xffff;
  message[2] = checksum >> 8;
  message[3] = checksum & 0xff;
  const len = s.payloadLength ?? message.length;
  const ip = [0x60, 0, 0, 0, len >> 8, len & 0xff, s.nextHeader ?? 58, s.hopLimit ?? 255, ...src, ...dst];
  const eth = [...macBytes(s.ethDst ?? '33:33:00:00:00:02'), ...macBytes(s.ethSrc ?? VM_MAC)];
  if (s.vlan !== undefined) eth.push(0x81, 0x00, s.vlan >> 8, s.vlan & 0xff);
  eth.push(0x86, 0xdd);
  return Buffer.from([...eth, ...ip, ...message, ...new Array<number>(s.padding ?? 0).fill(0)]);
}

/** One option of an advertisement, decoded by its type. */
export type RaOption =
  | { type: 1; mac: string }
  | { type: 5; reserved: number; mtu: number }
  | {
      type: 3;
      prefixLength: number;
      onLink: boolean;
      autonomous: boolean;
      otherFlags: number;
      valid: number;
      preferred: number;
      reserved2: number;
      prefix: string;
    }
  | { type: number; length: number };

/** An untagged router advertisement frame, field by field. */
export function decodeRa(frame: Buffer) {
  const ip = frame.subarray(14, 54);
  const payloadLength = ip.readUInt16BE(4);
  const m = frame.subarray(54, 54 + payloadLength);
  const options: RaOption[] = [];
  for (let o = 16; o < m.length; ) {
    const type = m[o]!;
    const length = m[o + 1]! * 8;
    if (length === 0) throw new Error('test decoder: option of length 0');
    const body = m.subarray(o, o + length);
    if (type === 1 && length === 8) options.push({ type, mac: hexMac(body.subarray(2, 8)) });
    else if (type === 5 && length === 8)
      options.push({ type, reserved: body.readUInt16BE(2), mtu: body.readUInt32BE(4) });
    else if (type === 3 && length === 32)
      options.push({
        type,
        prefixLength: body[2]!,
        onLink: (body[3]! & 0x80) !== 0,
        autonomous: (body[3]! & 0x40) !== 0,
        otherFlags: body[3]! & 0x3f,
        valid: body.readUInt32BE(4),
        preferred: body.readUInt32BE(8),
        reserved2: body.readUInt32BE(12),
        prefix: groupsOf(body.subarray(16, 32)),
      });
    else options.push({ type, length });
    o += length;
  }
  return {
    frameLength: frame.length,
    ethDst: hexMac(frame.subarray(0, 6)),
    ethSrc: hexMac(frame.subarray(6, 12)),
    ethertype: frame.readUInt16BE(12),
    version: ip[0]! >> 4,
    trafficClassFlow: ip.readUInt32BE(0) & 0x0fffffff,
    payloadLength,
    nextHeader: ip[6]!,
    hopLimit: ip[7]!,
    ipSrc: groupsOf(ip.subarray(8, 24)),
    ipDst: groupsOf(ip.subarray(24, 40)),
    type: m[0]!,
    code: m[1]!,
    curHopLimit: m[4]!,
    managed: (m[5]! & 0x80) !== 0,
    other: (m[5]! & 0x40) !== 0,
    flagsRest: m[5]! & 0x3f,
    routerLifetime: m.readUInt16BE(6),
    reachableTime: m.readUInt32BE(8),
    retransTimer: m.readUInt32BE(12),
    options,
    checksumHolds: icmpv6ChecksumHolds(frame),
  };
}

/** The prefix information options of a decoded advertisement: [prefix/length as pfx() prints it, valid, preferred, L]. */
export function prefixInfo(ra: ReturnType<typeof decodeRa>): Array<[string, number, number, boolean]> {
  return ra.options.flatMap((o) =>
    'prefixLength' in o ? [[`${o.prefix}/${o.prefixLength}`, o.valid, o.preferred, o.onLink]] : [],
  ) as Array<[string, number, number, boolean]>;
}
/** A CIDR in the form prefixInfo prints. */
export const pfx = (cidr: string): string => {
  const [addr, len] = cidr.split('/');
  return `${v6(addr!)}/${len}`;
};
