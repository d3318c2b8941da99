/**
 * THE OpenFlow pipeline of a weft integration bridge, declared once as data. Every flow an app
 * emits is checked against it (checkFlow in flow.ts): the table must exist, its matches must be
 * among the table's allowed fields, and goto/resubmit targets must be among its next tables. The
 * table-miss flow of each table is emitted from `miss` by the pipeline app, so an unmatched packet
 * always has a declared fate.
 *
 * Direction words follow the endpoint's point of view, as security groups do (OpenStack, AWS):
 * "egress" is traffic leaving an endpoint (checked on the chassis it leaves from), "ingress" is
 * traffic arriving at an endpoint (checked on the chassis it arrives at), so every packet meets
 * each policy exactly once however many hypervisors it crosses.
 */
export const TABLE = {
  CLASSIFY: 0,
  PORT_SECURITY: 10,
  EGRESS_ACL: 20,
  EGRESS_SG: 25,
  EGRESS_SG_CT: 26,
  ARP_RESPONDER: 30,
  ARP_REPLY: 31,
  L3_ROUTE: 35,
  L3_NEIGHBOR: 36,
  L2_LOOKUP: 40,
  INGRESS_ACL: 50,
  INGRESS_SG: 55,
  INGRESS_SG_CT: 56,
  OUTPUT: 60,
} as const;
export type TableId = (typeof TABLE)[keyof typeof TABLE];

/** A drop says why, in words an operator can act on (weft drops, /metrics). */
/**
 * `controller`: the packet is not forwarded, and goes up to the controller, which answers its
 * sender (an ICMP error) instead of dropping it silently.
 */
export type MissAction =
  | { kind: 'drop'; why: string }
  | { kind: 'controller'; why: string }
  | { kind: 'goto'; table: TableId };

export interface TableDecl {
  id: TableId;
  name: string;
  purpose: string;
  /** Match fields allowed in this table (OVS meta-flow names as in codec/oxm-fields.ts). */
  matches: readonly string[];
  /** Tables a flow here may continue to (goto_table or resubmit). */
  next: readonly TableId[];
  miss: MissAction;
}

const L2 = ['eth_src', 'eth_dst', 'eth_type', 'vlan_vid'] as const;
const L3 = ['ip_proto', 'ipv4_src', 'ipv4_dst', 'ipv6_src', 'ipv6_dst'] as const;
const L4 = ['tcp_src', 'tcp_dst', 'udp_src', 'udp_dst', 'icmp_type', 'icmp_code', 'icmpv6_type'] as const;
const CT = ['ct_state', 'ct_zone', 'ct_mark'] as const;

