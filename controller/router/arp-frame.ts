import { formatIpv4, parseIpv4 } from '../../southbound/openflow/codec/values.js';

/**
 * ARP frames for the router's neighbour resolution (RFC 826, Ethernet + IPv4 only): the requests
 * weft sends for an address, and the replies it reads. Pure: bytes in, bytes out.
 */

export const ETH_TYPE_ARP = 0x0806;
const ETH_TYPE_VLAN = 0x8100;
export const ARP_OP = { REQUEST: 1, REPLY: 2 } as const;
const ARP_LENGTH = 28;
/** Ethernet's minimum frame (without FCS): shorter frames are padded with zeros. */
const MIN_FRAME = 60;
export const BROADCAST_MAC = 'ff:ff:ff:ff:ff:ff';

export class ArpParseError extends Error {
  override name = 'ArpParseError';
}

export interface ArpPacket {
  ethSrc: string;
  ethDst: string;
  op: number;
  /** Sender hardware and protocol address. */
  sha: string;
  spa: string;
  /** Target hardware and protocol address. */
  tha: string;
  tpa: string;
}

function macBytes(mac: string, into: Buffer, at: number): void {
  const parts = mac.split(':');
  if (parts.length !== 6) throw new RangeError(`'${mac}' is not a MAC address`);
  for (let i = 0; i < 6; i++) {
    const b = Number.parseInt(parts[i]!, 16);
    if (!/^[0-9a-f]{2}$/i.test(parts[i]!) || Number.isNaN(b))
      throw new RangeError(`'${mac}' is not a MAC address`);
    into[at + i] = b;
  }
}

function macText(b: Buffer, at: number): string {
  const out: string[] = [];
  for (let i = 0; i < 6; i++) out.push(b[at + i]!.toString(16).padStart(2, '0'));
  return out.join(':');
}

function ipv4Bytes(ip: string, into: Buffer, at: number): void {
  const v = parseIpv4(ip);
  if (v < 0) throw new RangeError(`'${ip}' is not an IPv4 address`);
  into.writeUInt32BE(v, at);
}

/**
 * An ARP request "who has `targetIp`? tell `senderIp`" from `senderMac`. Broadcast by default; a
 * known `ethDst` makes it a unicast probe (RFC 1122 2.3.2.1: re-validating an entry it has).
 */
export function buildArpRequest(a: {
  senderMac: string;
  senderIp: string;
  targetIp: string;
  ethDst?: string;
}): Buffer {
  const frame = Buffer.alloc(MIN_FRAME);
  macBytes(a.ethDst ?? BROADCAST_MAC, frame, 0);
  macBytes(a.senderMac, frame, 6);
  frame.writeUInt16BE(ETH_TYPE_ARP, 12);
  frame.writeUInt16BE(1, 14); // hardware: Ethernet
  frame.writeUInt16BE(0x0800, 16); // protocol: IPv4
  frame[18] = 6;
  frame[19] = 4;
  frame.writeUInt16BE(ARP_OP.REQUEST, 20);
  macBytes(a.senderMac, frame, 22);
  ipv4Bytes(a.senderIp, frame, 28);
  // tha: zero in a request (RFC 5227 2.1.1)
  ipv4Bytes(a.targetIp, frame, 38);
  return frame;
}

/** Reads an Ethernet frame (802.1Q-tagged or not) carrying ARP for IPv4 over Ethernet. */
export function parseArpFrame(frame: Buffer): ArpPacket {
  if (frame.length < 14)
    throw new ArpParseError(`frame of ${frame.length} bytes is shorter than an Ethernet header`);
  let at = 12;
  let type = frame.readUInt16BE(at);
  if (type === ETH_TYPE_VLAN) {
    if (frame.length < 18) throw new ArpParseError('802.1Q frame cut short in its tag');
    at += 4;
    type = frame.readUInt16BE(at);
  }
  if (type !== ETH_TYPE_ARP)
    throw new ArpParseError(`ethertype 0x${type.toString(16).padStart(4, '0')} is not ARP`);
  const arp = at + 2;
  if (frame.length < arp + ARP_LENGTH)
    throw new ArpParseError(`ARP of ${frame.length - arp} bytes is shorter than ${ARP_LENGTH}`);
  const htype = frame.readUInt16BE(arp);
  const ptype = frame.readUInt16BE(arp + 2);
  if (htype !== 1 || ptype !== 0x0800 || frame[arp + 4] !== 6 || frame[arp + 5] !== 4)
    throw new ArpParseError(
      `ARP for hardware ${htype} / protocol 0x${ptype.toString(16)}, not Ethernet / IPv4`,
    );
  return {
    ethDst: macText(frame, 0),
    ethSrc: macText(frame, 6),
    op: frame.readUInt16BE(arp + 6),
    sha: macText(frame, arp + 8),
    spa: formatIpv4(frame.readUInt32BE(arp + 14)),
    tha: macText(frame, arp + 18),
    tpa: formatIpv4(frame.readUInt32BE(arp + 24)),
  };
}
