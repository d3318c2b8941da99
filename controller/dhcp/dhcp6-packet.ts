import { IPV6_AT, IPV6_PAYLOAD_AT, ipv6Frame } from '../ipv6-frame.js';
/**
 * DHCPv6 frames as OVS hands them to the controller (packet-in) and takes them back (packet-out):
 * Ethernet II + IPv6 (no extension headers) + UDP + a DHCPv6 client/server message (RFC 8415 8).
 * Pure byte work, no I/O.
 *
 * The parser takes untrusted bytes from VMs: every length is checked before it is used, and
 * anything malformed surfaces as a Dhcp6ParseError naming what is wrong, never as a RangeError
 * from Buffer.
 */

import { readMac, writeIpv6 } from '../../southbound/openflow/codec/values.js';
import { ipv6UpperChecksum } from '../inet-checksum.js';
import { formatIpv6 } from '../intent/net.js';

export const DHCP6_PORT = { CLIENT: 546, SERVER: 547 } as const;
/** All_DHCP_Relay_Agents_and_Servers (RFC 8415 7.1): where a client on the link sends. */
export const ALL_DHCP_SERVERS = 'ff02::1:2';
export const DHCP6 = {
  SOLICIT: 1,
  ADVERTISE: 2,
  REQUEST: 3,
  CONFIRM: 4,
  RENEW: 5,
  REBIND: 6,
  REPLY: 7,
  RELEASE: 8,
  DECLINE: 9,
  INFORMATION_REQUEST: 11,
} as const;
export const DHCP6_STATUS = {
  SUCCESS: 0,
  UNSPEC_FAIL: 1,
  NO_ADDRS_AVAIL: 2,
  NO_BINDING: 3,
  NOT_ON_LINK: 4,
} as const;
/** The option codes weft reads or writes (RFC 8415 21, RFC 3646). */
export const DHCP6_OPTION = {
  CLIENTID: 1,
  SERVERID: 2,
  IA_NA: 3,
  IAADDR: 5,
  ORO: 6,
  ELAPSED_TIME: 8,
  STATUS_CODE: 13,
  RAPID_COMMIT: 14,
  DNS_SERVERS: 23,
  DOMAIN_LIST: 24,
} as const;

export class Dhcp6ParseError extends Error {
  override name = 'Dhcp6ParseError';
}

export interface Dhcp6Address {
  address: string;
  preferred: number;
  valid: number;
}

export interface Dhcp6IaNa {
  iaid: number;
  t1: number;
  t2: number;
  addresses: Dhcp6Address[];
  status?: { code: number; message: string };
}

/** Who a DHCPv6 message goes from and to, and what it is. */
interface Dhcp6Envelope {
  /** Canonical lower-case text: MAC colon form, IPv6 as controller/intent/net.ts writes it. */
  ethSrc: string;
  ethDst: string;
  ipSrc: string;
  ipDst: string;
  messageType: number;
  /** 24 bits. */
  transactionId: number;
}

/** A client's DHCPv6 message as it left the VM: Ethernet II + IPv6 + UDP to port 547. */
export interface Dhcp6Request extends Dhcp6Envelope {
  /** Raw DUIDs, copies. */
  clientId?: Buffer;
  serverId?: Buffer;
  /** The IA_NA options as sent: their addresses are the client's hints. */
  iaNa: Dhcp6IaNa[];
  /** Option 14 present. */
  rapidCommit: boolean;
  /** Option 6's codes, [] when absent. */
  requestedOptions: number[];
}

export interface Dhcp6Reply extends Dhcp6Envelope {
  /** Absent only in the answer to an Information-request that carried none (RFC 8415 18.2.6). */
  clientId?: Buffer;
  serverId: Buffer;
  iaNa?: Dhcp6IaNa[];
  /** Top-level status (option 13 outside any IA). */
  status?: { code: number; message: string };
  rapidCommit?: boolean;
  /** Option 24: DNS search list. */
  domainSearch?: string[];
  /** Option 23: IPv6 recursive name servers. */
  dnsServers?: string[];
}

const ETH_LEN = 14;
const ETHERTYPE_IPV6 = 0x86dd;
const IPV6_HEADER = 40;
const IPPROTO_UDP = 17;
const UDP_LEN = 8;
/** msg-type + transaction-id. */
const DHCP6_HEADER = 4;
const OPTION_HEADER = 4;
const IA_NA_FIXED = 12;
const IAADDR_FIXED = 24;
const STATUS_FIXED = 2;
/** Servers send with the link's maximum: the reply stays on the client's link anyway. */
const REPLY_HOP_LIMIT = 255;
/** RFC 1035 3.1: a label is at most 63 octets, a name at most 255 on the wire. */
const MAX_LABEL = 63;
const MAX_NAME = 255;
const RELAY_TYPES: Record<number, string> = { 12: 'RELAY-FORW', 13: 'RELAY-REPL' };
/** Every message type RFC 8415 7.3 defines between client and server (RECONFIGURE 10 included). */
const LAST_CLIENT_SERVER_TYPE = 11;

