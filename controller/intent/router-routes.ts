import { formatIpv4 } from '../../southbound/openflow/codec/values.js';
import { conflict, invalid } from './errors.js';
import type { Endpoint, Network, Router, RouterInterface, RouterRoute } from './model.js';
import { type Address, type Cidr, cidrContains, parseCidr, parseIp } from './net.js';
import { subnetsOf } from './rule-env.js';
import type { IntentState } from './state.js';

/**
 * A router's static routes: "packets for `destination` go to `nexthop`", an address on one of the
 * router's networks. A next hop is either an endpoint (an appliance VM: NAT, firewall, VPN; its MAC
 * comes from the intent, and it keeps the address while the route uses it: the endpoint may not
 * drop the address (update) nor go (delete)), or any other on-link address (a host behind a VLAN
 * binding of that network, a physical router), whose MAC the router resolves by ARP. Routes are
 * checked when written, and a network subnet change may not leave a next hop outside the router's
 * networks. Throws IntentError (invalid / conflict) naming the field.
 */

/** A network's IPv4 subnets: the only ones routers route. */
export const v4 = (net: Network): Cidr[] => subnetsOf(net).filter((c) => c.family === 4);
export const listed = (cidrs: readonly Cidr[]): string => cidrs.map((c) => c.text).join(', ') || 'none';

const v4Text = (v: bigint): string => formatIpv4(Number(v));
const sameCidr = (a: Cidr, b: Cidr): boolean => a.network === b.network && a.prefix === b.prefix;

/**
 * The destination as an IPv4 CIDR. Host bits set (10.1.2.3/16) are refused, as for subnets: it is
 * usually a typo, and guessing 10.1.0.0/16 could route far more than was meant. The message says
 * which network address the CIDR would have.
 */
function destinationOf(text: string, field: string): Cidr {
  const c = parseCidr(text);
  if (typeof c !== 'string') {
    if (c.family !== 4) throw invalid(field, `${c.text} is IPv6: routers route IPv4 only`);
    return c;
  }
  const slash = text.indexOf('/');
  const a = slash < 0 ? undefined : parseIp(text.slice(0, slash));
  if (a?.family === 6) throw invalid(field, `'${text}' is IPv6: routers route IPv4 only`);
  const len = text.slice(slash + 1);
  if (a && /^\d{1,2}$/.test(len) && Number(len) <= 32) {
    const hostBits = (1n << BigInt(32 - Number(len))) - 1n;
    throw invalid(
      field,
      `'${text}' has host bits set; write the network address ${v4Text(a.value & ~hostBits)}/${Number(len)}`,
    );
  }
  throw invalid(field, c);
}

/**
 * Checks and normalises the routes of a router whose interfaces are `interfaces` on `nets` (already
 * checked, in the same order). `before` is the stored router, to explain a route left behind by
 * removing the interface its next hop needs.
 */
export function routesOf(
  state: IntentState,
  given: readonly RouterRoute[],
  nets: readonly Network[],
  interfaces: readonly RouterInterface[],
  before?: Router,
): RouterRoute[] {
  const connected = nets.flatMap((net) => v4(net).map((cidr) => ({ cidr, net })));
  const out: RouterRoute[] = [];
  for (const [i, r] of given.entries()) {
    const at = (f: string) => `routes[${i}].${f}`;
    const dest = destinationOf(r.destination, at('destination'));
    const twice = out.findIndex((o) => o.destination === dest.text);
    if (twice >= 0) {
      throw invalid(at('destination'), `${dest.text} is already routes[${twice}]; one route per destination`);
    }
    const same = connected.find((x) => sameCidr(x.cidr, dest));
    if (same) {
      throw invalid(
        at('destination'),
        `${dest.text} is the subnet of network '${same.net.id}': connected subnets are routed already`,
      );
    }
    const a = parseIp(r.nexthop);
    if (a?.family !== 4) {
      const why = a ? `${a.text} is IPv6: routers route IPv4 only` : `'${r.nexthop}' is not an IPv4 address`;
      throw invalid(at('nexthop'), why);
    }
    const home = connected.find((x) => cidrContains(x.cidr, a));
    if (!home) {
      const left = leftBehind(state, a, nets, before);
      if (left) {
        throw invalid(
          'interfaces',
          `network '${left}' holds ${a.text}, the next hop of routes[${i}] (${dest.text}); keep its interface or change the route in the same write`,
        );
      }
      throw invalid(
        at('nexthop'),
        `${a.text} is outside the IPv4 subnets of the router's networks (${listed(connected.map((x) => x.cidr))}); a next hop is on one of them`,
      );
    }
    const own = interfaces.find((x) => x.ip === a.text);
    if (own) {
      throw invalid(
        at('nexthop'),
        `${a.text} is this router's own address on network '${own.networkId}'; a next hop is another host`,
      );
    }
    // No endpoint holding it is fine: an on-link host or physical router, its MAC learned by ARP.
    out.push({ destination: dest.text, nexthop: a.text });
  }
  return out;
}

