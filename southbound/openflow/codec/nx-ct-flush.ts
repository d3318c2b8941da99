import type { ExperimenterMessage } from './messages.js';
import { NX_VENDOR_ID } from './nx-actions.js';
import { isIpv4, readIpv4, readIpv6, writeIpv4, writeIpv6 } from './values.js';

/**
 * Two Nicira extensions that make a switch's datapath forget connections. Pure: the messages
 * only; the session sends them (southbound/openflow/session/operations.ts).
 *
 * - NXT_CT_FLUSH_ZONE (OVS 2.6+): every connection of one zone. Body: 6 zero bytes, the zone.
 * - NXT_CT_FLUSH (OVS 3.1+): the connections that match a filter: an IP protocol (u8, 7 zero
 *   bytes), then properties (type u16, length u16, padded to 8): the original-direction tuple (0)
 *   and the reply-direction tuple (1), each a nested property (4 zero bytes, then its own
 *   properties: source 0 and destination 1 as 16-byte IPv6 with IPv4 mapped, source port 2,
 *   destination port 3, ICMP id 4, type 5, code 6), and the zone (2, u16). A tuple field left out
 *   matches anything, and so does a filter without a zone: every zone.
 */
export const NXT_CT_FLUSH_ZONE = 29;
export const NXT_CT_FLUSH = 32;

/** One direction of a connection, as a flush filter sees it: the fields given must all match. */
export interface CtTupleFilter {
  src?: string;
  dst?: string;
  srcPort?: number;
  dstPort?: number;
  icmpId?: number;
  icmpType?: number;
  icmpCode?: number;
}

/** Which connections an NXT_CT_FLUSH drops: those that match every field given. */
export interface CtFlushFilter {
  zone?: number;
  /** 6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6...; required with ports or ICMP fields. */
  ipProto?: number;
  orig?: CtTupleFilter;
  reply?: CtTupleFilter;
}

const PROP = { ORIG: 0, REPLY: 1, ZONE: 2 } as const;
const TUPLE = { SRC: 0, DST: 1, SRC_PORT: 2, DST_PORT: 3, ICMP_ID: 4, ICMP_TYPE: 5, ICMP_CODE: 6 } as const;
const isIcmp = (proto: number | undefined) => proto === 1 || proto === 58;

function checkZone(zone: number): void {
  if (!Number.isInteger(zone) || zone < 0 || zone > 0xffff) {
    throw new RangeError(`conntrack zone ${zone} is not an integer in 0..65535`);
  }
}

/** The CT_FLUSH_ZONE message for `zone` (0..65535). */
export function ctFlushZone(zone: number): ExperimenterMessage {
  checkZone(zone);
  const data = Buffer.alloc(8);
  data.writeUInt16BE(zone, 6);
  return { type: 'EXPERIMENTER', xid: 0, experimenter: NX_VENDOR_ID, expType: NXT_CT_FLUSH_ZONE, data };
}

/** The zone a CT_FLUSH_ZONE message flushes, or undefined when `m` is not a well-formed one. */
export function ctFlushZoneOf(m: ExperimenterMessage): number | undefined {
  if (m.experimenter !== NX_VENDOR_ID || m.expType !== NXT_CT_FLUSH_ZONE || m.data.length !== 8)
    return undefined;
  if (m.data.subarray(0, 6).some((b) => b !== 0)) return undefined;
  return m.data.readUInt16BE(6);
}

/** One property: type, length, value, zero padding to 8 bytes. */
function prop(type: number, value: Uint8Array): Buffer {
  const out = Buffer.alloc(Math.ceil((4 + value.length) / 8) * 8);
  out.writeUInt16BE(type, 0);
  out.writeUInt16BE(4 + value.length, 2);
  out.set(value, 4);
  return out;
}

/** A 16-bit value as OVS pads it (length 8, like every OpenFlow property of a u16). */
const u16Prop = (type: number, v: number) => prop(type, Uint8Array.of(v >> 8, v & 0xff, 0, 0));
const u8Prop = (type: number, v: number) => prop(type, Uint8Array.of(v, 0, 0, 0));

