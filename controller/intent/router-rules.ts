import { formatIpv4 } from '../../southbound/openflow/codec/values.js';
import { allowedHolder } from './allowed-addresses.js';
import { conflict, invalid } from './errors.js';
import {
  type Network,
  ROUTER_MAC_PREFIX,
  type Router,
  type RouterFloatingIp,
  type RouterInterface,
  type RouterInterfaceInput,
  type RouterRoute,
  type RouterSnatInput,
  routerMac,
} from './model.js';
import { type Address, type Cidr, cidrsOverlap, parseIp } from './net.js';
import { checkFloatingSubnets, floatingIpOn, floatingIpsOf, misplaced } from './router-floating.js';
import { checkIpv6Subnets, ipv6Of } from './router-ipv6.js';
import { checkRouteSubnets, listed, routesOf, v4 } from './router-routes.js';
import { checkSnatSubnets, snatIpOn, snatOf } from './router-snat.js';
import {
  type Draft,
  type Fields,
  immutable,
  mustRef,
  type RuleEnv,
  subnetsOf,
  tenantOf,
} from './rule-env.js';
import type { IntentState } from './state.js';

/**
 * The rules of routers, and what they ask of networks and endpoints. A router joins some of its
 * tenant's networks; on each it owns one IPv4 address (the VMs' default gateway), optionally one
 * IPv6 address (./router-ipv6.ts), and a MAC derived from the network's VNI. An interface sent
 * without an address keeps the one it has, or when new takes the network's conventional gateway
 * (the first host address of its first IPv4 subnet; likewise for IPv6 when the network has one).
 * The engine routes between the joined networks on every hypervisor, so whatever would make
 * "which network holds this address" ambiguous is refused here: a network on two routers,
 * overlapping subnets on one router, a router address also held by an endpoint.
 * Static routes to appliance VMs: ./router-routes.ts; floating IPs (1:1 NAT): ./router-floating.ts;
 * SNAT (many-to-one): ./router-snat.ts.
 * Throws IntentError (invalid / conflict) naming the field.
 */

/**
 * A subnet's conventional gateway, the default router address: its first host address, that is
 * the one after the network address, or for /31 and /32 (no network address, RFC 3021) the lowest.
 */
function firstHost(c: Cidr): Address {
  const value = c.prefix > 30 ? c.network : c.network + 1n;
  return { family: 4, value, text: formatIpv4(Number(value)) };
}

/** The first pair of overlapping subnets of one family between two networks, as text. */
function overlapOf(a: Network, b: Network, family: 4 | 6): string | undefined {
  for (const x of subnetsOf(a)) {
    if (x.family !== family) continue;
    const y = subnetsOf(b).find((c) => cidrsOverlap(x, c));
    if (y) return `${x.text} of network '${a.id}' overlaps ${y.text} of network '${b.id}'`;
  }
  return undefined;
}

