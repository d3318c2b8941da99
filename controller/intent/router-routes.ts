import { formatIpv4 } from '../../southbound/openflow/codec/values.js';
import { conflict, invalid } from './errors.js';
import type { Endpoint, Network, Router, RouterInterface, RouterRoute } from './model.js';
import { routerLinkLocal } from './model-router.js';
import {
  type Address,
  type Cidr,
  cidrContains,
  type Family,
  formatIpv6,
  isLinkLocal6,
  parseCidr,
  parseIp,
} from './net.js';
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
 *
 * IPv6 routes (an IPv6 destination, `::/0` the default route) go via an IPv6 next hop in an IPv6
 * subnet of a network where the router has an IPv6 address (its interface's `ipv6`: IPv6 routes
 * only into those): an endpoint's, protected as an IPv4 one is, or any other on-link address,
 * whose MAC the router resolves by neighbour solicitation. A link-local next hop (fe80::/10, as
 * physical routers announce themselves) is on every link: the route names its network
 * (`networkId`), where the router must have an IPv6 address. Any route may name its next hop's
 * network; it must then be the one holding it.
 */

/** A network's IPv4 subnets: the only ones an interface's IPv4 address and IPv4 routes use. */
export const v4 = (net: Network): Cidr[] => subnetsOf(net).filter((c) => c.family === 4);
/** A network's IPv6 subnets. */
export const v6 = (net: Network): Cidr[] => subnetsOf(net).filter((c) => c.family === 6);
export const listed = (cidrs: readonly Cidr[]): string => cidrs.map((c) => c.text).join(', ') || 'none';

const v4Text = (v: bigint): string => formatIpv4(Number(v));
const sameCidr = (a: Cidr, b: Cidr): boolean =>
  a.family === b.family && a.network === b.network && a.prefix === b.prefix;
const familyName = (f: Family): string => (f === 4 ? 'IPv4' : 'IPv6');

/**
 * The destination as an IPv4 or IPv6 CIDR. Host bits set (10.1.2.3/16, fd00::1/64) are refused, as
 * for subnets: it is usually a typo, and guessing 10.1.0.0/16 could route far more than was meant.
 * The message says which network address the CIDR would have.
 */
function destinationOf(text: string, field: string): Cidr {
  const c = parseCidr(text);
  if (typeof c !== 'string') return c;
  const slash = text.indexOf('/');
  const a = slash < 0 ? undefined : parseIp(text.slice(0, slash));
  const len = text.slice(slash + 1);
  const bits = a?.family === 6 ? 128 : 32;
  // A prefix length parseCidr took (so only the host bits are wrong); IPv4 as it always was.
  const digits = a?.family === 6 ? /^\d{1,3}$/ : /^\d{1,2}$/;
  if (a && digits.test(len) && Number(len) <= bits) {
    const hostBits = (1n << BigInt(bits - Number(len))) - 1n;
    const network = a.value & ~hostBits;
    const networkText = a.family === 6 ? formatIpv6(network) : v4Text(network);
    throw invalid(
      field,
      `'${text}' has host bits set; write the network address ${networkText}/${Number(len)}`,
    );
  }
  throw invalid(field, c);
}

/** A subnet a router routes into, and the network it is of. */
interface Connected {
  cidr: Cidr;
  net: Network;
}

/**
 * Checks and normalises the routes of a router whose interfaces are `interfaces` on `nets` (already
 * checked, in the same order). `before` is the stored router, to explain a route left behind by
 * removing the interface (or, IPv6, the interface's IPv6 address) its next hop needs.
 */
export function routesOf(
  state: IntentState,
  given: readonly RouterRoute[],
  nets: readonly Network[],
  interfaces: readonly RouterInterface[],
  before?: Router,
): RouterRoute[] {
  const connected = nets.flatMap((net) => v4(net).map((cidr) => ({ cidr, net })));
  // IPv6 routes only into the networks where the router has an IPv6 address (apps/router/ipv6.ts).
  const connected6 = nets.flatMap((net, j) =>
    interfaces[j]?.ipv6 === undefined ? [] : v6(net).map((cidr) => ({ cidr, net })),
  );
  const out: RouterRoute[] = [];
  for (const [i, r] of given.entries()) {
    const at = (f: string) => `routes[${i}].${f}`;
    const dest = destinationOf(r.destination, at('destination'));
    const twice = out.findIndex((o) => o.destination === dest.text);
    if (twice >= 0) {
      throw invalid(at('destination'), `${dest.text} is already routes[${twice}]; one route per destination`);
    }
    const same = (dest.family === 4 ? connected : connected6).find((x) => sameCidr(x.cidr, dest));
    if (same) {
      throw invalid(
        at('destination'),
        `${dest.text} is the subnet of network '${same.net.id}': connected subnets are routed already`,
      );
    }
    const a = nextHopOf(r.nexthop, dest, at('nexthop'));
    const route = { i, dest, a };
    const home = isLinkLocal6(a)
      ? linkLocalHop(route, r.networkId, { nets, interfaces }, before)
      : a.family === 6
        ? nextHop6(state, route, { nets, interfaces, connected6 }, before)
        : nextHop4(state, route, { nets, interfaces, connected }, before);
    if (r.networkId !== undefined && r.networkId !== home) {
      throw invalid(at('networkId'), `${a.text} is on network '${home}', not '${r.networkId}'`);
    }
    out.push({
      destination: dest.text,
      nexthop: a.text,
      ...(r.networkId === undefined ? {} : { networkId: r.networkId }),
    });
  }
  return out;
}

