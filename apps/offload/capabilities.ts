/**
 * What ASAP2 / TC flower hardware offload can take, as weft's flows use it. OVS compiles the
 * OpenFlow pipeline into datapath flows (resubmits, goto_table and groups are flattened), and
 * it is those datapath flows that TC offloads; so what matters is which matches and actions
 * survive into a datapath flow the NIC can run. Sources: OVS's TC offload documentation
 * (lib/netdev-offload-tc.c capabilities) and the field reports in shared/design/CONTEXT.md.
 * docs/OFFLOAD.md carries the same table for people.
 */
export interface Verdict {
  offloadable: boolean;
  /** Why a construct keeps the flow in software; empty when it offloads. */
  reason?: string;
}

const OK: Verdict = { offloadable: true };
const soft = (reason: string): Verdict => ({ offloadable: false, reason });

/** Match fields TC flower matches in hardware (plus pipeline-internal state OVS flattens away). */
export const OFFLOADABLE_MATCHES: ReadonlySet<string> = new Set([
  'in_port',
  'eth_src',
  'eth_dst',
  'eth_type',
  'vlan_vid',
  'vlan_pcp',
  'ip_proto',
  'ip_dscp',
  'ip_ecn',
  'nw_ttl',
  'ipv4_src',
  'ipv4_dst',
  'ipv6_src',
  'ipv6_dst',
  'tcp_src',
  'tcp_dst',
  'udp_src',
  'udp_dst',
  'icmp_type',
  'icmp_code',
  'icmpv6_type',
  'icmpv6_code',
  'tun_id',
  'tun_src',
  'tun_dst',
  'ct_state',
  'ct_zone',
  'ct_mark',
  'ct_label',
  // Pipeline state: exists only between OpenFlow tables, gone from the datapath flow.
  'metadata',
  ...Array.from({ length: 16 }, (_, i) => `reg${i}`),
]);

/** Fields whose rewrite TC pedit can do in hardware. */
export const OFFLOADABLE_SET_FIELDS: ReadonlySet<string> = new Set([
  'eth_src',
  'eth_dst',
  'vlan_vid',
  'ipv4_src',
  'ipv4_dst',
  'ipv6_src',
  'ipv6_dst',
  'ip_dscp',
  'nw_ttl',
  'tcp_src',
  'tcp_dst',
  'udp_src',
  'udp_dst',
  'tun_id',
  'tun_dst',
  'tun_src',
  'ct_mark',
  'ct_label',
  // Cleared before a mirror's copy goes back out of the tunnel it came in on: it only lifts
  // OpenFlow's ban on output to in_port; the datapath flow holds plain outputs.
  'in_port_nxm',
  ...Array.from({ length: 16 }, (_, i) => `reg${i}`),
]);

export function matchVerdict(field: string): Verdict {
  return OFFLOADABLE_MATCHES.has(field) ? OK : soft(`match on ${field} is not offloadable by TC flower`);
}

export function setFieldVerdict(field: string): Verdict {
  if (field.startsWith('arp_')) return soft('ARP header rewrite (ARP responder) runs in software');
  if (field.startsWith('nd_')) return soft('neighbour discovery rewrite (ND responder) runs in software');
  if (field === 'icmpv6_type')
    return soft('ICMPv6 rewrite (ND answers, pings to the router) runs in software');
  return OFFLOADABLE_SET_FIELDS.has(field) ? OK : soft(`rewriting ${field} is not offloadable`);
}

/**
 * Verdicts for instructions (the actions of apply_actions / write_actions are checked one by
 * one). goto_table, write_metadata and clear_actions are pipeline plumbing that OVS flattens
 * into the datapath flow's action list.
 *
 * meter (endpoint rate limits, apps/qos): OVS >= 3.0 maps each OpenFlow meter to one TC police
 * action (indexes 0x10000000-0x1fffffff, `tc actions ls action police`) that the offloaded
 * flower rules point at, on kernels whose driver offloads a police action on its own (mlx5:
 * ConnectX-6 Dx and later police in hardware). weft's meters are one kbit/s drop band, the
 * shape TC police takes. With an older OVS, kernel or NIC the metered datapath flows stay in
 * software: the profile assumes the platform asap2 is deployed on today.
 */
export function instructionVerdict(type: string): Verdict {
  switch (type) {
    case 'goto_table':
    case 'write_metadata':
    case 'apply_actions':
    case 'write_actions':
    case 'clear_actions':
    case 'meter':
      return OK;
    default:
      return soft(`instruction ${type} is not known to offload`);
  }
}

/** Verdicts for action types (set_field and reg_move are checked per field by the caller). */
export function actionVerdict(type: string): Verdict {
  switch (type) {
    case 'output':
    case 'group':
    case 'push_vlan':
    case 'pop_vlan':
    case 'dec_nw_ttl':
    case 'dec_ttl':
    case 'ct':
    case 'ct_clear':
    case 'resubmit':
    case 'note':
    case 'set_queue':
      return OK;
    case 'controller':
      return soft('sends packets to the controller (userspace)');
    case 'reg_move':
      return soft('field moves are done per packet in the slow path');
    case 'push_mpls':
    case 'pop_mpls':
    case 'push_pbb':
    case 'pop_pbb':
      return soft(`${type} is not offloaded by TC`);
    default:
      return soft(`${type} is not known to offload`);
  }
}
