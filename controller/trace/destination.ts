import { invalid } from '../intent/errors.js';
import type { Endpoint } from '../intent/model.js';
import { routerLinkLocal } from '../intent/model-router.js';
import { parseIp, prefixHolding } from '../intent/net.js';
import type { TraceTarget } from './verdict.js';

/**
 * Where a VM sends a probe, as its own stack would decide: to the endpoint of its network that
 * holds the address (the MAC its ARP or neighbour solicitation would get), or, on a network with a
 * router, to its gateway (the router's MAC there) for any address outside its own subnets, the
 * way a default route works: IPv4 where the router has its IPv4 address, IPv6 where the router
 * has an IPv6 address too (its advertisements give the VM a default route via its link-local
 * address, the same MAC). Which endpoint the routed probe is meant for is looked up in the
 * router's other networks. Throws IntentError naming `to` when the VM would have nowhere to send
 * it. Pure.
 */

/** A router as the trace needs it: every interface, with its network's subnets. */
export interface TraceRouter {
  id: string;
  interfaces: ReadonlyArray<{
    networkId: string;
    ip: string;
    mac: string;
    /** Its IPv6 address there (canonical text); absent: it routes no IPv6 on that network. */
    ipv6?: string;
    /** The network's IPv4 subnets. */
    subnets: readonly string[];
    /** The network's IPv6 subnets; absent: not known (nothing is then taken as on-link but fe80::/64). */
    subnets6?: readonly string[];
  }>;
  /**
   * Static routes, IPv4 and IPv6: destination CIDR -> next hop (an address in one of its networks;
   * an IPv6 one an endpoint's, in a network where the router has an IPv6 address).
   */
  routes: ReadonlyArray<{ destination: string; nexthop: string; networkId?: string }>;
  /** Its floating IPs (apps/router/floating.ts); absent: none. */
  floatingIps?: ReadonlyArray<{ ip: string; fixedIp: string }>;
  /** Its SNAT address and port forwards (apps/router/snat.ts); absent: none. */
  snat?: {
    ip: string;
    portForwards?: ReadonlyArray<{
      protocol: 'tcp' | 'udp';
      port: number;
      portEnd?: number;
      internalIp: string;
      internalPort: number;
    }>;
  };
}

export interface DestinationLookups {
  endpointByIp(networkId: string, ip: string): Endpoint | undefined;
  /** Endpoints allowed to send from this address (a VIP, a prefix): which holds it, only they know. */
  endpointsAllowing?(networkId: string, ip: string): string[];
  /** The router with an interface on this network, if any (a network is on at most one). */
  routerOf(networkId: string): TraceRouter | undefined;
}

export interface DestinationRequest {
  /** Canonical address text. */
  to: string;
  v6: boolean;
  arp: boolean;
  dstMac?: string;
}

export interface Destination {
  /** eth_dst of the probe; undefined for an ARP request (broadcast). */
  dstMac?: string;
  /** The endpoint the probe is meant for, when one holds the address. */
  target?: Endpoint;
  gateway?: TraceTarget['gateway'];
}

const BROADCAST_IP = '255.255.255.255';
const BROADCAST_MAC = 'ff:ff:ff:ff:ff:ff';
/** The link-local prefix every IPv6 interface has (RFC 4291 2.5.6). */
const LINK_LOCAL = 'fe80::/64';

type Interface = TraceRouter['interfaces'][number];

/** The first of these subnets (CIDR text) that holds the address. */
function subnetHolding(subnets: readonly string[], ip: string): string | undefined {
  return subnets.find((text) => prefixHolding(text, ip) >= 0);
}

