import { readMac } from '../../southbound/openflow/codec/values.js';
import { IcmpParseError } from '../router/icmp-error.js';
import { parseIpFrame } from '../router/icmp6-error.js';
import type { SgLogPacket } from './sg-log-book.js';

/**
 * What a security-group log entry says of the packet: read from the frame a logging flow sent up,
 * cut to the first 128 bytes by the switch (max_len), so only the headers: Ethernet (one 802.1Q
 * tag allowed), IPv4 or IPv6, and the TCP/UDP ports or ICMP/ICMPv6 type and code. The IP layer is
 * the routers' parser (controller/router/icmp6-error.ts `parseIpFrame`), which already checks
 * every length against frames from VMs; only the four bytes after the IP header are read here.
 *
 * A frame is reported as far as it can be read, never dropped for what it lacks (the switch
 * matched it, so the verdict stands whatever its bytes):
 * - not IP (ARP, an unknown ethertype) or an IP header that cannot be read (truncated, wrong
 *   version, bad header length): `protocol` is the ethertype as `0x....` and src/dst are the MACs,
 *   the only addresses known;
 * - IP: src/dst are the addresses, `protocol` tcp, udp, icmp (IPv4), icmpv6 (IPv6) or the number.
 *   IPv6 extension headers are not chased: behind one, `protocol` is its number (the fixed header's
 *   next header), as OVS would not match ports there either without parsing them;
 * - ports and ICMP type/code only where their bytes are in the frame (not in an IPv4 fragment
 *   other than the first, nor past a cut).
 * Only a frame too short for its Ethernet header (no MAC, so no endpoint to log for) is undefined.
 */
export interface LoggedPacket extends SgLogPacket {
  ethSrc: string;
  ethDst: string;
}

const ETH_LEN = 14;
const ETHERTYPE_VLAN = 0x8100;
const IPV6_HEADER = 40;

/** Names of the protocols the log names (SgLogEntry.protocol), by IP version. */
const NAMES: Record<4 | 6, Record<number, string>> = {
  4: { 1: 'icmp', 6: 'tcp', 17: 'udp' },
  6: { 58: 'icmpv6', 6: 'tcp', 17: 'udp' },
};
const WITH_PORTS = new Set(['tcp', 'udp']);
const WITH_TYPE = new Set(['icmp', 'icmpv6']);

export function readLoggedFrame(frame: Buffer): LoggedPacket | undefined {
  if (frame.length < ETH_LEN) return undefined;
  const eth = { ethDst: readMac(frame, 0), ethSrc: readMac(frame, 6) };
  let ip: ReturnType<typeof parseIpFrame>;
  try {
    ip = parseIpFrame(frame);
  } catch (err) {
    if (!(err instanceof IcmpParseError)) throw err;
    return { ...eth, protocol: hex4(ethertypeOf(frame)), src: eth.ethSrc, dst: eth.ethDst };
  }
  const number = ip.family === 4 ? ip.p.protocol : ip.p.nextHeader;
  const protocol = NAMES[ip.family][number] ?? String(number);
  const out: LoggedPacket = { ...eth, protocol, src: ip.p.ipSrc, dst: ip.p.ipDst };
  // A later IPv4 fragment starts inside the upper-layer payload: its first bytes are no header.
  if (ip.family === 4 && !ip.p.firstFragment) return out;
  const l4 = ip.p.ipStart + (ip.family === 4 ? ip.p.headerLength : IPV6_HEADER);
  const end = ip.p.ipEnd;
  if (WITH_PORTS.has(protocol) && l4 + 4 <= end) {
    out.srcPort = frame.readUInt16BE(l4);
    out.dstPort = frame.readUInt16BE(l4 + 2);
  } else if (WITH_TYPE.has(protocol) && l4 + 2 <= end) {
    out.icmpType = frame[l4]!;
    out.icmpCode = frame[l4 + 1]!;
  }
  return out;
}

/** The ethertype past one 802.1Q tag (the tag's own when the frame ends inside it). */
function ethertypeOf(frame: Buffer): number {
  const outer = frame.readUInt16BE(12);
  return outer === ETHERTYPE_VLAN && frame.length >= ETH_LEN + 4 ? frame.readUInt16BE(16) : outer;
}

const hex4 = (n: number): string => `0x${n.toString(16).padStart(4, '0')}`;
