/**
 * THE field table: every OXM/NXM field the codec models, defined once. Names are Open vSwitch's
 * meta-flow names (what `set_field:...->NAME` prints). Numbers come from the OpenFlow 1.3.5 spec
 * (OFPXMC_OPENFLOW_BASIC 0x8000, fields 0-39) and OVS's nicira-ext.h / meta-flow.h (NXM_OF 0x0000,
 * NXM_NX 0x0001, OXM_OF_PKT_REG 0x8001).
 *
 * `maskable` follows what OVS accepts and sends (a superset of the 1.3 spec: OVS also masks
 * L4 ports and ND fields), because OVS is the peer whose flow dumps we must decode.
 *
 * `nxmName`/`nxmHeader`: OVS refers to fields inside NXAST_REG_MOVE / REG_LOAD / ct zone by their
 * oldest (NXM) header and prints them by that name (`NXM_NX_REG0[0..15]`); fields without an NXM
 * header fall back to their OXM header and name.
 */

/** How a field's value is represented in a Match (see the contract's value representation). */
export type OxmKind = 'uint' | 'u64' | 'u128' | 'mac' | 'ipv4' | 'ipv6';

/** Which packets a field applies to (OVS requires these in add-flow text; used by the text form). */
export type OxmPrereq =
  | 'none'
  | 'vlan'
  | 'ip'
  | 'ipv6'
  | 'ip_any'
  | 'arp'
  | 'tcp'
  | 'udp'
  | 'sctp'
  | 'icmp'
  | 'icmpv6'
  | 'nd'
  | 'mpls'
  | 'pbb';

export interface OxmField {
  name: string;
  oxmClass: number;
  field: number;
  /** Bytes of the value on the wire (the mask has the same width). */
  width: number;
  /** Significant bits (for subfield ranges like `reg0[0..15]`, and value checks). */
  bits: number;
  maskable: boolean;
  kind: OxmKind;
  prereq: OxmPrereq;
  /** Header without the has-mask bit: class << 16 | field << 9 | width. */
  header: number;
  nxmName: string;
  /** Header used inside Nicira actions (NXM if one exists), without mask bit. */
  nxmHeader: number;
  /** Largest value of a 'uint' field (2^(8*width) - 1). */
  max: number;
  /** Experimenter id of an experimenter-class (0xffff) OXM, written after the header; else 0. */
  experimenter: number;
}

/** ONF's experimenter id, for the OpenFlow 1.3 extension OXMs OVS uses (tcp_flags). */
export const ONF_EXPERIMENTER_ID = 0x4f4e4600;

export const OXM_CLASS_NXM0 = 0x0000;
export const OXM_CLASS_NXM1 = 0x0001;
export const OXM_CLASS_BASIC = 0x8000;
export const OXM_CLASS_PKT_REG = 0x8001;
export const OXM_CLASS_ERICSSON = 0x1000;
export const OXM_CLASS_EXPERIMENTER = 0xffff;

export function oxmHeader(oxmClass: number, field: number, width: number, hasMask = false): number {
  return ((oxmClass << 16) | (field << 9) | (hasMask ? 0x100 : 0) | (hasMask ? width * 2 : width)) >>> 0;
}

type Row = [
  name: string,
  cls: number,
  field: number,
  width: number,
  bits: number,
  maskable: boolean,
  kind: OxmKind,
  prereq: OxmPrereq,
  nxm?: [name: string, cls: number, field: number, width: number],
  experimenter?: number,
];

const B = OXM_CLASS_BASIC;
const N1 = OXM_CLASS_NXM1;

