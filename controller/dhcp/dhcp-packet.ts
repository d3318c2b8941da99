/**
 * DHCPv4 frames as OVS hands them to the controller (packet-in) and takes them back (packet-out):
 * Ethernet II + IPv4 + UDP + BOOTP (RFC 951/1542/2131). Pure byte work, no I/O.
 *
 * The parsers take untrusted bytes from VMs: every length is checked before it is used, and
 * anything malformed surfaces as a DhcpParseError, never as a RangeError from Buffer.
 */

import { readIpv4, readMac, writeMac } from '../../southbound/openflow/codec/values.js';
import { foldChecksum, onesSum } from '../inet-checksum.js';
import {
  checkUint,
  type DhcpOptions,
  DhcpParseError,
  decodeReplyOptions,
  decodeRequestOptions,
  encodeReplyOptions,
  encodeRequestOptions,
  ipv4Bytes,
  readOptions,
} from './dhcp-options.js';

export { DhcpParseError } from './dhcp-options.js';

export const DHCP = {
  DISCOVER: 1,
  OFFER: 2,
  REQUEST: 3,
  DECLINE: 4,
  ACK: 5,
  NAK: 6,
  RELEASE: 7,
  INFORM: 8,
} as const;

/** A client's DHCP message as it left the VM: Ethernet II + IPv4 + UDP 68->67 + BOOTP/DHCP. */
export interface DhcpRequest {
  ethSrc: string;
  ethDst: string;
  ipSrc: string;
  ipDst: string;
  xid: number;
  secs: number;
  /** 0x8000 = broadcast bit. */
  flags: number;
  /** '0.0.0.0' when none. */
  ciaddr: string;
  giaddr: string;
  /** First 6 bytes of chaddr as MAC text. */
  chaddr: string;
  /** Option 53. */
  messageType: number;
  requestedIp?: string;
  serverId?: string;
  hostname?: string;
  /** Option 55, [] when absent. */
  paramList: number[];
  /** Option 61, a copy. */
  clientId?: Buffer;
}

export interface DhcpReply {
  messageType: 2 | 5 | 6;
  xid: number;
  secs?: number;
  flags: number;
  chaddr: string;
  ciaddr: string;
  yiaddr: string;
  giaddr?: string;
  /** Frame addresses: the caller decides unicast vs broadcast (RFC 2131 4.1). */
  ethSrc: string;
  ethDst: string;
  ipSrc: string;
  ipDst: string;
  /** Option 54, always sent. */
  serverId: string;
  subnetMask?: string;
  router?: string;
  dnsServers?: string[];
  hostname?: string;
  domainName?: string;
  /** Option 26, uint16. */
  mtu?: number;
  leaseSeconds?: number;
  renewalSeconds?: number;
  rebindingSeconds?: number;
  /** Option 56, for NAK. */
  message?: string;
}

const ETH_LEN = 14;
const IPV4_MIN = 20;
const UDP_LEN = 8;
const BOOTP_FIXED = 236;
/** RFC 1542 2.1: relay agents may drop anything shorter. */
const BOOTP_MIN = 300;
const MAGIC_COOKIE = 0x63825363;
const ETHERTYPE_IPV4 = 0x0800;
const IPPROTO_UDP = 17;
const PORT_SERVER = 67;
const PORT_CLIENT = 68;
const BOOTREQUEST = 1;
const BOOTREPLY = 2;

// BOOTP fixed-part offsets (RFC 2131 figure 1).
const B_OP = 0;
const B_HTYPE = 1;
const B_HLEN = 2;
const B_XID = 4;
const B_SECS = 8;
const B_FLAGS = 10;
const B_CIADDR = 12;
const B_YIADDR = 16;
const B_GIADDR = 24;
const B_CHADDR = 28;

interface Envelope {
  ethSrc: string;
  ethDst: string;
  ipSrc: string;
  ipDst: string;
}

type Bootp = BootpFields & { opts: DhcpOptions };

