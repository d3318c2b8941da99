import { TABLE } from '../pipeline/tables.js';
import type { IcmpError } from './icmp-error.js';

/**
 * Which ICMP error a router answers a packet its flows sent up to the controller with: the one
 * rule, shared by the responder that sends the error (router-responder.ts) and `weft trace`, which
 * says what a probe would get back (controller/trace/router-answer.ts). Pure.
 */

export const IP_PROTOCOL = { ICMP: 1, TCP: 6, UDP: 17, ICMPV6: 58 } as const;

/** What the answer depends on, about one packet sent up. */
export interface SentUp {
  /**
   * l3-route: one of the router's own flows sent it, before any routing (so the TTL is the
   * sender's); l3-neighbor: its table miss did, a routed packet to an address no endpoint holds.
   */
  table: typeof TABLE.L3_ROUTE | typeof TABLE.L3_NEIGHBOR;
  /** The destination is one of the router's own addresses. */
  toRouter: boolean;
  /** The IP protocol number (IPv6: the fixed header's next header). */
  protocol: number;
  /** The TTL (IPv6: the hop limit). */
  ttl: number;
  /** The packet's IP version; IPv4 when absent. Its ping protocol is ICMP, IPv6's ICMPv6. */
  family?: 4 | 6;
}

/**
 * The error, in the order apps/router's l3-route flows pick (highest priority first): to the
 * router's own address, port unreachable for TCP and UDP and protocol unreachable for any other
 * protocol but ICMP (for IPv6: ICMPv6), which gets no answer (its pings are answered by a flow,
 * and an ICMP error about ICMP the router does not serve would only invite more); a TTL of 1 or 0,
 * time exceeded (forwarding would take it to zero); anything else it sent up, net unreachable (no
 * route). The l3-neighbor miss is always host unreachable. The same for IPv6, in ICMPv6's terms.
 */
export function icmpErrorFor(p: SentUp & { table: typeof TABLE.L3_NEIGHBOR }): IcmpError['kind'];
export function icmpErrorFor(p: SentUp): IcmpError['kind'] | undefined;
export function icmpErrorFor(p: SentUp): IcmpError['kind'] | undefined {
  if (p.table === TABLE.L3_NEIGHBOR) return 'host-unreachable';
  if (p.toRouter) {
    if (p.protocol === (p.family === 6 ? IP_PROTOCOL.ICMPV6 : IP_PROTOCOL.ICMP)) return undefined;
    return p.protocol === IP_PROTOCOL.TCP || p.protocol === IP_PROTOCOL.UDP
      ? 'port-unreachable'
      : 'protocol-unreachable';
  }
  return p.ttl <= 1 ? 'time-exceeded' : 'net-unreachable';
}

/**
 * Whom the error comes from: the router's own address that was asked for, when it answers for
 * itself (port or protocol unreachable, as a host does), otherwise its address on the sender's
 * network (as a Linux router does; the hop traceroute prints).
 */
export function icmpErrorSource(
  kind: IcmpError['kind'],
  a: { probed: string; onSenderNetwork: string },
): string {
  return kind === 'port-unreachable' || kind === 'protocol-unreachable' ? a.probed : a.onSenderNetwork;
}