// biome-ignore format: one field per line reads as a table
const ROWS: Row[] = [
  ['in_port', B, 0, 4, 32, false, 'uint', 'none', ['OXM_OF_IN_PORT', B, 0, 4]],
  ['in_phy_port', B, 1, 4, 32, false, 'uint', 'none'],
  ['metadata', B, 2, 8, 64, true, 'u64', 'none'],
  ['eth_dst', B, 3, 6, 48, true, 'mac', 'none', ['NXM_OF_ETH_DST', 0, 1, 6]],
  ['eth_src', B, 4, 6, 48, true, 'mac', 'none', ['NXM_OF_ETH_SRC', 0, 2, 6]],
  ['eth_type', B, 5, 2, 16, false, 'uint', 'none', ['NXM_OF_ETH_TYPE', 0, 3, 2]],
  ['vlan_vid', B, 6, 2, 13, true, 'uint', 'none'],
  ['vlan_pcp', B, 7, 1, 3, false, 'uint', 'vlan'],
  ['ip_dscp', B, 8, 1, 6, false, 'uint', 'ip_any'],
  ['nw_ecn', B, 9, 1, 2, false, 'uint', 'ip_any', ['NXM_NX_IP_ECN', 1, 28, 1]],
  ['nw_proto', B, 10, 1, 8, false, 'uint', 'ip_any', ['NXM_OF_IP_PROTO', 0, 6, 1]],
  ['ip_src', B, 11, 4, 32, true, 'ipv4', 'ip', ['NXM_OF_IP_SRC', 0, 7, 4]],
  ['ip_dst', B, 12, 4, 32, true, 'ipv4', 'ip', ['NXM_OF_IP_DST', 0, 8, 4]],
  ['tcp_src', B, 13, 2, 16, true, 'uint', 'tcp', ['NXM_OF_TCP_SRC', 0, 9, 2]],
  ['tcp_dst', B, 14, 2, 16, true, 'uint', 'tcp', ['NXM_OF_TCP_DST', 0, 10, 2]],
  ['udp_src', B, 15, 2, 16, true, 'uint', 'udp', ['NXM_OF_UDP_SRC', 0, 11, 2]],
  ['udp_dst', B, 16, 2, 16, true, 'uint', 'udp', ['NXM_OF_UDP_DST', 0, 12, 2]],
  ['sctp_src', B, 17, 2, 16, true, 'uint', 'sctp'],
  ['sctp_dst', B, 18, 2, 16, true, 'uint', 'sctp'],
  ['icmp_type', B, 19, 1, 8, false, 'uint', 'icmp', ['NXM_OF_ICMP_TYPE', 0, 13, 1]],
  ['icmp_code', B, 20, 1, 8, false, 'uint', 'icmp', ['NXM_OF_ICMP_CODE', 0, 14, 1]],
  ['arp_op', B, 21, 2, 16, false, 'uint', 'arp', ['NXM_OF_ARP_OP', 0, 15, 2]],
  ['arp_spa', B, 22, 4, 32, true, 'ipv4', 'arp', ['NXM_OF_ARP_SPA', 0, 16, 4]],
  ['arp_tpa', B, 23, 4, 32, true, 'ipv4', 'arp', ['NXM_OF_ARP_TPA', 0, 17, 4]],
  ['arp_sha', B, 24, 6, 48, true, 'mac', 'arp', ['NXM_NX_ARP_SHA', 1, 17, 6]],
  ['arp_tha', B, 25, 6, 48, true, 'mac', 'arp', ['NXM_NX_ARP_THA', 1, 18, 6]],
  ['ipv6_src', B, 26, 16, 128, true, 'ipv6', 'ipv6', ['NXM_NX_IPV6_SRC', 1, 19, 16]],
  ['ipv6_dst', B, 27, 16, 128, true, 'ipv6', 'ipv6', ['NXM_NX_IPV6_DST', 1, 20, 16]],
  ['ipv6_label', B, 28, 4, 20, true, 'uint', 'ipv6', ['NXM_NX_IPV6_LABEL', 1, 27, 4]],
  ['icmpv6_type', B, 29, 1, 8, false, 'uint', 'icmpv6', ['NXM_NX_ICMPV6_TYPE', 1, 21, 1]],
  ['icmpv6_code', B, 30, 1, 8, false, 'uint', 'icmpv6', ['NXM_NX_ICMPV6_CODE', 1, 22, 1]],
  ['nd_target', B, 31, 16, 128, true, 'ipv6', 'nd', ['NXM_NX_ND_TARGET', 1, 23, 16]],
  ['nd_sll', B, 32, 6, 48, true, 'mac', 'nd', ['NXM_NX_ND_SLL', 1, 24, 6]],
  ['nd_tll', B, 33, 6, 48, true, 'mac', 'nd', ['NXM_NX_ND_TLL', 1, 25, 6]],
  ['mpls_label', B, 34, 4, 20, false, 'uint', 'mpls'],
  ['mpls_tc', B, 35, 1, 3, false, 'uint', 'mpls'],
  ['mpls_bos', B, 36, 1, 1, false, 'uint', 'mpls'],
  ['pbb_isid', B, 37, 3, 24, true, 'uint', 'pbb'],
  ['tun_id', B, 38, 8, 64, true, 'u64', 'none', ['NXM_NX_TUN_ID', 1, 16, 8]],
  ['ipv6_exthdr', B, 39, 2, 9, true, 'uint', 'ipv6'],
  ['tun_src', N1, 31, 4, 32, true, 'ipv4', 'none'],
  ['tun_dst', N1, 32, 4, 32, true, 'ipv4', 'none'],
  ['pkt_mark', N1, 33, 4, 32, true, 'uint', 'none'],
  ['conj_id', N1, 37, 4, 32, false, 'uint', 'none'],
  ['ct_state', N1, 105, 4, 32, true, 'uint', 'none'],
  ['ct_zone', N1, 106, 2, 16, false, 'uint', 'none'],
  ['ct_mark', N1, 107, 4, 32, true, 'uint', 'none'],
  ['ct_label', N1, 108, 16, 128, true, 'u128', 'none'],
  ['nw_ttl', N1, 29, 1, 8, false, 'uint', 'ip_any'],
  ['nw_frag', N1, 26, 1, 8, true, 'uint', 'ip_any'],
  // ONFOXM_ET_TCP_FLAGS: what OVS sends for tcp_flags in OpenFlow 1.3.
  ['tcp_flags', OXM_CLASS_EXPERIMENTER, 42, 2, 12, true, 'uint', 'tcp', ['NXM_NX_TCP_FLAGS', N1, 34, 2], ONF_EXPERIMENTER_ID],
  // ERICOXM_OF (class 0x1000, OVS >= 2.11): the flags word of a neighbour advertisement (R, S, O
  // in its top bits) and the type of its first option, so a flow can turn a solicitation into the
  // advertisement in place (apps/nd-responder).
  ['nd_reserved', OXM_CLASS_ERICSSON, 1, 4, 32, false, 'uint', 'nd', ['ERICOXM_OF_ICMPV6_ND_RESERVED', OXM_CLASS_ERICSSON, 1, 4]],
  ['nd_options_type', OXM_CLASS_ERICSSON, 2, 1, 8, false, 'uint', 'nd', ['ERICOXM_OF_ICMPV6_ND_OPTIONS_TYPE', OXM_CLASS_ERICSSON, 2, 1]],
];
// OVS's 16-bit in_port (NXM_OF_IN_PORT): what it puts in set_field and load/move for "in_port".
ROWS.push([
  'in_port_nxm',
  OXM_CLASS_NXM0,
  0,
  2,
  16,
  false,
  'uint',
  'none',
  ['NXM_OF_IN_PORT', OXM_CLASS_NXM0, 0, 2],
]);
for (let i = 0; i < 16; i++) ROWS.push([`reg${i}`, N1, i, 4, 32, true, 'uint', 'none']);
for (let i = 0; i < 8; i++) ROWS.push([`xreg${i}`, OXM_CLASS_PKT_REG, i, 8, 64, true, 'u64', 'none']);