/** An address as OVS carries it (IPv4 mapped into IPv6), and whether it is IPv4 (mapped too). */
function address(what: string, ip: string): { bytes: Buffer; v4: boolean } {
  const bytes = Buffer.alloc(16);
  if (isIpv4(ip)) {
    bytes.writeUInt16BE(0xffff, 10);
    writeIpv4(bytes, 12, ip);
  } else if (!writeIpv6(bytes, 0, ip) || bytes.every((b) => b === 0)) {
    throw new RangeError(`conntrack flush: ${what} ${JSON.stringify(ip)} is not an IPv4 or IPv6 address`);
  }
  return { bytes, v4: isMapped(bytes) };
}

const isMapped = (v: Buffer) => v.subarray(0, 10).every((x) => x === 0) && v.readUInt16BE(10) === 0xffff;

function checkU(what: string, v: number | undefined, max: number, min = 0): void {
  if (v !== undefined && (!Number.isInteger(v) || v < min || v > max)) {
    throw new RangeError(`conntrack flush: ${what} ${v} is not an integer in ${min}..${max}`);
  }
}

function tupleProps(
  dir: 'orig' | 'reply',
  t: CtTupleFilter,
  proto: number | undefined,
  family: Set<boolean>,
) {
  const props: Buffer[] = [];
  for (const [key, type] of [
    ['src', TUPLE.SRC],
    ['dst', TUPLE.DST],
  ] as const) {
    const ip = t[key];
    if (ip === undefined) continue;
    const a = address(`${dir}.${key}`, ip);
    family.add(a.v4);
    props.push(prop(type, a.bytes));
  }
  const ports = t.srcPort !== undefined || t.dstPort !== undefined;
  const icmp = t.icmpId !== undefined || t.icmpType !== undefined || t.icmpCode !== undefined;
  if (ports && (!proto || isIcmp(proto))) {
    throw new RangeError(
      `conntrack flush: ${dir} ports need an ipProto with ports (TCP, UDP, SCTP), not ${proto}`,
    );
  }
  if (icmp && !isIcmp(proto)) {
    throw new RangeError(`conntrack flush: ${dir} ICMP fields need ipProto 1 or 58, not ${proto}`);
  }
  checkU(`${dir}.srcPort`, t.srcPort, 0xffff, 1);
  checkU(`${dir}.dstPort`, t.dstPort, 0xffff, 1);
  checkU(`${dir}.icmpId`, t.icmpId, 0xffff);
  checkU(`${dir}.icmpType`, t.icmpType, 0xff);
  checkU(`${dir}.icmpCode`, t.icmpCode, 0xff);
  if (isIcmp(proto)) {
    // Like ovs-ofctl, the three go together (zero for one not named); none when none is named.
    if (icmp) {
      props.push(u16Prop(TUPLE.ICMP_ID, t.icmpId ?? 0));
      props.push(u8Prop(TUPLE.ICMP_TYPE, t.icmpType ?? 0));
      props.push(u8Prop(TUPLE.ICMP_CODE, t.icmpCode ?? 0));
    }
  } else {
    if (t.srcPort !== undefined) props.push(u16Prop(TUPLE.SRC_PORT, t.srcPort));
    if (t.dstPort !== undefined) props.push(u16Prop(TUPLE.DST_PORT, t.dstPort));
  }
  return props;
}

/** A nested property: type, length, 4 zero bytes, the inner properties. */
function nested(type: number, inner: Buffer[]): Buffer {
  const body = Buffer.concat(inner);
  const out = Buffer.alloc(8 + body.length);
  out.writeUInt16BE(type, 0);
  out.writeUInt16BE(8 + body.length, 2);
  body.copy(out, 8);
  return out;
}

/**
 * The CT_FLUSH message for `filter`; throws a RangeError naming the field when the filter is not
 * one OVS would take (a port without a protocol, IPv4 and IPv6 mixed, a value out of range).
 */