/** Frame -> addresses + the BOOTP message's bounds, checking every layer on the way down. */
function parseEnvelope(
  frame: Buffer,
  srcPort: number,
  dstPort: number,
): Envelope & { at: number; end: number } {
  if (frame.length < ETH_LEN + IPV4_MIN + UDP_LEN) {
    throw new DhcpParseError(`frame: ${frame.length} bytes is too short for Ethernet + IPv4 + UDP`);
  }
  // A VLAN tag shows up here as 0x8100; OVS strips access-port tags, so a tagged frame is not ours.
  const ethertype = frame.readUInt16BE(12);
  if (ethertype !== ETHERTYPE_IPV4) {
    throw new DhcpParseError(`ethertype 0x${ethertype.toString(16).padStart(4, '0')} is not IPv4`);
  }
  const ip = ETH_LEN;
  const version = frame[ip]! >> 4;
  if (version !== 4) throw new DhcpParseError(`IP version ${version} is not 4`);
  const ihl = frame[ip]! & 0x0f;
  if (ihl < 5) throw new DhcpParseError(`IPv4 header length ${ihl} words is invalid`);
  const totalLen = frame.readUInt16BE(ip + 2);
  if (totalLen < ihl * 4 + UDP_LEN) {
    throw new DhcpParseError(
      `IPv4 total length ${totalLen} is less than the ${ihl * 4}-byte header plus a UDP header`,
    );
  }
  // Bytes past totalLen are Ethernet padding and are ignored.
  if (ip + totalLen > frame.length) {
    throw new DhcpParseError(
      `IPv4 total length ${totalLen} exceeds the frame (${frame.length - ip} bytes after Ethernet)`,
    );
  }
  const frag = frame.readUInt16BE(ip + 6);
  if ((frag & 0x3fff) !== 0) {
    throw new DhcpParseError(
      `IPv4 fragment (MF ${(frag >> 13) & 1}, offset ${(frag & 0x1fff) * 8}) is not supported`,
    );
  }
  const proto = frame[ip + 9]!;
  if (proto !== IPPROTO_UDP) throw new DhcpParseError(`IP protocol ${proto} is not UDP`);
  const udp = ip + ihl * 4;
  const sport = frame.readUInt16BE(udp);
  const dport = frame.readUInt16BE(udp + 2);
  if (sport !== srcPort || dport !== dstPort) {
    const dir = srcPort === PORT_CLIENT ? 'client->server' : 'server->client';
    throw new DhcpParseError(`UDP ports ${sport}->${dport} are not DHCP ${dir} (${srcPort}->${dstPort})`);
  }
  // Checksums are not verified: with offload, OVS may hand over frames whose checksum is unset.
  const udpLen = frame.readUInt16BE(udp + 4);
  const room = ip + totalLen - udp;
  if (udpLen < UDP_LEN || udpLen > room) {
    throw new DhcpParseError(`UDP length ${udpLen} does not fit the ${room} bytes of IPv4 payload`);
  }
  return {
    ethDst: readMac(frame, 0),
    ethSrc: readMac(frame, 6),
    ipSrc: readIpv4(frame, ip + 12),
    ipDst: readIpv4(frame, ip + 16),
    at: udp + UDP_LEN,
    end: udp + udpLen,
  };
}

function parseBootp(frame: Buffer, at: number, end: number, op: number): Bootp {
  const len = end - at;
  if (len < BOOTP_FIXED) {
    throw new DhcpParseError(
      `BOOTP message: ${len} bytes is shorter than the ${BOOTP_FIXED}-byte fixed part`,
    );
  }
  const gotOp = frame[at + B_OP]!;
  if (gotOp !== op) {
    throw new DhcpParseError(`BOOTP op ${gotOp} is not a ${op === BOOTREQUEST ? 'request' : 'reply'}`);
  }
  const htype = frame[at + B_HTYPE]!;
  const hlen = frame[at + B_HLEN]!;
  if (htype !== 1 || hlen !== 6) throw new DhcpParseError(`htype ${htype}/hlen ${hlen} is not Ethernet`);
  const cookieAt = at + BOOTP_FIXED;
  if (len < BOOTP_FIXED + 4 || frame.readUInt32BE(cookieAt) !== MAGIC_COOKIE) {
    throw new DhcpParseError('magic cookie missing: plain BOOTP is not DHCP');
  }
  return {
    xid: frame.readUInt32BE(at + B_XID),
    secs: frame.readUInt16BE(at + B_SECS),
    flags: frame.readUInt16BE(at + B_FLAGS),
    ciaddr: readIpv4(frame, at + B_CIADDR),
    yiaddr: readIpv4(frame, at + B_YIADDR),
    giaddr: readIpv4(frame, at + B_GIADDR),
    chaddr: readMac(frame, at + B_CHADDR),
    // Option overload (52) is ignored: no client we serve puts options in sname/file.
    opts: readOptions(frame, cookieAt + 4, end),
  };
}

/** Parses a client's DHCP message. Throws DhcpParseError whose message names what is wrong. */
export function parseDhcpFrame(frame: Buffer): DhcpRequest {
  const { at, end, ...env } = parseEnvelope(frame, PORT_CLIENT, PORT_SERVER);
  const { opts, yiaddr: _, ...bootp } = parseBootp(frame, at, end, BOOTREQUEST);
  return { ...env, ...bootp, ...decodeRequestOptions(opts) };
}

/** The inverse of buildDhcpFrame, for tests and tools. Throws DhcpParseError. */
export function parseDhcpReplyFrame(frame: Buffer): DhcpReply {
  const { at, end, ...env } = parseEnvelope(frame, PORT_SERVER, PORT_CLIENT);
  const { opts, ...bootp } = parseBootp(frame, at, end, BOOTREPLY);
  return { ...env, ...bootp, ...decodeReplyOptions(opts) };
}

