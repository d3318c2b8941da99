import { formatIpv6 } from '../../../controller/intent/net.js';
import { onesComplementSum } from './frames.js';
import { icmp6ChecksumHolds, ipv6Bytes, ipv6Frame } from './frames6.js';

/**
 * Neighbour discovery frames for the tests, built and read byte by byte here (not with
 * controller/router/nd-frame.ts, which they check): a Neighbor Advertisement to send up, and a
 * Neighbor Solicitation read back at its offsets.
 */

export const macBytes = (mac: string): number[] => mac.split(':').map((h) => Number.parseInt(h, 16));
const hex = (b: Buffer, from: number, to: number): string =>
  [...b.subarray(from, to)].map((x) => x.toString(16).padStart(2, '0')).join(':');
const v6At = (b: Buffer, at: number): string =>
  formatIpv6(BigInt(`0x${b.subarray(at, at + 16).toString('hex')}`));

export interface NaSpec {
  ethDst: string;
  ethSrc: string;
  ipSrc: string;
  ipDst: string;
  target: string;
  /** The TLLA option's MAC; null: no option. */
  tlla: string | null;
  /** The first byte of the flags word (R 0x80, S 0x40, O 0x20); 0x60 by default. */
  flags?: number;
  hopLimit?: number;
}

/** An untagged Neighbor Advertisement, its ICMPv6 checksum computed here. */
export function naBytes(a: NaSpec): Buffer {
  const options = a.tlla === null ? [] : [2, 1, ...macBytes(a.tlla)];
  const msg = [136, 0, 0, 0, a.flags ?? 0x60, 0, 0, 0, ...ipv6Bytes(a.target), ...options];
  const pseudo = [...ipv6Bytes(a.ipSrc), ...ipv6Bytes(a.ipDst), 0, 0, 0, msg.length, 0, 0, 0, 58];
  const sum = ~onesComplementSum(Uint8Array.from([...pseudo, ...msg])) & 0xffff;
  msg[2] = sum >> 8;
  msg[3] = sum & 0xff;
  return ipv6Frame({
    ethDst: a.ethDst,
    ethSrc: a.ethSrc,
    ipSrc: a.ipSrc,
    ipDst: a.ipDst,
    nextHeader: 58,
    hopLimit: a.hopLimit ?? 255,
    payload: Uint8Array.from(msg),
  });
}

/** A neighbour solicitation (untagged, with a source link-layer option) read at its offsets. */
export function decodeNs(f: Buffer) {
  return {
    length: f.length,
    ethDst: hex(f, 0, 6),
    ethSrc: hex(f, 6, 12),
    ethertype: f.readUInt16BE(12),
    version: f[14]! >> 4,
    payloadLength: f.readUInt16BE(18),
    nextHeader: f[20],
    hopLimit: f[21],
    ipSrc: v6At(f, 22),
    ipDst: v6At(f, 38),
    type: f[54],
    code: f[55],
    target: v6At(f, 62),
    option: [f[78], f[79]],
    sourceMac: hex(f, 80, 86),
    checksumHolds: icmp6ChecksumHolds(f),
  };
}
