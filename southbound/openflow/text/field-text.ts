import type { OxmValue } from '../codec/oxm.js';
import type { OxmField } from '../codec/oxm-fields.js';
import { canonicalIpv6, isMac, parseIpv4, readIpv6, writeIpv6 } from '../codec/values.js';
import { formatPort16, formatPort32, hexC, parseBig, parsePort16, parsePort32, parseUint } from './ports.js';

/**
 * One field's value as OVS's meta-flow prints it (mf_format) and parses it (mf_parse): the form
 * used by `set_field:VALUE->FIELD` and by `FIELD=VALUE` in a match.
 */

/** Fields OVS prints in decimal; the rest of the integer fields print in hex. */
const DECIMAL = new Set([
  'vlan_vid',
  'vlan_pcp',
  'ip_dscp',
  'nw_ecn',
  'nw_proto',
  'nw_ttl',
  'tcp_src',
  'tcp_dst',
  'udp_src',
  'udp_dst',
  'sctp_src',
  'sctp_dst',
  'icmp_type',
  'icmp_code',
  'icmpv6_type',
  'icmpv6_code',
  'nd_reserved',
  'nd_options_type',
  'arp_op',
  'mpls_label',
  'mpls_tc',
  'mpls_bos',
  'conj_id',
  'ct_zone',
]);
const PORT_FIELDS = new Set(['in_port', 'in_phy_port']);

export const CT_STATE_BITS: [number, string][] = [
  [0x01, 'new'],
  [0x02, 'est'],
  [0x04, 'rel'],
  [0x08, 'rpl'],
  [0x10, 'inv'],
  [0x20, 'trk'],
  [0x40, 'snat'],
  [0x80, 'dnat'],
];

export function allOnes(f: OxmField, mask: OxmValue | undefined): boolean {
  if (mask === undefined) return true;
  switch (f.kind) {
    case 'uint':
      return mask === 2 ** (f.width * 8) - 1;
    case 'u64':
      return mask === (1n << 64n) - 1n;
    case 'u128':
      return mask === (1n << 128n) - 1n;
    case 'mac':
      return mask === 'ff:ff:ff:ff:ff:ff';
    case 'ipv4':
      return mask === '255.255.255.255';
    case 'ipv6':
      return mask === 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff';
  }
}

function prefixLen32(m: number): number {
  // -1 unless m is a CIDR mask.
  const inv = ~m >>> 0;
  if ((inv & (inv + 1)) !== 0) return -1;
  return 32 - (inv === 0 ? 0 : Math.log2(inv + 1));
}

export function formatIpv4Masked(v: string, mask: string | undefined): string {
  if (mask === undefined || mask === '255.255.255.255') return v;
  const n = prefixLen32(parseIpv4(mask));
  return n >= 0 ? `${v}/${n}` : `${v}/${mask}`;
}

