import { invalid } from '../intent/errors.js';
import type { Endpoint } from '../intent/model.js';
import { prefixHolding } from '../intent/net.js';
import type { TraceTarget } from './verdict.js';

/**
 * Where a VM sends a probe, as its own stack would decide: to the endpoint of its network that
 * holds the address (the MAC its ARP would get), or, on a network with a router, to its gateway
 * (the router's MAC there) for any IPv4 address outside its own subnets, the way a default route
 * works. Which endpoint the routed probe is meant for is looked up in the router's other networks.
 * Throws IntentError naming `to` when the VM would have nowhere to send it. Pure.
 */

/** A router as the trace needs it: every interface, with its network's IPv4 subnets. */
export interface TraceRouter {
  id: string;
  interfaces: ReadonlyArray<{ networkId: string; ip: string; mac: string; subnets: readonly string[] }>;
  /** Static routes: destination CIDR -> next hop (an endpoint address in one of its networks). */
  routes: ReadonlyArray<{ destination: string; nexthop: string }>;
}

export interface DestinationLookups {
  endpointByIp(networkId: string, ip: string): Endpoint | undefined;
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
  const hint = 'give dstMac to trace to a host outside the intent (behind a VLAN binding)';
  if (!router || !own) throw invalid('to', `no endpoint of network ${net} has address ${to}; ${hint}`);
  const nowhere = `no endpoint of network ${net} or of the networks router ${router.id} joins has address ${to}`;
  if (req.v6) throw invalid('to', `${nowhere} (routers route IPv4 only); ${hint}`);
  const gateway = { router: router.id, from: net, subnets: router.interfaces.flatMap((i) => i.subnets) };
  if (router.interfaces.some((i) => i.ip === to)) {
    return { dstMac: own.mac, gateway: { ...gateway, routerAddress: true } };
  }
  const home = subnetHolding(own.subnets, to);
  if (home && !viaGateway) {
    throw invalid(
      'to',
      `${nowhere}; it is in ${net}'s own subnet ${home}, so the VM would ARP for it rather than send it to its gateway; ${hint}`,
    );
  }
  // Longest prefix first, between the subnets of its networks and its static routes (as its flows).
  const connected = Math.max(
    -1,
    ...router.interfaces.flatMap((i) => i.subnets).map((c) => prefixHolding(c, to)),
  );
  const route = router.routes
    .map((r) => ({ ...r, prefix: prefixHolding(r.destination, to) }))
    .filter((r) => r.prefix > connected)
    .sort((a, b) => b.prefix - a.prefix)[0];
  if (route) {
    const hop = router.interfaces.find((i) => subnetHolding(i.subnets, route.nexthop));
    const ep = hop && lookups.endpointByIp(hop.networkId, route.nexthop);
    return {
      dstMac: own.mac,
      ...(ep ? { target: ep } : {}),
      gateway: { ...gateway, ...(hop ? { into: hop.networkId } : {}), via: route.nexthop },
    };
  }
  for (const i of router.interfaces) {
    const ep = lookups.endpointByIp(i.networkId, to);
    if (ep) return { dstMac: own.mac, target: ep, gateway: { ...gateway, into: i.networkId } };
  }
  // Nobody holds it: the VM still sends it to its gateway (its default route), and the trace
  // shows where the router drops it (no endpoint with that address, or no route at all).
  const into = router.interfaces.find((i) => subnetHolding(i.subnets, to));
  return { dstMac: own.mac, gateway: { ...gateway, ...(into ? { into: into.networkId } : {}) } };
}