export function ctFlush(filter: CtFlushFilter): ExperimenterMessage {
  const { zone, ipProto } = filter;
  if (zone !== undefined) checkZone(zone);
  checkU('ipProto', ipProto, 0xff);
  const family = new Set<boolean>();
  const parts: Buffer[] = [Buffer.from([ipProto ?? 0, 0, 0, 0, 0, 0, 0, 0])];
  for (const [dir, type] of [
    ['orig', PROP.ORIG],
    ['reply', PROP.REPLY],
  ] as const) {
    const t = filter[dir];
    if (!t) continue;
    const inner = tupleProps(dir, t, ipProto, family);
    if (inner.length > 0) parts.push(nested(type, inner));
  }
  if (family.size > 1) throw new RangeError('conntrack flush: IPv4 and IPv6 addresses in one filter');
  if ((ipProto === 1 && family.has(false)) || (ipProto === 58 && family.has(true))) {
    throw new RangeError(
      `conntrack flush: ipProto ${ipProto} with ${family.has(true) ? 'IPv4' : 'IPv6'} addresses`,
    );
  }
  if (zone !== undefined) parts.push(u16Prop(PROP.ZONE, zone));
  return {
    type: 'EXPERIMENTER',
    xid: 0,
    experimenter: NX_VENDOR_ID,
    expType: NXT_CT_FLUSH,
    data: Buffer.concat(parts),
  };
}

/** Splits `b` into [type, value] properties; undefined when a length runs past the end. */
function props(b: Buffer): Array<[number, Buffer]> | undefined {
  const out: Array<[number, Buffer]> = [];
  let off = 0;
  while (off < b.length) {
    if (off + 4 > b.length) return undefined;
    const len = b.readUInt16BE(off + 2);
    const padded = Math.ceil(len / 8) * 8;
    if (len < 4 || off + padded > b.length) return undefined;
    out.push([b.readUInt16BE(off), b.subarray(off + 4, off + len)]);
    off += padded;
  }
  return out;
}

function readAddress(v: Buffer): string | undefined {
  if (v.length !== 16 || v.every((b) => b === 0)) return undefined;
  return isMapped(v) ? readIpv4(v, 12) : readIpv6(v, 0);
}

/** A u16 or u8 property's value as OVS writes it: 4 bytes, the value first, then zeros. */
const padded = (v: Buffer, size: 1 | 2) => v.length === 4 && v.subarray(size).every((b) => b === 0);

function readTuple(v: Buffer): CtTupleFilter | undefined {
  if (v.length < 4 || v.readUInt32BE(0) !== 0) return undefined;
  const inner = props(v.subarray(4));
  if (!inner) return undefined;
  const t: CtTupleFilter = {};
  const fields = ['src', 'dst', 'srcPort', 'dstPort', 'icmpId', 'icmpType', 'icmpCode'] as const;
  for (const [type, value] of inner) {
    const key = fields[type];
    if (key === undefined) return undefined;
    if (key === 'src' || key === 'dst') {
      const ip = readAddress(value);
      if (ip === undefined) return undefined;
      t[key] = ip;
    } else if (key === 'icmpType' || key === 'icmpCode') {
      if (!padded(value, 1)) return undefined;
      t[key] = value[0]!;
    } else {
      if (!padded(value, 2)) return undefined;
      t[key] = value.readUInt16BE(0);
    }
  }
  return t;
}

/** The filter of a CT_FLUSH message, or undefined when `m` is not a well-formed one. */
export function ctFlushOf(m: ExperimenterMessage): CtFlushFilter | undefined {
  if (m.experimenter !== NX_VENDOR_ID || m.expType !== NXT_CT_FLUSH || m.data.length < 8) return undefined;
  if (m.data.subarray(1, 8).some((b) => b !== 0)) return undefined;
  const list = props(m.data.subarray(8));
  if (!list) return undefined;
  const filter: CtFlushFilter = m.data[0] ? { ipProto: m.data[0] } : {};
  for (const [type, value] of list) {
    if (type === PROP.ZONE) {
      if (!padded(value, 2)) return undefined;
      filter.zone = value.readUInt16BE(0);
    } else if (type === PROP.ORIG || type === PROP.REPLY) {
      const t = readTuple(value);
      if (!t) return undefined;
      filter[type === PROP.ORIG ? 'orig' : 'reply'] = t;
    } else return undefined;
  }
  return filter;
}