export function formatIpv6Masked(v: string, mask: string | undefined): string {
  if (mask === undefined || mask === 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff') return v;
  const b = Buffer.alloc(16);
  writeIpv6(b, 0, mask);
  let n = 0;
  while (n < 128 && (b[n >> 3]! & (0x80 >> (n & 7))) !== 0) n++;
  let cidr = true;
  for (let i = n; i < 128; i++) if ((b[i >> 3]! & (0x80 >> (i & 7))) !== 0) cidr = false;
  return cidr ? `${v}/${n}` : `${v}/${mask}`;
}

const TCP_FLAG_BITS: [number, string][] = [
  [0x001, 'fin'],
  [0x002, 'syn'],
  [0x004, 'rst'],
  [0x008, 'psh'],
  [0x010, 'ack'],
  [0x020, 'urg'],
  [0x040, 'ece'],
  [0x080, 'cwr'],
  [0x100, 'ns'],
];

/** Flag fields: their bit names and the mask OVS treats as "exact" (format_flags_masked). */
const FLAG_FIELDS: Record<string, { bits: [number, string][]; max: number }> = {
  // OVS matches ct_state on its supported bits: an "exact" ct_state goes out with mask 0xff.
  ct_state: { bits: CT_STATE_BITS, max: 0xff },
  tcp_flags: { bits: TCP_FLAG_BITS, max: 0x0fff },
};

export function isFlagField(name: string): boolean {
  return FLAG_FIELDS[name] !== undefined;
}

/** format_flags_masked: "est|trk" when exact (mask undefined or full), else "+est-new" per masked bit. */
export function formatFlagField(name: string, v: number, mask: number | undefined): string {
  const spec = FLAG_FIELDS[name]!;
  const m = mask === undefined ? spec.max : mask & spec.max;
  if (m === spec.max) {
    const parts: string[] = [];
    for (const [bit, n] of spec.bits) if (v & bit) parts.push(n);
    const rest = v & spec.max & ~spec.bits.reduce((a, [b]) => a | b, 0);
    if (rest) parts.push(`0x${rest.toString(16)}`);
    return parts.length ? parts.join('|') : '0';
  }
  if (m === 0) return '0/0';
  let out = '';
  for (const [bit, n] of spec.bits) if (m & bit) out += `${v & bit ? '+' : '-'}${n}`;
  return out;
}

/** Kept for callers that print ct_state with an explicit mask. */
export function formatCtState(v: number, mask: number | undefined): string {
  return formatFlagField('ct_state', v, mask);
}

/** The name OVS prints for a field (its 16-bit NXM in_port is plain "in_port" too). */
export function textName(name: string): string {
  return name === 'in_port_nxm' ? 'in_port' : name;
}

/** mf_format: VALUE or VALUE/MASK as `set_field:` prints it. */
export function formatFieldValue(f: OxmField, v: OxmValue, mask?: OxmValue): string {
  const masked = !allOnes(f, mask);
  switch (f.kind) {
    case 'mac':
      return masked ? `${v}/${mask}` : String(v);
    case 'ipv4':
      return formatIpv4Masked(String(v), masked ? String(mask) : undefined);
    case 'ipv6':
      return formatIpv6Masked(String(v), masked ? String(mask) : undefined);
    default: {
      if (f.name === 'ct_state' && typeof v === 'number')
        return formatCtState(v, masked ? Number(mask) : 0xff);
      let s: string;
      if (f.name === 'in_port_nxm') s = formatPort16(Number(v));
      else if (PORT_FIELDS.has(f.name)) s = formatPort32(Number(v));
      else if (DECIMAL.has(f.name)) s = String(v);
      else s = hexC(v as number | bigint);
      return masked ? `${s}/${hexC(mask as number | bigint)}` : s;
    }
  }
}

/** mf_parse: VALUE[/MASK] for field f; returns an error string if malformed. */
export function parseFieldValue(f: OxmField, text: string): { value: OxmValue; mask?: OxmValue } | string {
  const flags = FLAG_FIELDS[f.name];
  if (flags && (text.startsWith('+') || text.startsWith('-')))
    return parseFlagsMasked(f.name, flags.bits, text);
  if (flags && /^[a-z]/.test(text)) {
    const exact = parseFlagsExact(f.name, flags.bits, text);
    return typeof exact === 'string' || f.name !== 'ct_state' ? exact : { value: exact.value, mask: 0xff };
  }
  if (f.name === 'ct_state' && !text.includes('/')) {
    const n = parseUint(text);
    if (n === undefined || n > 0xffffffff) return `'${text}' is not a valid ct_state`;
    return { value: n, mask: 0xff };
  }
  const slash = text.indexOf('/');
  const vText = slash < 0 ? text : text.slice(0, slash);
  const mText = slash < 0 ? undefined : text.slice(slash + 1);
  if (mText !== undefined && !f.maskable) return `${f.name} cannot be masked`;
  switch (f.kind) {
    case 'mac': {
      if (!isMac(vText) || (mText !== undefined && !isMac(mText))) return `'${text}' is not a MAC address`;
      const value = vText.toLowerCase();
      return mText === undefined ? { value } : { value, mask: mText.toLowerCase() };
    }
    case 'ipv4': {
      if (parseIpv4(vText) < 0) return `'${vText}' is not an IPv4 address`;
      if (mText === undefined) return { value: vText };
      const bits = /^\d+$/.test(mText) ? Number(mText) : -1;
      const mask =
        bits >= 0 && bits <= 32 ? (bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0) : parseIpv4(mText);
      if (mask < 0) return `'${mText}' is not an IPv4 mask`;
      const value = (parseIpv4(vText) & mask) >>> 0;
      return { value: ipv4Text(value), mask: ipv4Text(mask) };
    }
    case 'ipv6': {
      const value = canonicalIpv6(vText);
      if (value === undefined) return `'${vText}' is not an IPv6 address`;
      if (mText === undefined) return { value };
      const m = Buffer.alloc(16);
      const bits = /^\d+$/.test(mText) ? Number(mText) : -1;
      if (bits >= 0 && bits <= 128) {
        for (let i = 0; i < bits; i++) m[i >> 3]! |= 0x80 >> (i & 7);
      } else if (!writeIpv6(m, 0, mText)) {
        return `'${mText}' is not an IPv6 mask`;
      }
      const vb = Buffer.alloc(16);
      writeIpv6(vb, 0, value);
      for (let i = 0; i < 16; i++) vb[i]! &= m[i]!;
      return { value: readIpv6(vb, 0), mask: readIpv6(m, 0) };
    }
    case 'u64':
    case 'u128': {
      const value = parseBig(vText);
      const mask = mText === undefined ? undefined : parseBig(mText);
      const max = f.kind === 'u64' ? (1n << 64n) - 1n : (1n << 128n) - 1n;
      if (value === undefined || value > max)
        return `'${vText}' is not a ${f.width * 8}-bit value for ${f.name}`;
      if (mText !== undefined && (mask === undefined || mask > max))
        return `'${mText}' is not a mask for ${f.name}`;
      return mask === undefined ? { value } : { value, mask };
    }
    case 'uint': {
      const value =
        f.name === 'in_port_nxm'
          ? parsePort16(vText)
          : PORT_FIELDS.has(f.name)
            ? parsePort32(vText)
            : parseUint(vText);
      const max = 2 ** (f.width * 8) - 1;
      if (value === undefined || value > max) return `'${vText}' is not a valid ${f.name} (0..${max})`;
      if (mText === undefined) return { value };
      const mask = parseUint(mText);
      if (mask === undefined || mask > max) return `'${mText}' is not a mask for ${f.name}`;
      return { value, mask };
    }
  }
}

function ipv4Text(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
}

/** "+trk-new" style: value and mask of the named bits. */
function parseFlagsMasked(
  field: string,
  bits: [number, string][],
  text: string,
): { value: number; mask: number } | string {
  let value = 0;
  let mask = 0;
  let i = 0;
  while (i < text.length) {
    const sign = text[i];
    if (sign !== '+' && sign !== '-') return `${field} '${text}': expected + or - at '${text.slice(i)}'`;
    let j = i + 1;
    while (j < text.length && text[j] !== '+' && text[j] !== '-') j++;
    const name = text.slice(i + 1, j);
    const bit = bits.find(([, n]) => n === name)?.[0];
    if (bit === undefined) return `${field}: unknown flag '${name}'`;
    mask |= bit;
    if (sign === '+') value |= bit;
    i = j;
  }
  return { value, mask };
}

/** "est|trk" style (as OVS prints an exact match): the value, no mask. */
function parseFlagsExact(field: string, bits: [number, string][], text: string): { value: number } | string {
  let value = 0;
  for (const name of text.split('|')) {
    const bit = bits.find(([, n]) => n === name)?.[0];
    if (bit === undefined) return `${field}: unknown flag '${name}'`;
    value |= bit;
  }
  return { value };
}