/**
 * Whether a frame is a DHCPv6 message to a server: untagged Ethernet II (classification has
 * removed any VLAN tag), IPv6 whose next header is UDP (no extension headers), UDP port 547.
 * Only the fields that say whose it is: parseDhcp6Frame then says what else is wrong.
 */
export function isDhcp6Frame(frame: Buffer): boolean {
  if (frame.length < ETH_LEN + IPV6_HEADER + UDP_LEN) return false;
  if (frame.readUInt16BE(12) !== ETHERTYPE_IPV6) return false;
  if (frame[ETH_LEN + 6] !== IPPROTO_UDP) return false;
  return frame.readUInt16BE(ETH_LEN + IPV6_HEADER + 2) === DHCP6_PORT.SERVER;
}

/** The 16 bytes at `at` as canonical IPv6 text. */
const ipv6Text = (buf: Buffer, at: number): string =>
  formatIpv6((buf.readBigUInt64BE(at) << 64n) | buf.readBigUInt64BE(at + 8));

interface RawOption {
  code: number;
  start: number;
  end: number;
}

/** The options in buf[start, end), in their order; throws when one runs past `where`'s end. */
function readOptions(buf: Buffer, start: number, end: number, where: string): RawOption[] {
  const out: RawOption[] = [];
  for (let o = start; o < end; ) {
    if (o + OPTION_HEADER > end)
      throw new Dhcp6ParseError(`option header cut short by the end of ${where} (${end - o} bytes left)`);
    const code = buf.readUInt16BE(o);
    const length = buf.readUInt16BE(o + 2);
    if (o + OPTION_HEADER + length > end)
      throw new Dhcp6ParseError(`option ${code} of ${length} bytes runs past the end of ${where}`);
    out.push({ code, start: o + OPTION_HEADER, end: o + OPTION_HEADER + length });
    o += OPTION_HEADER + length;
  }
  return out;
}

function parseStatus(buf: Buffer, o: RawOption, where: string): { code: number; message: string } {
  if (o.end - o.start < STATUS_FIXED)
    throw new Dhcp6ParseError(`STATUS_CODE of ${o.end - o.start} bytes in ${where} is shorter than 2`);
  return { code: buf.readUInt16BE(o.start), message: buf.toString('utf8', o.start + STATUS_FIXED, o.end) };
}

function parseIaNa(buf: Buffer, ia: RawOption): Dhcp6IaNa {
  const length = ia.end - ia.start;
  if (length < IA_NA_FIXED) throw new Dhcp6ParseError(`IA_NA of ${length} bytes is shorter than 12`);
  const out: Dhcp6IaNa = {
    iaid: buf.readUInt32BE(ia.start),
    t1: buf.readUInt32BE(ia.start + 4),
    t2: buf.readUInt32BE(ia.start + 8),
    addresses: [],
  };
  for (const o of readOptions(buf, ia.start + IA_NA_FIXED, ia.end, 'an IA_NA')) {
    if (o.code === DHCP6_OPTION.STATUS_CODE) out.status = parseStatus(buf, o, 'an IA_NA');
    if (o.code !== DHCP6_OPTION.IAADDR) continue;
    if (o.end - o.start < IAADDR_FIXED)
      throw new Dhcp6ParseError(`IAADDR of ${o.end - o.start} bytes is shorter than 24`);
    // The IAADDR's own options (a status from a client) carry nothing weft uses; only their bounds.
    readOptions(buf, o.start + IAADDR_FIXED, o.end, 'an IAADDR');
    out.addresses.push({
      address: ipv6Text(buf, o.start),
      preferred: buf.readUInt32BE(o.start + 16),
      valid: buf.readUInt32BE(o.start + 20),
    });
  }
  return out;
}