/** The next hop's address, of the destination's family. */
function nextHopOf(text: string, dest: Cidr, field: string): Address {
  const a = parseIp(text);
  if (!a) throw invalid(field, `'${text}' is not an ${familyName(dest.family)} address`);
  if (a.family !== dest.family) {
    throw invalid(
      field,
      `${a.text} is ${familyName(a.family)} but the destination ${dest.text} is ${familyName(dest.family)}; a next hop is of its destination's family`,
    );
  }
  return a;
}

interface RouteAt {
  i: number;
  dest: Cidr;
  a: Address;
}
interface RouterAfter {
  nets: readonly Network[];
  interfaces: readonly RouterInterface[];
}

/**
 * An IPv4 next hop: on the router's networks, not its own address; no endpoint need hold it (ARP).
 * Returns the network holding it.
 */
function nextHop4(
  state: IntentState,
  { i, dest, a }: RouteAt,
  after: RouterAfter & { connected: readonly Connected[] },
  before: Router | undefined,
): string {
  const home = after.connected.find((x) => cidrContains(x.cidr, a));
  if (!home) {
    const left = leftBehind(state, a, after.nets, before);
    if (left) throw keepInterface(left, a, i, dest);
    throw invalid(
      `routes[${i}].nexthop`,
      `${a.text} is outside the IPv4 subnets of the router's networks (${listed(after.connected.map((x) => x.cidr))}); a next hop is on one of them`,
    );
  }
  const own = after.interfaces.find((x) => x.ip === a.text);
  if (own) throw ownAddress(a, own, i);
  // No endpoint holding it is fine: an on-link host or physical router, its MAC learned by ARP.
  return home.net.id;
}

/**
 * An IPv6 next hop: in an IPv6 subnet of a network where the router has an IPv6 address, not one
 * of its own addresses; no endpoint need hold it (neighbour solicitation finds its MAC). Returns
 * the network holding it.
 */
function nextHop6(
  state: IntentState,
  { i, dest, a }: RouteAt,
  after: RouterAfter & { connected6: readonly Connected[] },
  before: Router | undefined,
): string {
  const field = `routes[${i}].nexthop`;
  const home = after.connected6.find((x) => cidrContains(x.cidr, a));
  if (!home) {
    const left = leftBehind6(state, a, after, before);
    if (left?.gone) throw keepInterface(left.networkId, a, i, dest);
    if (left) {
      throw invalid(
        'interfaces',
        `network '${left.networkId}' holds ${a.text}, the next hop of routes[${i}] (${dest.text}), and the router's interface there would have no IPv6 address; keep its ipv6 or change the route in the same write`,
      );
    }
    const j = after.nets.findIndex(
      (n, k) => after.interfaces[k]?.ipv6 === undefined && v6(n).some((c) => cidrContains(c, a)),
    );
    if (j >= 0) {
      throw invalid(
        field,
        `${a.text} is in network '${after.nets[j]!.id}', where the router has no IPv6 address (interfaces[${j}].ipv6); IPv6 routes go only via networks where it has one`,
      );
    }
    throw invalid(
      field,
      `${a.text} is outside the IPv6 subnets of the router's networks with an IPv6 address (${listed(after.connected6.map((x) => x.cidr))}); a next hop is on one of them`,
    );
  }
  const own = after.interfaces.find((x) => x.ipv6 === a.text);
  if (own) throw ownAddress(a, own, i);
  return home.net.id;
}

/**
 * A link-local IPv6 next hop: on the network the route names, one of the router's where it has an
 * IPv6 address (neighbour solicitation goes out there), and not the router's own link-local address
 * there. Returns that network.
 */
