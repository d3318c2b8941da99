import type { Match, OxmTlv } from '../codec/match.js';
import { fieldByName, type OxmField } from '../codec/oxm-fields.js';
import { formatHexDots } from '../codec/values.js';
import {
  allOnes,
  formatFieldValue,
  formatFlagField,
  formatIpv4Masked,
  formatIpv6Masked,
} from './field-text.js';
import { formatPort32, hexC } from './ports.js';

/**
 * A match as OVS's match_format() prints it: a fixed field order (not the wire order), OVS's
 * names (dl_dst, nw_src, tp_dst, ...), the ip/tcp/arp/... shorthands for eth_type + ip_proto, and
 * vlan_vid/vlan_pcp folded into dl_vlan / dl_vlan_pcp / vlan_tci.
 */
export const OFP_DEFAULT_PRIORITY = 0x8000;

const ETH_IP = 0x0800;
const ETH_IPV6 = 0x86dd;
const ETH_ARP = 0x0806;
const ETH_RARP = 0x8035;

const SHORT_ETH: Record<number, string> = {
  [ETH_ARP]: 'arp',
  [ETH_RARP]: 'rarp',
  34887: 'mpls',
  34888: 'mplsm',
};
const SHORT_IP: Record<number, string> = { 1: 'icmp', 6: 'tcp', 17: 'udp', 132: 'sctp' };
const SHORT_IP6: Record<number, string> = { 58: 'icmp6', 6: 'tcp6', 17: 'udp6', 132: 'sctp6' };

type Fields = Map<string, OxmTlv>;

/** "%u" when the mask is full, else "0x%x/0x%x" (OVS format_be16_masked and friends). */
function intMasked(f: OxmField, t: OxmTlv): string {
  if (allOnes(f, t.mask)) return String(t.value);
  return `0x${Number(t.value).toString(16)}/0x${Number(t.mask).toString(16)}`;
}

/** "%#x" plus "/%#x" unless the mask is full (format_uint32_masked / format_be64_masked). */
function hexMasked(f: OxmField, t: OxmTlv): string {
  const v = hexC(t.value as number | bigint);
  return allOnes(f, t.mask) ? v : `${v}/${hexC(t.mask as number | bigint)}`;
}

function put(out: string[], name: string, text: string): void {
  out.push(`${name}=${text}`);
}

function putField(
  out: string[],
  fields: Fields,
  field: string,
  name: string,
  style: 'int' | 'hex' | 'addr',
): void {
  const t = fields.get(field);
  if (!t) return;
  const f = fieldByName(field)!;
  if (style === 'int') put(out, name, intMasked(f, t));
  else if (style === 'hex') put(out, name, hexMasked(f, t));
  else if (f.kind === 'ipv4')
    put(out, name, formatIpv4Masked(String(t.value), t.mask === undefined ? undefined : String(t.mask)));
  else if (f.kind === 'ipv6')
    put(out, name, formatIpv6Masked(String(t.value), t.mask === undefined ? undefined : String(t.mask)));
  else put(out, name, allOnes(f, t.mask) ? String(t.value) : `${t.value}/${t.mask}`);
}

function u32Split(v: bigint, hi: boolean): number {
  return Number(hi ? (v >> 32n) & 0xffffffffn : v & 0xffffffffn);
}

function formatRegs(out: string[], fields: Fields): void {
  // OVS holds xregN as reg(2N):reg(2N+1) and prints registers one by one.
  const regs: ({ v: number; m: number } | undefined)[] = [];
  for (let i = 0; i < 16; i++) {
    const t = fields.get(`reg${i}`);
    if (t) regs[i] = { v: Number(t.value), m: t.mask === undefined ? 0xffffffff : Number(t.mask) };
  }
  for (let x = 0; x < 8; x++) {
    const t = fields.get(`xreg${x}`);
    if (!t) continue;
    const v = t.value as bigint;
    const m = t.mask === undefined ? (1n << 64n) - 1n : (t.mask as bigint);
    for (const hi of [true, false]) {
      const mm = u32Split(m, hi);
      if (mm !== 0) regs[2 * x + (hi ? 0 : 1)] = { v: u32Split(v, hi) & mm, m: mm };
    }
  }
  for (let i = 0; i < 16; i++) {
    const r = regs[i];
    if (!r || r.m === 0) continue;
    put(out, `reg${i}`, r.m === 0xffffffff ? hexC(r.v) : `${hexC(r.v)}/${hexC(r.m)}`);
  }
}