const NXM1_NAMES: Record<string, string> = {
  tun_src: 'NXM_NX_TUN_IPV4_SRC',
  tun_dst: 'NXM_NX_TUN_IPV4_DST',
  pkt_mark: 'NXM_NX_PKT_MARK',
  conj_id: 'NXM_NX_CONJ_ID',
  ct_state: 'NXM_NX_CT_STATE',
  ct_zone: 'NXM_NX_CT_ZONE',
  ct_mark: 'NXM_NX_CT_MARK',
  ct_label: 'NXM_NX_CT_LABEL',
  nw_ttl: 'NXM_NX_IP_TTL',
  nw_frag: 'NXM_NX_IP_FRAG',
};

function oxmBasicName(name: string, field: number): string {
  const basic = [
    'IN_PORT',
    'IN_PHY_PORT',
    'METADATA',
    'ETH_DST',
    'ETH_SRC',
    'ETH_TYPE',
    'VLAN_VID',
    'VLAN_PCP',
    'IP_DSCP',
    'IP_ECN',
    'IP_PROTO',
    'IPV4_SRC',
    'IPV4_DST',
    'TCP_SRC',
    'TCP_DST',
    'UDP_SRC',
    'UDP_DST',
    'SCTP_SRC',
    'SCTP_DST',
    'ICMPV4_TYPE',
    'ICMPV4_CODE',
    'ARP_OP',
    'ARP_SPA',
    'ARP_TPA',
    'ARP_SHA',
    'ARP_THA',
    'IPV6_SRC',
    'IPV6_DST',
    'IPV6_FLABEL',
    'ICMPV6_TYPE',
    'ICMPV6_CODE',
    'IPV6_ND_TARGET',
    'IPV6_ND_SLL',
    'IPV6_ND_TLL',
    'MPLS_LABEL',
    'MPLS_TC',
    'MPLS_BOS',
    'PBB_ISID',
    'TUNNEL_ID',
    'IPV6_EXTHDR',
  ];
  return `OXM_OF_${basic[field] ?? name.toUpperCase()}`;
}