function linkLocalHop(
  { i, dest, a }: RouteAt,
  networkId: string | undefined,
  after: RouterAfter,
  before: Router | undefined,
): string {
  const field = `routes[${i}].networkId`;
  if (networkId === undefined) {
    throw invalid(field, `${a.text} is link-local (fe80::/10), on every link: name the network it is on`);
  }
  const j = after.nets.findIndex((n) => n.id === networkId);
  const was = before?.interfaces.find((x) => x.networkId === networkId);
  if (j < 0) {
    // Keeping the interface helps only where it had an IPv6 address to solicit from.
    if (was?.ipv6 !== undefined) throw keepInterface(networkId, a, i, dest);
    throw invalid(field, `network '${networkId}' is not one of the router's networks (interfaces)`);
  }
  const iface = after.interfaces[j]!;
  if (iface.ipv6 === undefined) {
    if (was?.ipv6 !== undefined) {
      throw invalid(
        'interfaces',
        `network '${networkId}' holds ${a.text}, the next hop of routes[${i}] (${dest.text}), and the router's interface there would have no IPv6 address; keep its ipv6 or change the route in the same write`,
      );
    }
    throw invalid(
      field,
      `the router has no IPv6 address on network '${networkId}' (interfaces[${j}].ipv6); IPv6 routes go only via networks where it has one`,
    );
  }
  if (routerLinkLocal(iface.mac.toLowerCase()) === a.text) throw ownAddress(a, iface, i);
  // Its link-local address on another network: no host on this one holds it (router MACs are weft's).
  const elsewhere = after.interfaces.find((x) => routerLinkLocal(x.mac.toLowerCase()) === a.text);
  if (elsewhere) throw ownAddress(a, elsewhere, i);
  return networkId;
}

const keepInterface = (networkId: string, a: Address, i: number, dest: Cidr) =>
  invalid(
    'interfaces',
    `network '${networkId}' holds ${a.text}, the next hop of routes[${i}] (${dest.text}); keep its interface or change the route in the same write`,
  );

const ownAddress = (a: Address, own: RouterInterface, i: number) =>
  invalid(
    `routes[${i}].nexthop`,
    `${a.text} is this router's own address on network '${own.networkId}'; a next hop is another host`,
  );

/** The network the stored router was on, but no longer is, whose IPv4 subnets hold `a`. */
export function leftBehind(
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
 * The network where the stored router had an IPv6 address, whose IPv6 subnets hold `a`, and where
 * it no longer has one: `gone` when the interface goes, else it stays without its IPv6 address.
 */
function leftBehind6(
  state: IntentState,
  a: Address,
  { nets, interfaces }: RouterAfter,
  before: Router | undefined,
): { networkId: string; gone: boolean } | undefined {
  for (const itf of before?.interfaces ?? []) {
    if (itf.ipv6 === undefined) continue;
    const j = nets.findIndex((n) => n.id === itf.networkId);
    if (j >= 0 && interfaces[j]?.ipv6 !== undefined) continue;
    const net = state.get('network', itf.networkId);
    if (net && v6(net).some((c) => cidrContains(c, a))) return { networkId: net.id, gone: j < 0 };
  }
  return undefined;
}

/**
 * Network `networkId`'s new subnets against its router's routes: a subnet may not become a
 * route's destination (connected and static routes for one prefix would be ambiguous; IPv6
 * subnets count where the router has an IPv6 address on the network), and a next hop may not be
 * left outside the subnets of its family the router routes into. An endpoint next hop never is
 * (its address must stay inside its network's subnets, rules.ts, and a network left without
 * subnets leaves the router interface outside, checkNetworkSubnets); any other is checked here.
 */
export function checkRouteSubnets(
  state: IntentState,
  router: Router,
  networkId: string,
  subnets: readonly Cidr[],
): void {
  const routed = (family: Family) =>
    router.interfaces.flatMap((itf) => {
      if (family === 6 && itf.ipv6 === undefined) return [];
      if (itf.networkId === networkId) return subnets.filter((c) => c.family === family);
      const net = state.get('network', itf.networkId);
      return net ? (family === 4 ? v4(net) : v6(net)) : [];
    });
  const connected = { 4: routed(4), 6: routed(6) };
  const self = router.interfaces.find((itf) => itf.networkId === networkId);
  const mine = subnets.filter((c) => c.family === 4 || self?.ipv6 !== undefined);
  for (const [i, r] of router.routes.entries()) {
    const dest = parseCidr(r.destination) as Cidr;
    const same = mine.find((c) => sameCidr(c, dest));
    if (same) {
      throw invalid(
        'subnets',
        `${same.text} is the destination of routes[${i}] of router '${router.id}' (via ${r.nexthop}); remove that route first`,
      );
    }
    const hop = parseIp(r.nexthop) as Address;
    // On its named network whatever the subnets (the router's IPv6 address there is checked apart).
    if (isLinkLocal6(hop)) continue;
    const theirs = connected[hop.family];
    if (!theirs.some((c) => cidrContains(c, hop))) {
      const which = hop.family === 4 ? 'IPv4 subnets' : 'IPv6 subnets';
      const where = hop.family === 4 ? "the router's networks" : "the router's networks with an IPv6 address";
      throw invalid(
        'subnets',
        `${r.nexthop}, the next hop of routes[${i}] (${r.destination}) of router '${router.id}', would be outside the ${which} of ${where} (${listed(theirs)}); change that route first`,
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
