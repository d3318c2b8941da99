import { allowedHolder } from './allowed-addresses.js';
import { conflict, invalid } from './errors.js';
import type { Network, Router, RouterFloatingIp, RouterInterface, RouterRoute } from './model.js';
import { type Address, type Cidr, cidrContains, ipv4BroadcastOf, parseCidr, parseIp } from './net.js';
import { leftBehind, listed, v4 } from './router-routes.js';
import type { IntentState } from './state.js';

/**
 * A router's floating IPs: stateless 1:1 NAT. Packets reaching the router from the network holding
 * `ip` (the external one) for `ip` are sent to `fixedIp`; packets from `fixedIp` routed into that
 * network leave from `ip`, and the router answers ARP for `ip` there. The engine does this on every
 * hypervisor with no connection state, so each rewrite must be unambiguous and the router must be
 * the only one answering for `ip`. Refused here, naming `floatingIps[i].ip` / `.fixedIp`:
 * - an address that is not IPv4 (IPv6 is routed without NAT);
 * - `ip` outside the IPv4 subnets of the router's networks, not usable there (a network or
 *   broadcast address), a router interface address, a route's next hop, listed twice, an address
 *   of an endpoint of its network or one some endpoint there allows exactly (a VIP): another host
 *   would answer ARP for it;
 * - `fixedIp` outside or unusable likewise, on `ip`'s own network (no NAT within one network), a
 *   router interface address, a floating IP of the router, or the fixed address of two entries
 *   (the source rewrite would be ambiguous). No endpoint need hold it (a host behind a VLAN
 *   binding); deleting the endpoint that does is allowed (its traffic then gets host unreachable);
 * - dropping the interface on a network holding either address, unless floatingIps change too.
 * Later writes to other objects keep them valid: an endpoint may not take a floating IP as its
 * address nor allow it exactly (router-rules.ts checkEndpointIp, allowed-addresses.ts), and a
 * network's new subnets must keep every floating and fixed address on it usable (checkFloatingSubnets).
 */

/**
 * Why `a` cannot be a router-owned or routed-to address in these IPv4 subnets ("outside" when none
 * holds it), or undefined when it can. Router interface addresses too (router-rules.ts).
 */
export function misplaced(a: Address, subnets: readonly Cidr[]): string | undefined {
  const home = subnets.find((c) => cidrContains(c, a));
  if (!home) return 'outside';
  // /31 and /32 have neither a network nor a broadcast address (RFC 3021).
  if (home.prefix > 30) return undefined;
  if (a.value === home.network) return `the network address of ${home.text}`;
  if (a.value === ipv4BroadcastOf(home)) return `the broadcast address of ${home.text}`;
  return undefined;
}

type Role = 'ip' | 'fixedIp';
const ROLE: Record<Role, string> = { ip: 'the floating IP', fixedIp: 'the fixed address' };
const entryOf = (f: RouterFloatingIp, i: number): string => `floatingIps[${i}] (${f.ip} -> ${f.fixedIp})`;

/** The router after the write, and before it (the stored router, if any). */
interface After {
  state: IntentState;
  nets: readonly Network[];
  interfaces: readonly RouterInterface[];
  before: Router | undefined;
}
/** One entry's address, checked, and the network holding it. */
interface Placed {
  a: Address;
  net: Network;
}

/**
 * Checks and normalises the floating IPs of a router whose interfaces are `interfaces` on `nets`
 * (already checked, in the same order) and whose routes are `routes`: canonical text in the given
 * order, or undefined when there are none (the stored router then has no `floatingIps`). `before`
 * is the stored router, to explain an entry left behind by removing the interface it needs.
 */