function build(row: Row): OxmField {
  const [name, cls, field, width, bits, maskable, kind, prereq, nxm, experimenter = 0] = row;
  let nxmName: string;
  let nxmHeader: number;
  if (nxm) {
    nxmName = nxm[0];
    nxmHeader = oxmHeader(nxm[1], nxm[2], nxm[3]);
  } else {
    nxmHeader = oxmHeader(cls, field, width);
    if (cls === N1) nxmName = name.startsWith('reg') ? `NXM_NX_REG${field}` : (NXM1_NAMES[name] ?? name);
    else if (cls === OXM_CLASS_PKT_REG) nxmName = `OXM_OF_PKT_REG${field}`;
    else nxmName = oxmBasicName(name, field);
  }
  return {
    name,
    oxmClass: cls,
    field,
    width,
    bits,
    maskable,
    kind,
    prereq,
    // An experimenter OXM's length also covers its 4-byte experimenter id.
    header: oxmHeader(cls, field, width) + (experimenter ? 4 : 0),
    nxmName,
    nxmHeader,
    max: 2 ** (width * 8) - 1,
    experimenter,
  };
}

export const OXM_FIELDS: readonly OxmField[] = ROWS.map(build);

const BY_NAME = new Map<string, OxmField>();
/** Keyed by class << 7 | field (header bits above the has-mask bit). */
const BY_CLASS_FIELD = new Map<number, OxmField>();
/** NXM headers used inside Nicira actions (incl. NXM_OF_* aliases), keyed like BY_CLASS_FIELD. */
const BY_NXM = new Map<number, OxmField>();
const BY_NXM_NAME = new Map<string, OxmField>();

/** Experimenter OXMs, keyed by experimenter id * 128 + field. */
const BY_EXPERIMENTER = new Map<number, OxmField>();

/** The two classes a dump is made of, indexed by field number: no hashing on the decode path. */
const BASIC_BY_FIELD: Array<OxmField | undefined> = new Array(128).fill(undefined);
const NXM1_BY_FIELD: Array<OxmField | undefined> = new Array(128).fill(undefined);

for (const f of OXM_FIELDS) {
  BY_NAME.set(f.name, f);
  if (f.experimenter) BY_EXPERIMENTER.set(f.experimenter * 128 + f.field, f);
  else BY_CLASS_FIELD.set(f.header >>> 9, f);
  if (!f.experimenter && f.oxmClass === OXM_CLASS_BASIC) BASIC_BY_FIELD[f.field] = f;
  if (!f.experimenter && f.oxmClass === OXM_CLASS_NXM1) NXM1_BY_FIELD[f.field] = f;
  BY_NXM.set(f.nxmHeader >>> 9, f);
  BY_NXM.set(f.header >>> 9, f);
  BY_NXM_NAME.set(f.nxmName, f);
}
// Names OVS accepts for the same fields in text (ovs-ofctl aliases).
const ALIASES: Record<string, string> = {
  dl_src: 'eth_src',
  dl_dst: 'eth_dst',
  dl_type: 'eth_type',
  nw_src: 'ip_src',
  nw_dst: 'ip_dst',
  ipv4_src: 'ip_src',
  ipv4_dst: 'ip_dst',
  ip_proto: 'nw_proto',
  tun_ipv4_src: 'tun_src',
  tun_ipv4_dst: 'tun_dst',
  tunnel_id: 'tun_id',
  ipv6_flabel: 'ipv6_label',
  icmpv4_type: 'icmp_type',
  icmpv4_code: 'icmp_code',
  ip_ecn: 'nw_ecn',
};

export function fieldByName(name: string): OxmField | undefined {
  const f = BY_NAME.get(name);
  if (f !== undefined) return f;
  return BY_NXM_NAME.get(name) ?? BY_NAME.get(ALIASES[name] ?? '');
}

/** The table's own name for a field spelled by any alias (nw_src, ipv4_src -> ip_src); unknown names as given. */
export const canonicalFieldName = (name: string): string => fieldByName(name)?.name ?? name;

/** The field for an OXM header (mask bit and length ignored), or undefined if not modelled. */
export function fieldByHeader(header: number): OxmField | undefined {
  const cls = header >>> 16;
  if (cls === OXM_CLASS_BASIC) return BASIC_BY_FIELD[(header >>> 9) & 0x7f];
  if (cls === OXM_CLASS_NXM1) return NXM1_BY_FIELD[(header >>> 9) & 0x7f];
  return BY_CLASS_FIELD.get(header >>> 9);
}

/** The experimenter-class field with this experimenter id and field number, if modelled. */
export function fieldByExperimenter(experimenter: number, field: number): OxmField | undefined {
  return BY_EXPERIMENTER.get(experimenter * 128 + field);
}

/** The field for a header inside a Nicira action (NXM or OXM form). */
export function fieldByNxmHeader(header: number): OxmField | undefined {
  return BY_NXM.get(header >>> 9);
}