export function router(env: RuleEnv, d: Draft, existing?: Router): Fields<'router'> {
  immutable(d, existing, 'tenantId');
  const tenantId = tenantOf(env, d, existing);
  const inputs = (d.interfaces as RouterInterfaceInput[] | undefined) ?? [];
  const nets: Network[] = [];
  const interfaces = inputs.map((itf, i): RouterInterface => {
    const at = (f: string) => `interfaces[${i}].${f}`;
    const net = mustRef(env, 'network', itf.networkId, at('networkId'), tenantId);
    const twice = nets.findIndex((n) => n.id === net.id);
    if (twice >= 0) {
      throw invalid(at('networkId'), `network '${net.id}' is already interfaces[${twice}]; one per network`);
    }
    const owner = env.state.routerOfNetwork.get(net.id);
    if (owner !== undefined && owner !== d.id) {
      throw conflict(at('networkId'), `network '${net.id}' is already on router '${owner}'`);
    }
    for (const [j, other] of nets.entries()) {
      const clash = overlapOf(net, other, 4);
      if (clash)
        throw invalid(at('networkId'), `${clash} (interfaces[${j}]); routed subnets must not overlap`);
    }
    nets.push(net);
    // Omitted: the address the router has there already, so re-sending the list moves no gateway.
    const current = existing?.interfaces.find((x) => x.networkId === net.id);
    const text = itf.ip ?? current?.ip;
    const parsed = text === undefined ? undefined : parseIp(text);
    if (text !== undefined && parsed?.family !== 4) {
      throw invalid(at('ip'), `'${text}' is not an IPv4 address`);
    }
    const subnets = v4(net);
    if (subnets.length === 0) {
      throw invalid(at('ip'), `network '${net.id}' has no IPv4 subnet; a router interface needs one`);
    }
    // Omitted and new on this network: the conventional gateway, checked below like a given one.
    const origin = parsed === undefined ? subnets[0] : undefined;
    const a = parsed ?? firstHost(subnets[0]!);
    const why = misplaced(a, subnets);
    if (why === 'outside') {
      throw invalid(
        at('ip'),
        `${a.text} is outside the IPv4 subnets of network '${net.id}' (${listed(subnets)})`,
      );
    }
    if (why) throw invalid(at('ip'), `${a.text} is ${why}, not a usable address`);
    const holder = env.state.ips.get(net.id)?.get(a.text);
    if (holder !== undefined) {
      // A defaulted address was never written by the caller: say where it came from and the way out.
      const what = origin ? `${a.text} (the default: the first host address of ${origin.text})` : a.text;
      const hint = origin ? `; give ${at('ip')}` : '';
      throw conflict(
        at('ip'),
        `${what} is already used by endpoint '${holder}' in network '${net.id}'${hint}`,
      );
    }
    checkNotAllowed(
      env.state,
      net.id,
      a.text,
      at('ip'),
      origin && `the first host address of ${origin.text}`,
    );
    const ipv6 = ipv6Of(env, net, itf, current, i);
    if (ipv6 !== undefined) checkNotAllowed(env.state, net.id, ipv6, at('ipv6'));
    return {
      networkId: net.id,
      ip: a.text,
      ...(ipv6 === undefined ? {} : { ipv6 }),
      mac: routerMac(net.vni),
    };
  });
  // IPv6 subnets must not overlap where the router routes IPv6 on both networks (ipv6 set).
  for (const [i, itf] of interfaces.entries()) {
    if (itf.ipv6 === undefined) continue;
    for (let j = 0; j < i; j++) {
      const clash = interfaces[j]!.ipv6 === undefined ? undefined : overlapOf(nets[i]!, nets[j]!, 6);
      if (clash)
        throw invalid(
          `interfaces[${i}].networkId`,
          `${clash} (interfaces[${j}]); routed subnets must not overlap`,
        );
    }
  }
  // After the interfaces: a route's next hop must be on one of the networks they join.
  const given = (d.routes as RouterRoute[] | undefined) ?? [];
  const routes = routesOf(env.state, given, nets, interfaces, existing);
  const floating = (d.floatingIps as RouterFloatingIp[] | undefined) ?? [];
  const floatingIps = floatingIpsOf(env.state, floating, nets, interfaces, existing, routes);
  // After the floating IPs: the SNAT address may be none of them, nor on a network holding a fixed address.
  const snatGiven = d.snat as RouterSnatInput | false | undefined;
  const snat = snatOf(env.state, d.id, snatGiven, nets, interfaces, existing, routes, floatingIps ?? []);
  const out: Fields<'router'> = { id: d.id, tenantId, interfaces, routes };
  if (d.name !== undefined) out.name = d.name as string;
  if (d.description !== undefined) out.description = d.description as string;
  if (floatingIps) out.floatingIps = floatingIps;
  if (snat) out.snat = snat;
  return out;
}

/**
 * A router interface address (`ip`, canonical) that some endpoint of the network allows exactly
 * (a VIP): refused, the VIP's holder would be answering for its gateway. One inside an allowed
 * prefix is fine: the router's flows drop a VM speaking as it. `dflt` says where a defaulted
 * address came from.
 */
function checkNotAllowed(
  state: IntentState,
  networkId: string,
  ip: string,
  field: string,
  dflt?: string,
): void {
  const holder = allowedHolder(state, networkId, ip);
  if (holder === undefined) return;
  const what = dflt ? `${ip} (the default: ${dflt})` : ip;
  throw conflict(
    field,
    `${what} is an allowed address (a VIP) of endpoint '${holder}' in network '${networkId}'${dflt ? `; give ${field}` : ''}`,
  );
}