export function floatingIpsOf(
  state: IntentState,
  given: readonly RouterFloatingIp[],
  nets: readonly Network[],
  interfaces: readonly RouterInterface[],
  before?: Router,
  routes: readonly RouterRoute[] = [],
): RouterFloatingIp[] | undefined {
  if (given.length === 0) return undefined;
  const after: After = { state, nets, interfaces, before };
  // Every floating address first: a fixed address may not be any of them.
  const floating: Placed[] = [];
  for (const [i, f] of given.entries()) floating.push(floatingOf(after, f, i, floating, routes));
  const fixed: Placed[] = [];
  for (const [i, f] of given.entries()) fixed.push(fixedOf(after, f, i, floating, fixed));
  // A network on both sides (A holds B's host's floating IP and B A's): each side's drop of its
  // fixed addresses (apps/router/floating.ts) would take the other's answers.
  for (const [i, x] of fixed.entries()) {
    const j = floating.findIndex((p) => p.net.id === x.net.id);
    if (j >= 0) {
      throw invalid(
        `floatingIps[${i}].fixedIp`,
        `${x.a.text} is in network '${x.net.id}', the external network of floatingIps[${j}] (${floating[j]!.a.text}); a network is either the external or the internal side of a router's floating IPs`,
      );
    }
  }
  const networks = nets.map((n) => ({ id: n.id, subnets: v4(n) }));
  const inside = routeInside(
    floating.map((p) => ({ id: p.net.id, subnets: v4(p.net) })),
    routes,
    networks,
  );
  if (inside) {
    throw invalid(
      `routes[${inside.k}].destination`,
      `${inside.dest} lies inside ${inside.subnet} of network '${inside.ext}', which holds floating IPs, and goes via network '${inside.via}': the fixed addresses' answers to hosts there would leave untranslated; route it via a next hop on '${inside.ext}' or move the floating IPs`,
    );
  }
  for (const [i, x] of fixed.entries()) {
    const ext = floating[i]!.net.id;
    const home = v4(x.net).find((c) => cidrContains(c, x.a))!;
    for (const [k, r] of routes.entries()) {
      const dest = parseCidr(r.destination);
      const hop = parseIp(r.nexthop);
      if (typeof dest === 'string' || dest.family !== 4 || !hop || dest.prefix <= home.prefix) continue;
      if (!cidrContains(dest, x.a) || hopNetwork(r, hop, networks) !== ext) continue;
      throw invalid(
        `floatingIps[${i}].fixedIp`,
        `${x.a.text} lies in routes[${k}] (${dest.text}) via network '${ext}', where its floating IP is: what is sent to the floating IP would go back out there; route ${dest.text} elsewhere or pick another fixed address`,
      );
    }
  }
  return floating.map((p, i) => ({ ip: p.a.text, fixedIp: fixed[i]!.a.text }));
}

/** A network of the router with its IPv4 subnets. */
interface Subnets {
  id: string;
  subnets: readonly Cidr[];
}

/** The network a route's next hop is on: the one it names, else the one whose subnets hold it. */
const hopNetwork = (r: RouterRoute, hop: Address, networks: readonly Subnets[]): string | undefined =>
  r.networkId ?? networks.find((n) => n.subnets.some((c) => cidrContains(c, hop)))?.id;

/**
 * The first static route to part of an external network's subnets (more specific than the subnet)
 * via another network: answers of a fixed address to hosts there would leave through it
 * untranslated (the source rewrite rides on the routes into the external network only), while
 * those hosts reach it at its floating IP. `networks`: the router's, with their IPv4 subnets.
 */
function routeInside(
  externals: readonly Subnets[],
  routes: readonly RouterRoute[],
  networks: readonly Subnets[],
): { k: number; dest: string; subnet: string; ext: string; via: string | undefined } | undefined {
  for (const [k, r] of routes.entries()) {
    const dest = parseCidr(r.destination);
    const hop = parseIp(r.nexthop);
    if (typeof dest === 'string' || dest.family !== 4 || !hop) continue;
    const via = hopNetwork(r, hop, networks);
    for (const ext of externals) {
      if (via === ext.id) continue;
      const start: Address = { family: 4, value: dest.network, text: '' };
      const inside = ext.subnets.find((c) => dest.prefix > c.prefix && cidrContains(c, start));
      if (inside) return { k, dest: dest.text, subnet: inside.text, ext: ext.id, via };
    }
  }
  return undefined;
}

/** Entry i's floating address: the router's own on its network, so no other host may claim it. */
function floatingOf(
  after: After,
  f: RouterFloatingIp,
  i: number,
  earlier: readonly Placed[],
  routes: readonly RouterRoute[],
): Placed {
  const field = `floatingIps[${i}].ip`;
  const p = placed(after, f, i, 'ip');
  const { a, net } = p;
  const twice = earlier.findIndex((x) => x.a.text === a.text);
  if (twice >= 0) throw invalid(field, `${a.text} is already floatingIps[${twice}].ip; list each once`);
  const hop = routes.findIndex((r) => r.nexthop === a.text);
  if (hop >= 0) {
    throw invalid(
      field,
      `${a.text} is the next hop of routes[${hop}] (${routes[hop]!.destination}); the router answers for a floating IP itself, it cannot route via it`,
    );
  }
  const holder = after.state.ips.get(net.id)?.get(a.text);
  if (holder !== undefined) {
    throw conflict(field, `${a.text} is already used by endpoint '${holder}' in network '${net.id}'`);
  }
  const vip = allowedHolder(after.state, net.id, a.text);
  if (vip !== undefined) {
    throw conflict(
      field,
      `${a.text} is an allowed address (a VIP) of endpoint '${vip}' in network '${net.id}'; the router answers ARP for a floating IP`,
    );
  }
  return p;
}