/** Parses a client's DHCPv6 message. Throws Dhcp6ParseError whose message names what is wrong. */
export function parseDhcp6Frame(frame: Buffer): Dhcp6Request {
  if (frame.length < ETH_LEN + IPV6_HEADER + UDP_LEN + DHCP6_HEADER)
    throw new Dhcp6ParseError(
      `frame of ${frame.length} bytes is too short for Ethernet + IPv6 + UDP + DHCPv6`,
    );
  const ethertype = frame.readUInt16BE(12);
  if (ethertype !== ETHERTYPE_IPV6)
    throw new Dhcp6ParseError(`ethertype 0x${ethertype.toString(16).padStart(4, '0')} is not IPv6`);
  const ip = ETH_LEN;
  const version = frame[ip]! >> 4;
  if (version !== 6) throw new Dhcp6ParseError(`IP version ${version} is not 6`);
  const payloadLength = frame.readUInt16BE(ip + 4);
  const udp = ip + IPV6_HEADER;
  // Bytes past the payload are Ethernet padding and are ignored; a payload past the frame is not.
  if (udp + payloadLength > frame.length)
    throw new Dhcp6ParseError(
      `IPv6 payload length ${payloadLength} runs past the frame (${frame.length - udp} bytes)`,
    );
  const nextHeader = frame[ip + 6]!;
  if (nextHeader !== IPPROTO_UDP)
    throw new Dhcp6ParseError(`next header ${nextHeader} is not UDP (extension headers are not followed)`);
  const dport = frame.readUInt16BE(udp + 2);
  // The source port is not checked: servers answer to 546 whatever the client sent from (RFC 8415 7.2).
  if (dport !== DHCP6_PORT.SERVER) throw new Dhcp6ParseError(`UDP destination port ${dport} is not 547`);
  const udpLength = frame.readUInt16BE(udp + 4);
  // With no extension header, the UDP datagram is the whole IPv6 payload.
  if (udpLength !== payloadLength)
    throw new Dhcp6ParseError(`UDP length ${udpLength} does not match IPv6 payload length ${payloadLength}`);
  if (udpLength < UDP_LEN + DHCP6_HEADER)
    throw new Dhcp6ParseError(`UDP length ${udpLength} leaves no room for the 4-byte DHCPv6 header`);
  const end = udp + udpLength;
  // The checksum is not verified, as DHCPv4's is not: with checksum offload a VM's frame may reach
  // OVS (and so the controller) before its checksum is filled in. The answer is the endpoint's own
  // lease whatever the frame says, and its port and MAC were proven already.
  const at = udp + UDP_LEN;
  const messageType = frame[at]!;
  const relay = RELAY_TYPES[messageType];
  if (relay)
    throw new Dhcp6ParseError(
      `message type ${messageType} (${relay}) is a relay message: weft serves its links directly`,
    );
  if (messageType === 0 || messageType > LAST_CLIENT_SERVER_TYPE)
    throw new Dhcp6ParseError(`message type ${messageType} is not a known DHCPv6 client/server message`);
  const req: Dhcp6Request = {
    ethDst: readMac(frame, 0),
    ethSrc: readMac(frame, 6),
    ipSrc: ipv6Text(frame, ip + 8),
    ipDst: ipv6Text(frame, ip + 24),
    messageType,
    transactionId: frame.readUIntBE(at + 1, 3),
    iaNa: [],
    rapidCommit: false,
    requestedOptions: [],
  };
  for (const o of readOptions(frame, at + DHCP6_HEADER, end, 'the message')) {
    switch (o.code) {
      case DHCP6_OPTION.CLIENTID:
      case DHCP6_OPTION.SERVERID: {
        // Which DUID the answer goes to or comes from must not be ambiguous (RFC 8415 21.2, 21.3).
        const key = o.code === DHCP6_OPTION.CLIENTID ? 'clientId' : 'serverId';
        if (req[key]) throw new Dhcp6ParseError(`option ${o.code} (${key}) appears twice`);
        req[key] = Buffer.from(frame.subarray(o.start, o.end));
        break;
      }
      case DHCP6_OPTION.IA_NA:
        req.iaNa.push(parseIaNa(frame, o));
        break;
      case DHCP6_OPTION.RAPID_COMMIT:
        req.rapidCommit = true;
        break;
      case DHCP6_OPTION.ORO:
        if ((o.end - o.start) % 2 !== 0)
          throw new Dhcp6ParseError(`ORO of ${o.end - o.start} bytes is not a list of 2-byte codes`);
        for (let i = o.start; i < o.end; i += 2) req.requestedOptions.push(frame.readUInt16BE(i));
        break;
      default:
      // Elapsed time, vendor class, IA_TA, IA_PD, ...: nothing weft answers from.
    }
  }
  return req;
}

/** `value` when it is an unsigned integer of `bits` bits; else a TypeError naming `field`. */
function uint(value: number, bits: number, field: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 2 ** bits - 1)
    throw new TypeError(`${field}: ${value} is not a uint${bits}`);
  return value;
}

function option(code: number, ...data: Buffer[]): Buffer {
  const body = Buffer.concat(data);
  if (body.length > 0xffff) throw new RangeError(`option ${code}: ${body.length} bytes exceed 65535`);
  const head = Buffer.alloc(OPTION_HEADER);
  head.writeUInt16BE(code, 0);
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([head, body]);
}

function ipv6Bytes(text: string, field: string): Buffer {
  const b = Buffer.alloc(16);
  if (!writeIpv6(b, 0, text)) throw new TypeError(`${field}: '${text}' is not an IPv6 address`);
  return b;
}

