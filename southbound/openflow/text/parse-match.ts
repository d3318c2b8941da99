import type { Match, OxmTlv } from '../codec/match.js';
import { fieldByName } from '../codec/oxm-fields.js';
import { parseFieldValue } from './field-text.js';
import { parseUint } from './ports.js';
import { OfTextError } from './text-error.js';

/**
 * Match fields in ovs-ofctl syntax -> OXM TLVs. Accumulates first (tp_src needs to know the
 * protocol, dl_vlan/vlan_tci fold into one TCI), then emits TLVs in the order OVS itself puts
 * them on the wire (nx_put_raw), so parsing OVS's text gives what OVS would send.
 */

const SHORTHANDS: Record<string, [number, number?]> = {
  ip: [0x0800],
  ipv4: [0x0800],
  ipv6: [0x86dd],
  icmp: [0x0800, 1],
  icmp6: [0x86dd, 58],
  tcp: [0x0800, 6],
  tcp6: [0x86dd, 6],
  udp: [0x0800, 17],
  udp6: [0x86dd, 17],
  sctp: [0x0800, 132],
  sctp6: [0x86dd, 132],
  arp: [0x0806],
  rarp: [0x8035],
  mpls: [0x8847],
  mplsm: [0x8848],
};

const WIRE_ORDER = [
  'conj_id',
  'in_port',
  'in_phy_port',
  'eth_src',
  'eth_dst',
  'eth_type',
  'vlan_vid',
  'vlan_pcp',
  'mpls_tc',
  'mpls_bos',
  'mpls_label',
  'ip_src',
  'ip_dst',
  'ipv6_src',
  'ipv6_dst',
  'ipv6_label',
  'nw_frag',
  'ip_dscp',
  'nw_ecn',
  'nw_ttl',
  'nw_proto',
  'tcp_src',
  'tcp_dst',
  'tcp_flags',
  'udp_src',
  'udp_dst',
  'sctp_src',
  'sctp_dst',
  'icmp_type',
  'icmp_code',
  'icmpv6_type',
  'icmpv6_code',
  'nd_target',
  'nd_sll',
  'nd_tll',
  'arp_op',
  'arp_spa',
  'arp_tpa',
  'arp_sha',
  'arp_tha',
  'tun_id',
  'tun_src',
  'tun_dst',
  ...Array.from({ length: 16 }, (_, i) => `reg${i}`),
  ...Array.from({ length: 8 }, (_, i) => `xreg${i}`),
  'pkt_mark',
  'ct_state',
  'ct_zone',
  'ct_mark',
  'ct_label',
  'metadata',
  'pbb_isid',
  'ipv6_exthdr',
];
const RANK = new Map(WIRE_ORDER.map((n, i) => [n, i]));

const FRAG: Record<string, [number, number]> = {
  no: [0, 3],
  yes: [1, 1],
  first: [1, 3],
  later: [3, 3],
  not_later: [0, 2],
};

export class MatchBuilder {
  private fields = new Map<string, OxmTlv>();
  private opaque: OxmTlv[] = [];
  private tci = 0;
  private tciMask = 0;
  private tp: [string, string][] = [];
  private icmp: [string, string][] = [];

  private set(tok: string, t: OxmTlv): void {
    if (this.fields.has(t.field)) throw new OfTextError(tok, `${t.field} is given twice`);
    this.fields.set(t.field, t);
  }

  private setParsed(tok: string, field: string, text: string): void {
    const f = fieldByName(field);
    if (!f) throw new OfTextError(tok, `unknown field '${field}'`);
    const v = parseFieldValue(f, text);
    if (typeof v === 'string') throw new OfTextError(tok, v);
    const t: OxmTlv = { field: f.name, value: v.value };
    if (v.mask !== undefined) t.mask = v.mask;
    this.set(tok, t);
  }