/** Entry i's fixed address: a host behind the router, on another network than its floating IP. */
function fixedOf(
  after: After,
  f: RouterFloatingIp,
  i: number,
  floating: readonly Placed[],
  earlier: readonly Placed[],
): Placed {
  const field = `floatingIps[${i}].fixedIp`;
  const { a, net } = placed(after, f, i, 'fixedIp');
  const ext = floating[i]!;
  if (net.id === ext.net.id) {
    throw invalid(
      field,
      `${a.text} is in network '${net.id}' like the floating IP ${ext.a.text}; the router does not NAT within one network, the fixed address must be on another of its networks`,
    );
  }
  const also = floating.findIndex((x) => x.a.text === a.text);
  if (also >= 0) {
    throw invalid(
      field,
      `${a.text} is floatingIps[${also}].ip, a floating IP of this router; a fixed address is a host behind it`,
    );
  }
  const twice = earlier.findIndex((x) => x.a.text === a.text);
  if (twice >= 0) {
    throw invalid(
      field,
      `${a.text} is already floatingIps[${twice}].fixedIp; one floating IP per fixed address (the source rewrite must be unambiguous)`,
    );
  }
  return { a, net };
}

/**
 * One address of entry i: IPv4, usable in an IPv4 subnet of one of the router's networks after
 * the write, and not a router interface address; with the network holding it.
 */
function placed(
  { state, nets, interfaces, before }: After,
  f: RouterFloatingIp,
  i: number,
  role: Role,
): Placed {
  const field = `floatingIps[${i}].${role}`;
  const text = f[role];
  const a = parseIp(text);
  if (!a) throw invalid(field, `'${text}' is not an IPv4 address`);
  if (a.family !== 4) {
    throw invalid(field, `${a.text} is IPv6; floating IPs are IPv4 (IPv6 is routed without NAT)`);
  }
  const net = nets.find((n) => v4(n).some((c) => cidrContains(c, a)));
  if (!net) {
    const left = leftBehind(state, a, nets, before);
    if (left) {
      throw invalid(
        'interfaces',
        `network '${left}' holds ${a.text}, ${ROLE[role]} of ${entryOf(f, i)}; keep its interface or change floatingIps in the same write`,
      );
    }
    throw invalid(
      field,
      `${a.text} is outside the IPv4 subnets of the router's networks (${listed(nets.flatMap(v4))}); ${ROLE[role]} must be on one of them`,
    );
  }
  const why = misplaced(a, v4(net));
  if (why) throw invalid(field, `${a.text} is ${why}, not a usable address`);
  const own = interfaces.find((x) => x.ip === a.text);
  if (own) {
    throw invalid(field, `${a.text} is this router's own address on network '${own.networkId}'`);
  }
  return { a, net };
}

/** The floating IP entry of `router` whose `ip` is `ip` (canonical IPv4 text) on network `networkId`. */
export function floatingIpOn(
  state: IntentState,
  router: Router,
  networkId: string,
  ip: string,
): RouterFloatingIp | undefined {
  const f = router.floatingIps?.find((x) => x.ip === ip);
  const net = f && state.get('network', networkId);
  const a = parseIp(ip);
  return net && a && v4(net).some((c) => cidrContains(c, a)) ? f : undefined;
}

/**
 * Network `networkId`'s new subnets (PUT or PATCH) against its router's floating IPs: each floating
 * or fixed address on the network now must stay inside its IPv4 subnets and usable there.
 */
export function checkFloatingSubnets(
  state: IntentState,
  router: Router,
  networkId: string,
  subnets: readonly Cidr[],
): void {
  const net = state.get('network', networkId);
  if (!net || !router.floatingIps?.length) return;
  const now = v4(net);
  const mine = subnets.filter((c) => c.family === 4);
  for (const [i, f] of router.floatingIps.entries()) {
    for (const role of ['ip', 'fixedIp'] as const) {
      const a = parseIp(f[role]);
      if (!a || !now.some((c) => cidrContains(c, a))) continue;
      const why = misplaced(a, mine);
      if (!why) continue;
      const what = why === 'outside' ? `outside the IPv4 subnets (${listed(mine)})` : why;
      throw invalid(
        'subnets',
        `${a.text}, ${ROLE[role]} of ${entryOf(f, i)} of router '${router.id}', would be ${what}; change the router's floatingIps first`,
      );
    }
  }
  // An external network's new subnets may not come to hold a route via another network.
  if (!router.floatingIps.some((f) => mine.some((c) => cidrContains(c, parseIp(f.ip)!)))) return;
  const networks = router.interfaces.map(({ networkId: id }) => {
    const n = id === networkId ? undefined : state.get('network', id);
    return { id, subnets: id === networkId ? mine : n ? v4(n) : [] };
  });
  const inside = routeInside([{ id: networkId, subnets: mine }], router.routes, networks);
  if (inside) {
    throw invalid(
      'subnets',
      `${inside.subnet} would hold routes[${inside.k}] (${inside.dest}) of router '${router.id}', which goes via network '${inside.via}', while this network holds its floating IPs: the fixed addresses' answers to hosts there would leave untranslated; change the route first`,
    );
  }
}