function formatVlan(out: string[], fields: Fields): void {
  const vid = fields.get('vlan_vid');
  const pcp = fields.get('vlan_pcp');
  if (!vid && !pcp) return;
  let tci = 0;
  let mask = 0;
  if (vid) {
    const m = vid.mask === undefined ? 0x1fff : Number(vid.mask) & 0x1fff;
    tci |= Number(vid.value) & m;
    mask |= m;
  }
  if (pcp) {
    tci |= ((Number(pcp.value) & 7) << 13) | 0x1000;
    mask |= 0xf000;
  }
  const vidMask = mask & 0x0fff;
  const pcpMask = mask & 0xe000;
  if (
    mask & 0x1000 &&
    tci & 0x1000 &&
    (vidMask === 0 || vidMask === 0x0fff) &&
    (pcpMask === 0 || pcpMask === 0xe000) &&
    (vidMask || pcpMask)
  ) {
    if (vidMask) put(out, 'dl_vlan', String(tci & 0xfff));
    if (pcpMask) put(out, 'dl_vlan_pcp', String(tci >> 13));
  } else if (mask === 0xffff) {
    put(out, 'vlan_tci', `0x${tci.toString(16).padStart(4, '0')}`);
  } else {
    put(out, 'vlan_tci', `0x${tci.toString(16).padStart(4, '0')}/0x${mask.toString(16).padStart(4, '0')}`);
  }
}

function formatFrag(out: string[], t: OxmTlv | undefined): void {
  if (!t) return;
  const v = Number(t.value);
  const m = (t.mask === undefined ? 0xff : Number(t.mask)) & 3;
  if (m === 3) put(out, 'nw_frag', v & 1 ? (v & 2 ? 'later' : 'first') : v & 2 ? '<error>' : 'no');
  else if (m === 1) put(out, 'nw_frag', v & 1 ? 'yes' : 'no');
  else if (m === 2) put(out, 'nw_frag', v & 2 ? 'later' : 'not_later');
}

/**
 * The match part of a flow line: "priority=N," (unless 32768) then the fields, comma-separated,
 * exactly in match_format()'s order. Empty string for the default priority and an empty match.
 */