/** The network the stored router was on, but no longer is, whose IPv4 subnets hold `a`. */
function leftBehind(
  state: IntentState,
  a: Address,
  nets: readonly Network[],
  before: Router | undefined,
): string | undefined {
  for (const itf of before?.interfaces ?? []) {
    if (nets.some((n) => n.id === itf.networkId)) continue;
    const net = state.get('network', itf.networkId);
    if (net && v4(net).some((c) => cidrContains(c, a))) return net.id;
  }
  return undefined;
}

/**
 * Network `networkId`'s new IPv4 subnets against its router's routes: a subnet may not become a
 * route's destination (connected and static routes for one prefix would be ambiguous), and a next
 * hop may not be left outside the IPv4 subnets of the router's networks. An endpoint next hop
 * never is (its address must stay inside its network's subnets, rules.ts, and a network left
 * without subnets leaves the router interface outside, checkNetworkSubnets); any other is
 * checked here.
 */
export function checkRouteSubnets(
  state: IntentState,
  router: Router,
  networkId: string,
  subnets: readonly Cidr[],
): void {
  const connected = router.interfaces.flatMap((itf) => {
    if (itf.networkId === networkId) return subnets.filter((c) => c.family === 4);
    const net = state.get('network', itf.networkId);
    return net ? v4(net) : [];
  });
  for (const [i, r] of router.routes.entries()) {
    const dest = parseCidr(r.destination) as Cidr;
    const same = subnets.find((c) => c.family === 4 && sameCidr(c, dest));
    if (same) {
      throw invalid(
        'subnets',
        `${same.text} is the destination of routes[${i}] of router '${router.id}' (via ${r.nexthop}); remove that route first`,
      );
    }
    const hop = parseIp(r.nexthop) as Address;
    if (!connected.some((c) => cidrContains(c, hop))) {
      throw invalid(
        'subnets',
        `${r.nexthop}, the next hop of routes[${i}] (${r.destination}) of router '${router.id}', would be outside the IPv4 subnets of the router's networks (${listed(connected)}); change that route first`,
      );
    }
  }
}

/** The routes whose next hop `ep` holds (on the router of its network: a network has at most one). */
export function nextHopsOf(state: IntentState, ep: Endpoint): Array<{ router: Router; route: RouterRoute }> {
  const id = state.routerOfNetwork.get(ep.networkId);
  const router = id === undefined ? undefined : state.get('router', id);
  if (!router) return [];
  return router.routes.filter((r) => ep.ips.includes(r.nexthop)).map((route) => ({ router, route }));
}

const inUse = (ep: Endpoint, router: Router, route: RouterRoute): string =>
  `endpoint '${ep.id}' is the next hop of router '${router.id}' (route ${route.destination}); change the route first`;

/** An endpoint PUT/PATCH to `ips` may not drop an address a route sends traffic to. */
export function checkNextHopsKept(state: IntentState, before: Endpoint, ips: readonly string[]): void {
  for (const { router, route } of nextHopsOf(state, before)) {
    if (!ips.includes(route.nexthop)) {
      throw conflict('ips', inUse(before, router, route), { router: router.id, route: route.destination });
    }
  }
}

/**
 * Deleting `ep` (the store keys `deleted` go with it): refused while a route points at an address
 * of it that no remaining endpoint holds, unless the route's router is deleted too. At the end of
 * a batch `ep` is gone already, and an endpoint written after the delete may hold the address.
 */
export function checkNextHopsGone(state: IntentState, ep: Endpoint, deleted: ReadonlySet<string>): void {
  for (const { router, route } of nextHopsOf(state, ep)) {
    if (deleted.has(`router/${router.id}`)) continue;
    const holder = state.ips.get(ep.networkId)?.get(route.nexthop);
    if (holder !== undefined && !deleted.has(`endpoint/${holder}`)) continue;
    throw conflict(undefined, inUse(ep, router, route), { router: router.id, route: route.destination });
  }
}