/** The router on a network and its interface there, if any (a network is on at most one). */
export function routerOn(
  state: IntentState,
  networkId: string,
): { router: Router; iface: RouterInterface } | undefined {
  const id = state.routerOfNetwork.get(networkId);
  const r = id === undefined ? undefined : state.get('router', id);
  const iface = r?.interfaces.find((x) => x.networkId === networkId);
  return r && iface ? { router: r, iface } : undefined;
}

/**
 * A network's new subnets (PUT or PATCH) against its router: the interface addresses (IPv4, and
 * IPv6 when it has one) must stay usable, the subnets must not come to overlap those of the
 * router's other networks (IPv6 ones: where it routes IPv6 on both), nor be the destination of one of its static routes (IPv4
 * or IPv6), nor leave a route's next hop outside (router-routes.ts).
 */
export function checkNetworkSubnets(state: IntentState, networkId: string, subnets: readonly Cidr[]): void {
  const on = routerOn(state, networkId);
  if (!on) return;
  const rid = on.router.id;
  const mine = subnets.filter((c) => c.family === 4);
  const why = misplaced(parseIp(on.iface.ip)!, mine);
  if (why) {
    const what = why === 'outside' ? `outside the IPv4 subnets (${listed(mine)})` : why;
    throw invalid(
      'subnets',
      `router '${rid}' has its interface ${on.iface.ip} on this network, which would be ${what}; detach the network from the router first`,
    );
  }
  if (on.iface.ipv6 !== undefined) checkIpv6Subnets(rid, on.iface.ipv6, subnets);
  for (const other of on.router.interfaces) {
    if (other.networkId === networkId) continue;
    const them = state.get('network', other.networkId);
    const theirs = them ? subnetsOf(them) : [];
    // IPv6 prefixes meet only where the router routes IPv6 on both networks.
    const both6 = on.iface.ipv6 !== undefined && other.ipv6 !== undefined;
    for (const c of subnets) {
      if (c.family === 6 && !both6) continue;
      const y = theirs.find((t) => cidrsOverlap(c, t));
      if (y) {
        throw invalid(
          'subnets',
          `${c.text} overlaps ${y.text} of network '${other.networkId}', also on router '${rid}'`,
        );
      }
    }
  }
  checkRouteSubnets(state, on.router, networkId, subnets);
  checkFloatingSubnets(state, on.router, networkId, subnets);
  checkSnatSubnets(state, on.router, networkId, subnets);
}

/**
 * An endpoint address (canonical text) that is one of its network's router addresses (IPv4 or
 * IPv6), a floating IP of the router there (router-floating.ts) or its SNAT address there
 * (router-snat.ts): the router's, refused.
 */
export function checkEndpointIp(state: IntentState, networkId: string, ip: string, field: string): void {
  const on = routerOn(state, networkId);
  if (on && (on.iface.ip === ip || on.iface.ipv6 === ip)) {
    throw conflict(field, `${ip} is the address of router '${on.router.id}' on network '${networkId}'`);
  }
  if (on && floatingIpOn(state, on.router, networkId, ip)) {
    throw conflict(field, `${ip} is a floating IP of router '${on.router.id}' on network '${networkId}'`);
  }
  if (on && snatIpOn(state, on.router, networkId, ip)) {
    throw conflict(field, `${ip} is the SNAT address of router '${on.router.id}' on network '${networkId}'`);
  }
}

/** A MAC of weft's router interfaces (whatever the VNI): never an endpoint's, given or generated. */
export const isRouterMac = (mac: string): boolean => mac.startsWith(ROUTER_MAC_PREFIX);

/**
 * Endpoint MACs may not take the router prefix: an endpoint with its gateway's MAC would collide
 * with the router interface on its network (and could take the traffic sent to the gateway).
 */
export function checkEndpointMac(mac: string): void {
  if (isRouterMac(mac)) {
    throw invalid(
      'mac',
      `${mac}: the prefix ${ROUTER_MAC_PREFIX.slice(0, -1)} is reserved for weft's router interfaces`,
    );
  }
}