export function formatMatch(m: Match, priority = OFP_DEFAULT_PRIORITY): string {
  const fields: Fields = new Map();
  const opaque: OxmTlv[] = [];
  for (const t of m) {
    if (t.field === 'opaque') {
      opaque.push(t);
      continue;
    }
    // Key by the field table's own name, so aliases (ipv4_src, nw_src) print as OVS does.
    const name = fieldByName(t.field)?.name ?? t.field;
    if (!fields.has(name)) fields.set(name, name === t.field ? t : { ...t, field: name });
  }
  const out: string[] = [];
  if (priority !== OFP_DEFAULT_PRIORITY) put(out, 'priority', String(priority));
  putField(out, fields, 'pkt_mark', 'pkt_mark', 'hex');
  const conj = fields.get('conj_id');
  if (conj) put(out, 'conj_id', String(conj.value));
  const ct = fields.get('ct_state');
  if (ct)
    put(
      out,
      'ct_state',
      formatFlagField('ct_state', Number(ct.value), ct.mask === undefined ? undefined : Number(ct.mask)),
    );
  putField(out, fields, 'ct_zone', 'ct_zone', 'int');
  putField(out, fields, 'ct_mark', 'ct_mark', 'hex');
  putField(out, fields, 'ct_label', 'ct_label', 'hex');

  const ethType = fields.get('eth_type');
  const dlType = ethType === undefined ? -1 : Number(ethType.value);
  const proto = fields.get('nw_proto');
  let skipType = false;
  let skipProto = false;
  if (ethType) {
    skipType = true;
    if (dlType === ETH_IP || dlType === ETH_IPV6) {
      const short = proto ? (dlType === ETH_IP ? SHORT_IP : SHORT_IP6)[Number(proto.value)] : undefined;
      if (short) {
        out.push(short);
        skipProto = true;
      } else {
        out.push(dlType === ETH_IP ? 'ip' : 'ipv6');
      }
    } else if (SHORT_ETH[dlType]) {
      out.push(SHORT_ETH[dlType]!);
    } else {
      skipType = false;
    }
  }
  formatRegs(out, fields);
  putField(out, fields, 'tun_id', 'tun_id', 'hex');
  putField(out, fields, 'tun_src', 'tun_src', 'addr');
  putField(out, fields, 'tun_dst', 'tun_dst', 'addr');
  putField(out, fields, 'metadata', 'metadata', 'hex');
  const inPort = fields.get('in_port');
  if (inPort) put(out, 'in_port', formatPort32(Number(inPort.value)));
  const inPhy = fields.get('in_phy_port');
  if (inPhy) put(out, 'in_phy_port', formatPort32(Number(inPhy.value)));
  formatVlan(out, fields);
  putField(out, fields, 'eth_src', 'dl_src', 'addr');
  putField(out, fields, 'eth_dst', 'dl_dst', 'addr');
  if (ethType && !skipType) put(out, 'dl_type', `0x${dlType.toString(16).padStart(4, '0')}`);

  const isArp = dlType === ETH_ARP || dlType === ETH_RARP;
  if (dlType === ETH_IPV6) {
    putField(out, fields, 'ipv6_src', 'ipv6_src', 'addr');
    putField(out, fields, 'ipv6_dst', 'ipv6_dst', 'addr');
    const label = fields.get('ipv6_label');
    if (label) {
      const v = `0x${Number(label.value).toString(16).padStart(5, '0')}`;
      const full = label.mask === undefined || Number(label.mask) === 0xffffffff;
      put(out, 'ipv6_label', full ? v : `${v}/0x${Number(label.mask).toString(16).padStart(5, '0')}`);
    }
  } else if (isArp) {
    putField(out, fields, 'arp_spa', 'arp_spa', 'addr');
    putField(out, fields, 'arp_tpa', 'arp_tpa', 'addr');
  } else {
    putField(out, fields, 'ip_src', 'nw_src', 'addr');
    putField(out, fields, 'ip_dst', 'nw_dst', 'addr');
  }
  if (proto && !skipProto) put(out, isArp ? 'arp_op' : 'nw_proto', String(proto.value));
  const arpOp = fields.get('arp_op');
  if (arpOp) put(out, 'arp_op', String(arpOp.value));
  if (isArp) {
    putField(out, fields, 'arp_sha', 'arp_sha', 'addr');
    putField(out, fields, 'arp_tha', 'arp_tha', 'addr');
  }
  const dscp = fields.get('ip_dscp');
  if (dscp) put(out, 'nw_tos', String((Number(dscp.value) << 2) & 0xfc));
  putField(out, fields, 'nw_ecn', 'nw_ecn', 'int');
  putField(out, fields, 'nw_ttl', 'nw_ttl', 'int');
  putField(out, fields, 'mpls_label', 'mpls_label', 'int');
  putField(out, fields, 'mpls_tc', 'mpls_tc', 'int');
  putField(out, fields, 'mpls_bos', 'mpls_bos', 'int');
  formatFrag(out, fields.get('nw_frag'));
  const l4 = proto === undefined ? -1 : Number(proto.value);
  if (dlType === ETH_IP && l4 === 1) {
    putField(out, fields, 'icmp_type', 'icmp_type', 'int');
    putField(out, fields, 'icmp_code', 'icmp_code', 'int');
  } else if (dlType === ETH_IPV6 && l4 === 58) {
    putField(out, fields, 'icmpv6_type', 'icmp_type', 'int');
    putField(out, fields, 'icmpv6_code', 'icmp_code', 'int');
    putField(out, fields, 'nd_target', 'nd_target', 'addr');
    putField(out, fields, 'nd_sll', 'nd_sll', 'addr');
    putField(out, fields, 'nd_tll', 'nd_tll', 'addr');
  } else {
    for (const p of ['tcp', 'udp', 'sctp']) {
      putField(out, fields, `${p}_src`, 'tp_src', 'int');
      putField(out, fields, `${p}_dst`, 'tp_dst', 'int');
    }
  }
  const tcpFlags = fields.get('tcp_flags');
  if (tcpFlags && l4 === 6 && (dlType === ETH_IP || dlType === ETH_IPV6)) {
    put(
      out,
      'tcp_flags',
      formatFlagField(
        'tcp_flags',
        Number(tcpFlags.value),
        tcpFlags.mask === undefined ? undefined : Number(tcpFlags.mask),
      ),
    );
  }
  // Fields OVS itself never shows (it does not support them) or that sit outside their
  // prerequisites: printed last by their own names so nothing in the match is lost.
  const shown = new Set(SHOWN);
  if (!(dlType === ETH_IP && l4 === 1)) for (const n of ['icmp_type', 'icmp_code']) shown.delete(n);
  if (!(l4 === 6 && (dlType === ETH_IP || dlType === ETH_IPV6))) shown.delete('tcp_flags');
  if (!(dlType === ETH_IPV6 && l4 === 58)) {
    for (const n of ['icmpv6_type', 'icmpv6_code', 'nd_target', 'nd_sll', 'nd_tll']) shown.delete(n);
  } else {
    for (const n of ['tcp_src', 'tcp_dst', 'udp_src', 'udp_dst', 'sctp_src', 'sctp_dst']) shown.delete(n);
  }
  if (dlType === ETH_IP && l4 === 1)
    for (const n of ['tcp_src', 'tcp_dst', 'udp_src', 'udp_dst', 'sctp_src', 'sctp_dst']) shown.delete(n);
  if (dlType !== ETH_IPV6) for (const n of ['ipv6_src', 'ipv6_dst', 'ipv6_label']) shown.delete(n);
  if (!isArp) for (const n of ['arp_spa', 'arp_tpa', 'arp_sha', 'arp_tha']) shown.delete(n);
  if (isArp || dlType === ETH_IPV6) for (const n of ['ip_src', 'ip_dst']) shown.delete(n);
  for (const [name, t] of fields) {
    if (shown.has(name)) continue;
    const f = fieldByName(name)!;
    put(out, name, formatFieldValue(f, t.value, t.mask));
  }
  for (const t of opaque) put(out, 'oxm', formatHexDots(t.value as Buffer));
  return out.join(',');
}

