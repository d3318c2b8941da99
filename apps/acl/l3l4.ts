import { type Cidr, parseCidr, parseIp } from '../../controller/intent/net.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { formatIpv4, readIpv6 } from '../../southbound/openflow/codec/values.js';
import { portRangeMasks } from './port-range.js';

export type Family = 4 | 6;
export type Protocol = 'tcp' | 'udp' | 'icmp' | 'any';

/** The L3/L4 part of one ACL or security-group rule, before it becomes OpenFlow matches. */
export interface L3L4Spec {
  family: Family;
  protocol: Protocol;
  /** CIDR or plain address of the source / destination (absent: any). */
  src?: string;
  dst?: string;
  /** Destination port range (tcp/udp only). */
  portMin?: number;
  portMax?: number;
  /** ICMP type and code (icmp only; ICMPv6's in family 6). */
  icmpType?: number;
  icmpCode?: number;
}

export const ETH_TYPE: Record<Family, number> = { 4: 0x0800, 6: 0x86dd };
const IP_PROTO = { tcp: 6, udp: 17 } as const;
const ICMP_PROTO: Record<Family, number> = { 4: 1, 6: 58 };

/** The address family of a CIDR or address, or undefined when it is neither. */
export function familyOf(text: string): Family | undefined {
  const c = parseCidr(text.includes('/') ? text : `${text}/${text.includes(':') ? 128 : 32}`);
  return typeof c === 'string' ? undefined : c.family;
}

function v6Text(value: bigint): string {
  const buf = Buffer.alloc(16);
  buf.writeBigUInt64BE(value >> 64n, 0);
  buf.writeBigUInt64BE(value & 0xffffffffffffffffn, 8);
  return readIpv6(buf, 0);
}

const v4Text = (value: bigint): string => formatIpv4(Number(value));

/** `ipv4_src`/`ipv4_dst` (or IPv6) matching a CIDR or an address, masked below full length; undefined for /0. */
export function addressTlv(field: 'src' | 'dst', text: string, family: Family): OxmTlv | undefined {
  let cidr: Cidr | string;
  if (text.includes('/')) cidr = parseCidr(text);
  else {
    const a = parseIp(text);
    cidr = a
      ? { family: a.family, network: a.value, prefix: a.family === 4 ? 32 : 128, text }
      : `bad ${text}`;
  }
  if (typeof cidr === 'string') throw new RangeError(`not an address or CIDR: ${text}`);
  if (cidr.family !== family) throw new RangeError(`${text} is not IPv${family}`);
  const bits = family === 4 ? 32 : 128;
  if (cidr.prefix === 0) return undefined;
  const name = `${family === 4 ? 'ipv4' : 'ipv6'}_${field}`;
  const fmt = family === 4 ? v4Text : v6Text;
  const t: OxmTlv = { field: name, value: fmt(cidr.network) };
  if (cidr.prefix < bits) {
    const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - cidr.prefix)) - 1n);
    t.mask = fmt(mask);
  }
  return t;
}

/**
 * One OpenFlow match per aligned block of the port range (usually one), each with the prerequisites
 * OVS requires (eth_type, ip_proto) in front.
 */
export function l3l4Matches(spec: L3L4Spec): OxmTlv[][] {
  const base: OxmTlv[] = [{ field: 'eth_type', value: ETH_TYPE[spec.family] }];
  if (spec.protocol === 'icmp') {
    base.push({ field: 'ip_proto', value: ICMP_PROTO[spec.family] });
    const v = spec.family === 4 ? 'icmpv4' : 'icmpv6';
    if (spec.icmpType !== undefined) {
      base.push({ field: `${v}_type`, value: spec.icmpType });
      if (spec.icmpCode !== undefined) base.push({ field: `${v}_code`, value: spec.icmpCode });
    }
  }
  if (spec.protocol === 'tcp' || spec.protocol === 'udp')
    base.push({ field: 'ip_proto', value: IP_PROTO[spec.protocol] });
  for (const [which, text] of [
    ['src', spec.src],
    ['dst', spec.dst],
  ] as const) {
    if (text === undefined) continue;
    const t = addressTlv(which, text, spec.family);
    if (t) base.push(t);
  }
  if (
    (spec.protocol !== 'tcp' && spec.protocol !== 'udp') ||
    (spec.portMin === undefined && spec.portMax === undefined)
  ) {
    return [base];
  }
  const blocks = portRangeMasks(spec.portMin ?? 0, spec.portMax ?? spec.portMin ?? 0xffff);
  if (blocks.length === 0) return [base];
  const field = `${spec.protocol}_dst`;
  return blocks.map((b) => [
    ...base,
    b.mask === 0xffff ? { field, value: b.value } : { field, value: b.value, mask: b.mask },
  ]);
}