export const PIPELINE: readonly TableDecl[] = [
  {
    id: TABLE.CLASSIFY,
    name: 'classify',
    purpose:
      'in_port -> network (VNI in metadata) and port class in reg5; tunnel: tun_id -> network; VLAN binding port: vlan_vid -> network, tag popped',
    matches: ['in_port', 'tun_id', 'vlan_vid'],
    next: [TABLE.PORT_SECURITY, TABLE.ARP_RESPONDER, TABLE.L2_LOOKUP],
    miss: { kind: 'drop', why: 'from a port that is no bound endpoint, tunnel or VLAN binding' },
  },
  {
    id: TABLE.PORT_SECURITY,
    name: 'port-security',
    purpose:
      "only the endpoint's own source MAC and IPs (its allowed addresses too; ARP sha/spa, IPv6 ND addresses and link-layer options) leave its port, no router advertisement or redirect; DHCP requests go to the controller (networks with DHCP on)",
    matches: [
      'metadata',
      'in_port',
      'eth_src',
      'eth_type',
      'ipv4_src',
      'ipv6_src',
      'arp_sha',
      'arp_spa',
      'ip_proto',
      'udp_src',
      'udp_dst',
      'icmpv6_type',
      'icmpv6_code',
      'nd_target',
      'nd_sll',
      'nd_tll',
    ],
    next: [TABLE.EGRESS_ACL],
    miss: { kind: 'drop', why: "source MAC or address not the endpoint's own (port security)" },
  },
  {
    id: TABLE.EGRESS_ACL,
    name: 'egress-acl',
    purpose: 'network ACLs, direction egress (stateless, ordered by priority)',
    matches: ['metadata', 'in_port', ...L2, ...L3, ...L4],
    next: [TABLE.EGRESS_SG],
    miss: { kind: 'goto', table: TABLE.EGRESS_SG },
  },
  {
    id: TABLE.EGRESS_SG,
    name: 'egress-sg',
    purpose: 'IP from an endpoint with security groups goes through conntrack in its zone; others pass',
    matches: ['in_port', 'eth_type', 'ip_proto', 'icmpv6_type'],
    next: [TABLE.EGRESS_SG_CT, TABLE.ARP_RESPONDER],
    miss: { kind: 'goto', table: TABLE.ARP_RESPONDER },
  },
  {
    id: TABLE.EGRESS_SG_CT,
    name: 'egress-sg-ct',
    purpose:
      'security group egress rules after conntrack: established/related pass, new must match a rule (commit), rest dropped',
    matches: ['in_port', ...L2, ...L3, ...L4, ...CT],
    next: [TABLE.ARP_RESPONDER],
    miss: { kind: 'drop', why: 'no egress security-group rule admits it (default deny)' },
  },
  {
    id: TABLE.ARP_RESPONDER,
    name: 'arp-responder',
    purpose:
      "answer ARP requests and IPv6 neighbour solicitations for known endpoint IPs on the spot (no flood): the endpoint's MAC into eth_src (an NS becomes an NA with its flags), on to arp-reply; a solicitation without a source link-layer option goes on unanswered; other ARP requests (and broadcast replies), and unsolicited neighbour advertisements (to ff02::1), from a VLAN binding port of a routed network, or from a VIP of an endpoint's there, are copied to the controller (a neighbour announcing a new MAC) and go on",
    matches: [
      'in_port',
      'metadata',
      'eth_dst',
      'eth_type',
      'arp_op',
      'arp_spa',
      'arp_tpa',
      'ip_proto',
      'icmpv6_type',
      'icmpv6_code',
      'nd_target',
      'nd_sll',
      'ipv6_dst',
    ],
    next: [TABLE.L3_ROUTE, TABLE.ARP_REPLY],
    miss: { kind: 'goto', table: TABLE.L3_ROUTE },
  },
  {
    id: TABLE.ARP_REPLY,
    name: 'arp-reply',
    purpose:
      'the request becomes the reply in place (ARP: sha/spa <- the answer, tha/tpa <- the asker; ND: addresses swapped, the target link-layer option <- the answer) and goes back out of in_port: one flow each for every answer, and one each per VLAN binding port that tags the answer again',
    matches: ['in_port', 'metadata', 'eth_type', 'arp_op', 'ip_proto', 'icmpv6_type', 'icmpv6_code'],
    next: [],
    miss: { kind: 'drop', why: 'not an ARP request weft answers' },
  },
  {
    id: TABLE.L3_ROUTE,
    name: 'l3-route',
    purpose:
      "IP sent to a router's gateway MAC: pings to the router answered in place; otherwise TTL decremented, the destination network's gateway MAC into eth_src, its VNI into metadata, on to l3-neighbor (longest prefix first; a floating IP's destination or source rewritten on its way in or out); a TTL that runs out, no route, or other traffic to the router itself goes to the controller for an ICMP error; ARP replies and neighbour advertisements to the router (from a VLAN binding port, or from an endpoint's VIP) go to the controller, which learns its neighbours from them",
    matches: [
      'in_port',
      'metadata',
      'eth_dst',
      'eth_type',
      'ip_proto',
      'ipv4_src',
      'ipv4_dst',
      'ipv6_src',
      'ipv6_dst',
      'tcp_dst',
      'udp_dst',
      'icmp_type',
      'icmpv6_type',
      'nw_ttl',
      'arp_op',
      'arp_spa',
      'icmpv6_code',
      'nd_target',
      'reg2',
      'ct_state',
    ],
    // Itself: a router's SNAT conntrack recirculates here once (reg2 set), answers translated back.
    next: [TABLE.L3_ROUTE, TABLE.L3_NEIGHBOR, TABLE.L2_LOOKUP],
    miss: { kind: 'goto', table: TABLE.L2_LOOKUP },
  },
  {
    id: TABLE.L3_NEIGHBOR,
    name: 'l3-neighbor',
    purpose:
      "a routed packet's destination address (or its static route's next hop, reg4 or reg8..reg11) -> the MAC of the endpoint or of the host weft learned by ARP or neighbour discovery into eth_dst, on to l2-lookup; a next hop not learned yet goes to the controller, which resolves it",
    matches: [
      'metadata',
      'eth_type',
      'ipv4_dst',
      'ipv6_dst',
      'reg3',
      'reg4',
      'reg8',
      'reg9',
      'reg10',
      'reg11',
    ],
    next: [TABLE.L2_LOOKUP],
    miss: {
      kind: 'controller',
      why: 'routed to an address no endpoint of the destination network holds (the router resolves it by ARP or neighbour solicitation behind a VLAN binding or among the endpoints allowed a VIP, else answers host unreachable)',
    },
  },
  {
    id: TABLE.L2_LOOKUP,
    name: 'l2-lookup',
    purpose:
      "dl_dst -> local port (reg7) | remote chassis (tun_dst + tun_id, VXLAN port) ; broadcast/multicast -> flood group; where a router's external network has a VLAN binding, IPv4 it routed from its other networks to a host there through its SNAT conntrack zone first (source translated, back here once)",
    matches: ['metadata', 'eth_dst', 'eth_src', 'reg5', 'ipv4_src', 'reg2', 'ct_state'],
    next: [TABLE.L2_LOOKUP, TABLE.INGRESS_ACL],
    miss: { kind: 'drop', why: 'destination MAC of no endpoint in the network (unknown unicast)' },
  },
  {
    id: TABLE.INGRESS_ACL,
    name: 'ingress-acl',
    purpose: 'network ACLs, direction ingress (stateless, ordered by priority)',
    matches: ['metadata', 'reg7', ...L2, ...L3, ...L4],
    next: [TABLE.INGRESS_SG],
    miss: { kind: 'goto', table: TABLE.INGRESS_SG },
  },
  {
    id: TABLE.INGRESS_SG,
    name: 'ingress-sg',
    purpose:
      "IP to an endpoint with security groups goes through conntrack in the receiver's zone; others pass",
    matches: ['reg7', 'eth_type', 'ip_proto', 'icmpv6_type'],
    next: [TABLE.INGRESS_SG_CT, TABLE.OUTPUT],
    miss: { kind: 'goto', table: TABLE.OUTPUT },
  },
  {
    id: TABLE.INGRESS_SG_CT,
    name: 'ingress-sg-ct',
    purpose:
      'security group ingress rules after conntrack: established/related pass, new must match a rule (commit), rest dropped',
    matches: ['reg7', ...L2, ...L3, ...L4, ...CT],
    next: [TABLE.OUTPUT],
    miss: { kind: 'drop', why: 'no ingress security-group rule admits it (default deny)' },
  },
  {
    id: TABLE.OUTPUT,
    name: 'output',
    purpose:
      "reg7 -> output to the local port (VLAN binding ports get their tag pushed); a mirrored port's own frames are not copied as received",
    matches: ['reg7', 'in_port'],
    next: [],
    miss: { kind: 'drop', why: 'no local port for it' },
  },
];

const byId = new Map<number, TableDecl>(PIPELINE.map((t) => [t.id, t]));

export function tableDecl(id: number): TableDecl | undefined {
  return byId.get(id);
}

/** The table's name as docs/PIPELINE.md and `weft trace` print it (`table N` if undeclared). */
export const tableName = (id: number): string => byId.get(id)?.name ?? `table ${id}`;