  /** Adds one match token (`key=value` or a shorthand); returns false if `key` is not a match key. */
  add(tok: string, key: string, value: string | undefined): boolean {
    const short = SHORTHANDS[key];
    if (short && value === undefined) {
      this.set(tok, { field: 'eth_type', value: short[0] });
      if (short[1] !== undefined) this.set(tok, { field: 'nw_proto', value: short[1] });
      return true;
    }
    if (value === undefined) return false;
    const num = (max: number) => {
      const n = parseUint(value);
      if (n === undefined || n > max) throw new OfTextError(tok, `expected a number 0..${max}`);
      return n;
    };
    switch (key) {
      case 'dl_vlan': {
        this.tci = (this.tci & ~0x1fff) | 0x1000 | num(0xfff);
        this.tciMask |= 0x1fff;
        return true;
      }
      case 'dl_vlan_pcp': {
        this.tci = (this.tci & ~0xe000) | 0x1000 | (num(7) << 13);
        this.tciMask |= 0xf000;
        return true;
      }
      case 'vlan_tci': {
        const [v, m] = value.split('/');
        const tv = parseUint(v ?? '');
        const tm = m === undefined ? 0xffff : parseUint(m);
        if (tv === undefined || tv > 0xffff || tm === undefined || tm > 0xffff) {
          throw new OfTextError(tok, 'expected vlan_tci=TCI[/MASK] (16-bit numbers)');
        }
        this.tci = tv & tm;
        this.tciMask = tm;
        return true;
      }
      case 'vlan_vid': {
        const [v, m] = value.split('/');
        const vv = parseUint(v ?? '');
        const mm = m === undefined ? 0x1fff : parseUint(m);
        if (vv === undefined || vv > 0x1fff || mm === undefined || mm > 0x1fff)
          throw new OfTextError(tok, 'expected vlan_vid=VID[/MASK] (13 bits)');
        this.tci = (this.tci & ~0x1fff) | (vv & mm);
        this.tciMask = (this.tciMask & ~0x1fff) | mm;
        return true;
      }
      case 'vlan_pcp':
        this.tci = (this.tci & ~0xe000) | 0x1000 | (num(7) << 13);
        this.tciMask |= 0xf000;
        return true;
      case 'nw_tos':
        this.set(tok, { field: 'ip_dscp', value: num(255) >> 2 });
        return true;
      case 'nw_frag': {
        const fr = FRAG[value];
        if (!fr) throw new OfTextError(tok, 'nw_frag must be no, yes, first, later or not_later');
        // OVS sends a full (2-bit) frag mask as an exact match.
        this.set(
          tok,
          fr[1] === 3 ? { field: 'nw_frag', value: fr[0] } : { field: 'nw_frag', value: fr[0], mask: fr[1] },
        );
        return true;
      }
      case 'tp_src':
      case 'tp_dst':
        this.tp.push([tok, key]);
        return true;
      case 'icmp_type':
      case 'icmp_code':
        this.icmp.push([tok, key]);
        return true;
      case 'oxm': {
        const hex = value.replace(/\./g, '');
        if (!/^([0-9a-f]{2})+$/i.test(hex)) throw new OfTextError(tok, 'oxm= needs hex bytes');
        this.opaque.push({ field: 'opaque', value: Buffer.from(hex, 'hex') });
        return true;
      }
    }
    const f = fieldByName(key);
    if (!f) return false;
    if (f.name.startsWith('xreg')) {
      this.addXreg(tok, f.field, value);
      return true;
    }
    this.setParsed(tok, key, value);
    return true;
  }

  /** OVS keeps xregN as reg(2N):reg(2N+1) and sends the two 32-bit halves in OpenFlow 1.3. */
  private addXreg(tok: string, n: number, text: string): void {
    const v = parseFieldValue(fieldByName(`xreg${n}`)!, text);
    if (typeof v === 'string') throw new OfTextError(tok, v);
    const value = v.value as bigint;
    const mask = (v.mask as bigint | undefined) ?? (1n << 64n) - 1n;
    for (const [reg, shift] of [
      [2 * n, 32n],
      [2 * n + 1, 0n],
    ] as const) {
      const m = Number((mask >> shift) & 0xffffffffn);
      if (m === 0) continue;
      const val = Number((value >> shift) & 0xffffffffn) & m;
      this.set(
        tok,
        m === 0xffffffff ? { field: `reg${reg}`, value: val } : { field: `reg${reg}`, value: val, mask: m },
      );
    }
  }

  build(): Match {
    const ethType = this.fields.get('eth_type');
    const dl = ethType === undefined ? -1 : Number(ethType.value);
    const proto = Number(this.fields.get('nw_proto')?.value ?? -1);
    for (const [tok, key] of this.tp) {
      const p = { 6: 'tcp', 17: 'udp', 132: 'sctp' }[proto];
      if (!p || (dl !== 0x0800 && dl !== 0x86dd))
        throw new OfTextError(tok, `${key} needs tcp, udp or sctp (e.g. "tcp,${tok}")`);
      this.setParsed(tok, `${p}_${key.slice(3)}`, tok.slice(key.length + 1));
    }
    for (const [tok, key] of this.icmp) {
      const v6 = dl === 0x86dd && proto === 58;
      if (!v6 && !(dl === 0x0800 && proto === 1)) throw new OfTextError(tok, `${key} needs icmp or icmp6`);
      this.setParsed(tok, v6 ? key.replace('icmp', 'icmpv6') : key, tok.slice(key.length + 1));
    }
    if (this.tciMask) {
      // As OVS encodes a TCI match for OpenFlow 1.2+: VID+CFI as vlan_vid, PCP only with a VLAN.
      const vid = this.tci & 0x1fff;
      const mask = this.tciMask & 0x1fff;
      if (mask === 0x1fff) this.fields.set('vlan_vid', { field: 'vlan_vid', value: vid });
      else if (mask) this.fields.set('vlan_vid', { field: 'vlan_vid', value: vid, mask });
      if (vid && this.tciMask & 0xe000)
        this.fields.set('vlan_pcp', { field: 'vlan_pcp', value: this.tci >>> 13 });
    }
    const out = [...this.fields.values()].sort(
      (a, b) => (RANK.get(a.field) ?? 999) - (RANK.get(b.field) ?? 999),
    );
    return [...out, ...this.opaque];
  }
}