export function destinationOf(
  lookups: DestinationLookups,
  from: Endpoint,
  req: DestinationRequest,
): Destination {
  const { to } = req;
  const net = from.networkId;
  const holder = lookups.endpointByIp(net, to);
  const router = lookups.routerOf(net);
  const own = router?.interfaces.find((i) => i.networkId === net);
  // A dstMac that is the gateway's: the caller asks for the routed path explicitly.
  const viaGateway = own !== undefined && req.dstMac?.toLowerCase() === own.mac;
  if (!viaGateway && (req.dstMac !== undefined || holder || req.arp || to === BROADCAST_IP)) {
    // With another MAC than the holder's, the packet is meant for some other host (behind a VLAN).
    const target = req.dstMac === undefined || req.dstMac.toLowerCase() === holder?.mac ? holder : undefined;
    // The limited broadcast goes to every host of the segment (a DHCP client's first request).
    const dstMac = req.dstMac ?? target?.mac ?? (to === BROADCAST_IP ? BROADCAST_MAC : undefined);
    return { ...(dstMac ? { dstMac } : {}), ...(target ? { target } : {}) };
  }
  // An allowed address (a VIP): the VM holding it answers its ARP; the intent cannot say which.
  const allowing = lookups.endpointsAllowing?.(net, to) ?? [];
  const hint =
    allowing.length > 0
      ? `endpoint${allowing.length > 1 ? 's' : ''} ${allowing.join(', ')} may hold it (allowed addresses): give dstMac, the MAC of the one that does`
      : 'give dstMac to trace to a host outside the intent (behind a VLAN binding)';
  if (!router || !own) {
    const noGateway = req.v6 ? `, and ${net} has no IPv6 gateway (no router joins it)` : '';
    throw invalid('to', `no endpoint of network ${net} has address ${to}${noGateway}; ${hint}`);
  }
  // Without an IPv6 address there, the router neither answers ND nor advertises itself: no route.
  if (req.v6 && own.ipv6 === undefined && !viaGateway) {
    throw invalid(
      'to',
      `no endpoint of network ${net} has address ${to}, and ${net} has no IPv6 gateway (router ${router.id} has no IPv6 address there); ${hint}`,
    );
  }
  const nowhere = `no endpoint of network ${net} or of the networks router ${router.id} joins has address ${to}`;
  const subnetsOf = (i: Interface): readonly string[] => (req.v6 ? (i.subnets6 ?? []) : i.subnets);
  // IPv6 goes only into the networks where the router has an IPv6 address (apps/router/ipv6.ts).
  const routesInto = (i: Interface): boolean => !req.v6 || i.ipv6 !== undefined;
  const gateway = {
    router: router.id,
    from: net,
    // IPv6: every subnet, as the router's responder checks a source against (subnet-router anycast).
    subnets: router.interfaces.flatMap((i) => (req.v6 ? [...i.subnets, ...(i.subnets6 ?? [])] : i.subnets)),
  };
  if (isRouterAddress(router, own, to, req.v6)) {
    return { dstMac: own.mac, gateway: { ...gateway, routerAddress: true } };
  }
  // A floating IP on this network: the router answers its ARP, and rewrites what it is sent to the
  // fixed address (the holder of that address is the target).
  const floating = req.v6 ? undefined : router.floatingIps?.find((f) => f.ip === to);
  if (floating && subnetHolding(own.subnets, to)) {
    const into = router.interfaces.find((i) => subnetHolding(i.subnets, floating.fixedIp));
    const ep = into && lookups.endpointByIp(into.networkId, floating.fixedIp);
    return {
      dstMac: own.mac,
      ...(ep ? { target: ep } : {}),
      gateway: { ...gateway, ...(into ? { into: into.networkId } : {}) },
    };
  }
  // fe80::/64 is on every link: the VM solicits its neighbour there as in its own subnets.
  const home = subnetHolding(req.v6 ? [...subnetsOf(own), LINK_LOCAL] : own.subnets, to);
  if (home && !viaGateway) {
    const asks = req.v6 ? 'look it up by neighbour solicitation' : 'ARP for it';
    throw invalid(
      'to',
      `${nowhere}; it is in ${net}'s own subnet ${home}, so the VM would ${asks} rather than send it to its gateway; ${hint}`,
    );
  }
  // As the flows: IPv6 routes compete only with the subnets the router routes IPv6 into.
  const route = staticRoute(router.routes, router.interfaces.filter(routesInto).flatMap(subnetsOf), to);
  if (route) {
    // A route naming its next hop's network (a link-local next hop, in no subnet) goes there.
    const hop = router.interfaces.find((i) =>
      route.networkId !== undefined
        ? i.networkId === route.networkId && routesInto(i)
        : routesInto(i) && subnetHolding(subnetsOf(i), route.nexthop),
    );
    const ep = hop && lookups.endpointByIp(hop.networkId, route.nexthop);
    return {
      dstMac: own.mac,
      ...(ep ? { target: ep } : {}),
      gateway: { ...gateway, ...(hop ? { into: hop.networkId } : {}), via: route.nexthop },
    };
  }
  for (const i of router.interfaces) {
    const ep = lookups.endpointByIp(i.networkId, to);
    // IPv6 to a network the router has no IPv6 address on: meant for it, not routed there.
    if (ep)
      return {
        dstMac: own.mac,
        target: ep,
        gateway: { ...gateway, ...(routesInto(i) ? { into: i.networkId } : {}) },
      };
  }
  // Nobody holds it: the VM still sends it to its gateway (its default route), and the trace
  // shows where the router drops it (no endpoint with that address, or no route at all).
  const into = router.interfaces.find((i) => routesInto(i) && subnetHolding(subnetsOf(i), to));
  return { dstMac: own.mac, gateway: { ...gateway, ...(into ? { into: into.networkId } : {}) } };
}

/**
 * Longest prefix first, between the `connected` subnets (of `to`'s family) and the static routes
 * (as its flows); a route of the other family never holds `to`.
 */
function staticRoute(
  routes: TraceRouter['routes'],
  connected: readonly string[],
  to: string,
): TraceRouter['routes'][number] | undefined {
  const longest = Math.max(-1, ...connected.map((c) => prefixHolding(c, to)));
  return routes
    .map((r) => ({ ...r, prefix: prefixHolding(r.destination, to) }))
    .filter((r) => r.prefix > longest)
    .sort((a, b) => b.prefix - a.prefix)[0];
}

const sameIp = (a: string, b: string): boolean => parseIp(a)?.text === parseIp(b)?.text;

/**
 * One of the router's own addresses, whose ping its flows answer in place: IPv4, any interface's
 * address; IPv6, any interface's IPv6 address, or its link-local address on the sender's network
 * (`own`), as the router's responder tells them (controller/router/router-responder.ts).
 */
function isRouterAddress(router: TraceRouter, own: Interface, to: string, v6: boolean): boolean {
  if (!v6) return router.interfaces.some((i) => i.ip === to);
  return (
    router.interfaces.some((i) => i.ipv6 !== undefined && sameIp(i.ipv6, to)) ||
    sameIp(routerLinkLocal(own.mac), to)
  );
}
