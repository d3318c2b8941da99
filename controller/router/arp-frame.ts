import { readIpv4, readMac, writeIpv4, writeMac } from '../../southbound/openflow/codec/values.js';

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
  // Colon-separated only, as weft writes MACs everywhere (writeMac also takes '-').
  if (mac.includes('-') || !writeMac(into, at, mac)) throw new RangeError(`'${mac}' is not a MAC address`);
}

function ipv4Bytes(ip: string, into: Buffer, at: number): void {
  if (!writeIpv4(into, at, ip)) throw new RangeError(`'${ip}' is not an IPv4 address`);
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

/** Whether an untagged Ethernet frame (as classify hands it on, tag popped) carries ARP. */
export const isArpFrame = (frame: Buffer): boolean =>
  frame.length >= 14 && frame.readUInt16BE(12) === ETH_TYPE_ARP;

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
    ethDst: readMac(frame, 0),
    ethSrc: readMac(frame, 6),
    op: frame.readUInt16BE(arp + 6),
    sha: readMac(frame, arp + 8),
    spa: readIpv4(frame, arp + 14),
    tha: readMac(frame, arp + 18),
    tpa: readIpv4(frame, arp + 24),
  };
}