function uint32s(...values: [number, string][]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  for (const [i, [v, field]] of values.entries()) b.writeUInt32BE(uint(v, 32, field), i * 4);
  return b;
}

function statusOption(s: { code: number; message: string }): Buffer {
  const code = Buffer.alloc(STATUS_FIXED);
  code.writeUInt16BE(uint(s.code, 16, 'status code'), 0);
  return option(DHCP6_OPTION.STATUS_CODE, code, Buffer.from(s.message, 'utf8'));
}

function iaNaOption(ia: Dhcp6IaNa): Buffer {
  const addresses = ia.addresses.map((a) =>
    option(
      DHCP6_OPTION.IAADDR,
      ipv6Bytes(a.address, 'IAADDR address'),
      uint32s([a.preferred, 'preferred lifetime'], [a.valid, 'valid lifetime']),
    ),
  );
  return option(
    DHCP6_OPTION.IA_NA,
    uint32s([ia.iaid, 'IAID'], [ia.t1, 'T1'], [ia.t2, 'T2']),
    ...addresses,
    ...(ia.status ? [statusOption(ia.status)] : []),
  );
}

/** A domain name in RFC 1035 3.1 wire form, uncompressed (RFC 8415 10 forbids compression). */
function wireName(name: string): Buffer {
  const text = name.endsWith('.') ? name.slice(0, -1) : name;
  const parts = text === '' ? [] : text.split('.');
  const bytes: number[] = [];
  for (const label of parts) {
    if (label.length === 0 || label.length > MAX_LABEL || !/^[\x21-\x7e]+$/.test(label))
      throw new TypeError(`domain '${name}': label '${label}' is not 1-63 printable ASCII characters`);
    bytes.push(label.length, ...Buffer.from(label, 'ascii'));
  }
  bytes.push(0);
  if (bytes.length > MAX_NAME) throw new TypeError(`domain '${name}' is longer than 255 bytes on the wire`);
  return Buffer.from(bytes);
}

/** The DHCPv6 message: header, then the options in numeric order (RFC 8415 allows any order). */
function encodeMessage(r: Dhcp6Reply): Buffer {
  const head = Buffer.alloc(DHCP6_HEADER);
  head[0] = uint(r.messageType, 8, 'messageType');
  head.writeUIntBE(uint(r.transactionId, 24, 'transactionId'), 1, 3);
  const parts = [
    head,
    ...(r.clientId ? [option(DHCP6_OPTION.CLIENTID, r.clientId)] : []),
    option(DHCP6_OPTION.SERVERID, r.serverId),
    ...(r.iaNa ?? []).map(iaNaOption),
  ];
  if (r.status) parts.push(statusOption(r.status));
  if (r.rapidCommit) parts.push(option(DHCP6_OPTION.RAPID_COMMIT));
  if (r.dnsServers?.length)
    parts.push(option(DHCP6_OPTION.DNS_SERVERS, ...r.dnsServers.map((s) => ipv6Bytes(s, 'dnsServers'))));
  if (r.domainSearch?.length) parts.push(option(DHCP6_OPTION.DOMAIN_LIST, ...r.domainSearch.map(wireName)));
  return Buffer.concat(parts);
}

/**
 * A server message: Ethernet II + IPv6 (traffic class and flow label 0, hop limit 255) + UDP
 * 547 -> 546 with its checksum + the DHCPv6 message. Throws TypeError on malformed addresses,
 * names or out-of-range numbers, RangeError when an option or the datagram outgrows its length field.
 */
export function buildDhcp6Frame(reply: Dhcp6Reply): Buffer {
  const message = encodeMessage(reply);
  const udpLength = UDP_LEN + message.length;
  if (udpLength > 0xffff) throw new RangeError(`UDP datagram of ${udpLength} bytes exceeds 65535`);
  const frame = ipv6Frame({
    ethDst: reply.ethDst,
    ethSrc: reply.ethSrc,
    ipSrc: reply.ipSrc,
    ipDst: reply.ipDst,
    nextHeader: IPPROTO_UDP,
    hopLimit: REPLY_HOP_LIMIT,
    payloadLength: udpLength,
  });
  const ip = IPV6_AT;
  const udp = IPV6_PAYLOAD_AT;
  frame.writeUInt16BE(DHCP6_PORT.SERVER, udp);
  frame.writeUInt16BE(DHCP6_PORT.CLIENT, udp + 2);
  frame.writeUInt16BE(udpLength, udp + 4);
  message.copy(frame, udp + UDP_LEN);
  const sum = ipv6UpperChecksum(frame, ip + 8, ip + 24, udp, frame.length, IPPROTO_UDP);
  // RFC 8200 8.1: a computed zero goes out as all ones, zero being no checksum at all.
  frame.writeUInt16BE(sum === 0 ? 0xffff : sum, udp + 6);
  return frame;
}