interface BootpFields {
  xid: number;
  secs: number;
  flags: number;
  ciaddr: string;
  yiaddr: string;
  giaddr: string;
  chaddr: string;
}

function putMac(buf: Buffer, off: number, mac: string, field: string): void {
  if (!writeMac(buf, off, mac)) throw new TypeError(`${field}: '${mac}' is not a MAC address`);
}

/** BOOTP fixed part (sname/file zero) + cookie + options, padded to the RFC 1542 minimum. */
function buildBootp(op: number, f: BootpFields, encoded: Buffer): Buffer {
  const bootp = Buffer.alloc(Math.max(BOOTP_MIN, BOOTP_FIXED + 4 + encoded.length));
  bootp[B_OP] = op;
  bootp[B_HTYPE] = 1;
  bootp[B_HLEN] = 6;
  bootp.writeUInt32BE(checkUint(f.xid, 32, 'xid'), B_XID);
  bootp.writeUInt16BE(checkUint(f.secs, 16, 'secs'), B_SECS);
  bootp.writeUInt16BE(checkUint(f.flags, 16, 'flags'), B_FLAGS);
  ipv4Bytes(f.ciaddr, 'ciaddr').copy(bootp, B_CIADDR);
  ipv4Bytes(f.yiaddr, 'yiaddr').copy(bootp, B_YIADDR);
  ipv4Bytes(f.giaddr, 'giaddr').copy(bootp, B_GIADDR);
  putMac(bootp, B_CHADDR, f.chaddr, 'chaddr');
  bootp.writeUInt32BE(MAGIC_COOKIE, BOOTP_FIXED);
  encoded.copy(bootp, BOOTP_FIXED + 4);
  return bootp;
}

/** Ethernet II + IPv4 (TTL 64, id 0, DF clear) + UDP around a BOOTP message, checksums filled in. */
function wrap(env: Envelope, srcPort: number, dstPort: number, bootp: Buffer): Buffer {
  const udpLen = UDP_LEN + bootp.length;
  const ipLen = IPV4_MIN + udpLen;
  const frame = Buffer.alloc(ETH_LEN + ipLen);
  putMac(frame, 0, env.ethDst, 'ethDst');
  putMac(frame, 6, env.ethSrc, 'ethSrc');
  frame.writeUInt16BE(ETHERTYPE_IPV4, 12);
  const ip = ETH_LEN;
  frame[ip] = 0x45;
  frame.writeUInt16BE(ipLen, ip + 2);
  frame[ip + 8] = 64;
  frame[ip + 9] = IPPROTO_UDP;
  ipv4Bytes(env.ipSrc, 'ipSrc').copy(frame, ip + 12);
  ipv4Bytes(env.ipDst, 'ipDst').copy(frame, ip + 16);
  frame.writeUInt16BE(foldChecksum(onesSum(frame, ip, ip + IPV4_MIN)), ip + 10);
  const udp = ip + IPV4_MIN;
  frame.writeUInt16BE(srcPort, udp);
  frame.writeUInt16BE(dstPort, udp + 2);
  frame.writeUInt16BE(udpLen, udp + 4);
  bootp.copy(frame, udp + UDP_LEN);
  // Pseudo-header: source and destination address, zero + protocol, UDP length.
  const pseudo = onesSum(frame, ip + 12, ip + 20, IPPROTO_UDP + udpLen);
  const sum = foldChecksum(onesSum(frame, udp, udp + udpLen, pseudo));
  // RFC 768: a computed zero goes out as all ones, since zero means "no checksum".
  frame.writeUInt16BE(sum === 0 ? 0xffff : sum, udp + 6);
  return frame;
}

/**
 * A server reply: options 53 first, then the rest in numeric order, then END; BOOTP part padded
 * to 300 bytes. Throws TypeError on malformed addresses or out-of-range numbers.
 */
export function buildDhcpFrame(reply: DhcpReply): Buffer {
  const fields = { ...reply, secs: reply.secs ?? 0, giaddr: reply.giaddr ?? '0.0.0.0' };
  const bootp = buildBootp(BOOTREPLY, fields, encodeReplyOptions(reply));
  return wrap(reply, PORT_SERVER, PORT_CLIENT, bootp);
}

/** A client message (UDP 68->67, op 1), for tests of code that consumes parseDhcpFrame. */
export function buildDhcpRequestFrame(
  req: Omit<DhcpRequest, 'paramList'> & { paramList?: number[] },
): Buffer {
  const bootp = buildBootp(BOOTREQUEST, { ...req, yiaddr: '0.0.0.0' }, encodeRequestOptions(req));
  return wrap(req, PORT_CLIENT, PORT_SERVER, bootp);
}