const SHOWN = [
  'pkt_mark',
  'conj_id',
  'ct_state',
  'ct_zone',
  'ct_mark',
  'ct_label',
  'eth_type',
  'nw_proto',
  'tun_id',
  'tun_src',
  'tun_dst',
  'metadata',
  'in_port',
  'in_phy_port',
  'vlan_vid',
  'vlan_pcp',
  'eth_src',
  'eth_dst',
  'ipv6_src',
  'ipv6_dst',
  'ipv6_label',
  'arp_spa',
  'arp_tpa',
  'ip_src',
  'ip_dst',
  'arp_op',
  'arp_sha',
  'arp_tha',
  'ip_dscp',
  'nw_ecn',
  'nw_ttl',
  'mpls_label',
  'mpls_tc',
  'mpls_bos',
  'nw_frag',
  'icmp_type',
  'icmp_code',
  'icmpv6_type',
  'icmpv6_code',
  'nd_target',
  'nd_sll',
  'nd_tll',
  'tcp_src',
  'tcp_dst',
  'udp_src',
  'udp_dst',
  'sctp_src',
  'sctp_dst',
  'tcp_flags',
  ...Array.from({ length: 16 }, (_, i) => `reg${i}`),
  ...Array.from({ length: 8 }, (_, i) => `xreg${i}`),
];
