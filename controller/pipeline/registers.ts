import { parseIp } from '../intent/net.js';

/**
 * Register and metadata layout, one place. A packet's state between tables lives only here.
 *
 *   metadata[0..23]  VNI of the packet's network (the network key; set in classify)
 *   reg5[0..3]       where the packet came from (PORT_CLASS below)
 *   (conntrack zone  = the ofport of the endpoint being protected: one zone per endpoint, see apps/acl)
 *   reg6             scratch inside one flow's actions (arp-reply swaps arp_spa and arp_tpa through it)
 *   reg7             logical output: ofport of the local port chosen by l2-lookup
 *   reg4             a static route's next hop (IPv4, as a number) when no bound endpoint holds it
 *   reg8..reg11      the same for an IPv6 next hop: its 128 bits, most significant word in reg8
 *   reg3             1: the packet goes to the next hop in reg4 or reg8..reg11 (its MAC is learned
 *                    by ARP or neighbour discovery)
 *   reg2             how far the packet went through its router's SNAT conntrack zone (apps/router/snat.ts):
 *                    0 not, 1 looked up, 2 committed; each recirculation meets the same table again
 *   (SNAT zone       = snatZone(VNI of the router's external network), 32768 and above, below)
 */
export const METADATA_VNI_MASK = 0xffffffn;

export const REG_PORT_CLASS = 'reg5';
export const REG_OUTPORT = 'reg7';
export const REG_SCRATCH = 'reg6';
/** The next hop a static route chose, when its MAC is learned by ARP (controller/router/neighbors). */
export const REG_NEXTHOP = 'reg4';
/** An IPv6 next hop's four 32-bit words, most significant first (the NXM registers OVS dumps them by). */
export const REG_NEXTHOP6 = ['reg8', 'reg9', 'reg10', 'reg11'] as const;
/** 1 while REG_NEXTHOP (IPv4) or REG_NEXTHOP6 holds the packet's next hop (registers start at 0, so 0 means none). */
export const REG_VIA_NEXTHOP = 'reg3';
/** How far the packet went through its router's SNAT conntrack zone (apps/router/snat.ts). */
export const REG_NAT_STAGE = 'reg2';

/**
 * The conntrack zone of a router's SNAT on the chassis of its external network's VLAN binding:
 * 32768 plus the low 15 bits of that network's VNI. Security groups take zones from the ofports of
 * the endpoints they protect (apps/acl), and OVS numbers ports it picks itself below 32768 (it keeps
 * the upper half for controllers' requests), so the two never meet; a network is on at most one
 * router, and the intent refuses two SNAT networks whose VNIs share the low 15 bits
 * (controller/intent/router-snat.ts), so each SNAT has a zone of its own.
 */
export const snatZone = (vni: number): number => 0x8000 | (vni & 0x7fff);

/** `ip` (IPv6, canonical or not) as the four words REG_NEXTHOP6 holds. */
export function nextHop6Words(ip: string): number[] {
  const a = parseIp(ip);
  if (a?.family !== 6) throw new TypeError(`'${ip}' is not an IPv6 address`);
  return [96n, 64n, 32n, 0n].map((shift) => Number((a.value >> shift) & 0xffffffffn));
}

export const PORT_CLASS = {
  /** A VM/container port on this chassis. */
  LOCAL: 1,
  /** The VXLAN tunnel port: traffic from another chassis. */
  TUNNEL: 2,
  /** A physical port carrying a VLAN bound to a network. */
  VLAN: 3,
} as const;
export const PORT_CLASS_MASK = 0xf;

export const metadataForVni = (vni: number): bigint => BigInt(vni);
