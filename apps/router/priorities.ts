import { type DesiredFlow, goto, TO_CONTROLLER } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';

/**
 * The router app's flow priorities, one definition for its IPv4 flows (compute.ts) and its IPv6
 * ones (ipv6.ts), so the two families order their l3-route flows the same way.
 */
export const ROUTE_PRIORITY_BASE = 100;
/**
 * An IPv4 route to a prefix of this length: two priorities per prefix length, so a route's
 * floating-IP variant (the same route for one source address, rewritten to its floating IP:
 * ./floating.ts) sits right above it and still below every longer prefix. IPv6 routes (no NAT)
 * keep ROUTE_PRIORITY_BASE + length; the families never meet in one match.
 */
export const route4Priority = (prefix: number, floating = false): number =>
  ROUTE_PRIORITY_BASE + 2 * prefix + (floating ? 1 : 0);
/**
 * A floating IP's inbound flow (its destination rewritten to the fixed address, then routed): above
 * every route (at most route4Priority(32, true) = 165), below the TTL check (250) and everything
 * aimed at the router's own addresses.
 */
export const FLOATING_DNAT_PRIORITY = 200;
export const ECHO_PRIORITY = 300;
/**
 * SNAT's inbound conntrack (./snat.ts): IPv4 from a VLAN binding port to the router's MAC on its
 * external network, for the SNAT address or an internal subnet, above every flow of the table, so
 * an answer to a translated connection meets the routes with its internal destination back (reg2
 * keeps it from looping).
 */
export const SNAT_INBOUND_PRIORITY = 310;
/**
 * SNAT's outbound conntrack in l2-lookup: above the flows of the neighbours the router learned by
 * ARP (90, 91: a host behind a VLAN binding, out of its port; controller/router/neighbor-flows.ts),
 * below their way into the tunnel on another chassis with a binding (96: translated only where the
 * packet leaves) and every endpoint's MAC (100: a VM on the external network is reached untranslated).
 */
export const SNAT_OUTBOUND_PRIORITY = 95;
export const ROUTER_ADDRESS_PRIORITY = 290;
export const ARP_REPLY_PRIORITY = 280;
/**
 * A neighbour advertisement to the router (its answer to a solicitation): above the router-address
 * flow (290), which would take one sent to the router's own address as a packet for a service.
 */
export const ND_REPLY_PRIORITY = 295;
/** arp-responder: below every answer (100), above nothing; the table's miss goes on to l3-route too. */
export const ARP_WATCH_PRIORITY = 50;
export const TTL_PRIORITY = 250;
/** IPv6 to a link-local address (not the router's): dropped above the hop limit check and every route. */
export const LINK_LOCAL_DROP_PRIORITY = 270;
export const NO_ROUTE_PRIORITY = 10;
export const NOT_ROUTED_PRIORITY = 5;

/** What a watch flow does: a copy to the controller, and on as the table's miss goes (l3-route). */
export const COPY_UP_AND_ROUTE: DesiredFlow['instructions'] = Object.freeze([
  ...TO_CONTROLLER,
  goto(TABLE.L3_ROUTE),
]) as DesiredFlow['instructions'];
