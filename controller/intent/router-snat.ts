import { snatZone } from '../pipeline/registers.js';
import { allowedHolder } from './allowed-addresses.js';
import { conflict, invalid } from './errors.js';
import type {
  Network,
  Router,
  RouterFloatingIp,
  RouterInterface,
  RouterRoute,
  RouterSnat,
  RouterSnatInput,
} from './model.js';
import { type Address, type Cidr, cidrContains, parseIp } from './net.js';
import { misplaced } from './router-floating.js';
import { checkPortForwardSubnets, portForwardsOf } from './router-port-forward.js';
import { leftBehind, listed, v4 } from './router-routes.js';
import type { IntentState } from './state.js';

/**
 * A router's SNAT: many-to-one source NAT. The network whose IPv4 subnets hold `snat.ip` is the
 * router's external network for it; IPv4 from the subnets of its other networks (the internal
 * ones) that leaves through a VLAN binding of the external network leaves from `snat.ip`, with
 * conntrack on the chassis of that binding (zone snatZone(VNI)), and the answers are translated
 * back there. Unlike floating IPs the translation keeps state, so the address need not be the
 * router's alone: its own interface address on the external network is the common choice (the
 * router then shares its gateway address, as a home router does). Refused here, naming `snat.ip`:
 * - an address that is not IPv4 (IPv6 is routed without NAT);
 * - one outside the IPv4 subnets of the router's networks, or not usable there (a network or
 *   broadcast address);
 * - unless it is the router's own address there: an endpoint's address or one some endpoint allows
 *   exactly (a VIP), a static route's next hop or a floating IP of the router: another host, or
 *   the stateless rewrite, would take the answers meant for the translated connections;
 * - an external network holding the fixed address of a floating IP: a network is either the
 *   external or the internal side of the router's NAT;
 * - a conntrack zone shared with the SNAT of another router (two VNIs with the same low 15 bits):
 *   one chassis may hold both bindings, and the two would see each other's connections;
 * - dropping the interface on the external network, unless snat changes too (on `interfaces`).
 * Later writes to other objects keep it valid: an endpoint may not take the SNAT address as its
 * address nor allow it exactly (router-rules.ts checkEndpointIp, allowed-addresses.ts), and the
 * external network's new subnets must keep it usable (checkSnatSubnets).
 * Its port forwards (DNAT on `snat.ip`) are checked in ./router-port-forward.ts.
 */

const FIELD = 'snat.ip';

/** A network with its VNI, as the zone messages name it. */
const vniOf = (net: Network): string => `network '${net.id}' (VNI ${net.vni})`;

/**
 * Checks and normalises the SNAT of router `id`, whose interfaces are `interfaces` on `nets`
 * (already checked, in the same order), whose routes and floating IPs are `routes` and
 * `floatingIps` (checked too): `{ ip }` in canonical text, with `portForwards` normalised when
 * there are some, or undefined when off (omitted or false; the stored router then has no `snat`).
 * `before` is the stored router, to explain the address left behind by removing the interface it
 * needs.
 */
export function snatOf(
  state: IntentState,
  id: string,
  given: RouterSnatInput | false | undefined,
  nets: readonly Network[],
  interfaces: readonly RouterInterface[],
  before: Router | undefined,
  routes: readonly RouterRoute[],
  floatingIps: readonly RouterFloatingIp[],
): RouterSnat | undefined {
  if (given === undefined || given === false) return undefined;
  const { a, net } = placed(state, given.ip, nets, before);
  const own = interfaces[nets.indexOf(net)]?.ip === a.text;
  // The router's own address there: no endpoint, VIP, next hop or floating IP can be it (refused
  // where those are written), and conntrack tells the translated answers from what is for the router.
  // A write that keeps the SNAT address and changes the routes or floating IPs is refused naming
  // the field it changed: that is what the caller can fix.
  const kept = before?.snat?.ip === a.text;
  if (!own) notTaken(state, a, net, routes, floatingIps, kept);
  for (const [i, f] of floatingIps.entries()) {
    const fixed = parseIp(f.fixedIp)!;
    if (!v4(net).some((c) => cidrContains(c, fixed))) continue;
    if (kept) {
      throw invalid(
        `floatingIps[${i}].fixedIp`,
        `${f.fixedIp} is in network '${net.id}', the external network of this router's SNAT (snat.ip ${a.text}); a network is either the external or the internal side of a router's NAT: pick a fixed address on another network or move SNAT`,
      );
    }
    throw invalid(
      FIELD,
      `${a.text} is in network '${net.id}', which holds ${f.fixedIp}, the fixed address of floatingIps[${i}] (${f.ip} -> ${f.fixedIp}); a network is either the external or the internal side of a router's NAT: put the SNAT address on another network or move the floating IP`,
    );
  }
  checkZone(state, id, a, net);
  const after = { state, nets, interfaces, floatingIps, before, ip: a, ext: net };
  const portForwards = portForwardsOf(after, given.portForwards);
  return portForwards ? { ip: a.text, portForwards } : { ip: a.text };
}

/** The address, IPv4 and usable in an IPv4 subnet of the router's networks after the write, and its network. */
function placed(
  state: IntentState,
  text: string,
  nets: readonly Network[],
  before: Router | undefined,
): { a: Address; net: Network } {
  const a = parseIp(text);
  if (!a) throw invalid(FIELD, `'${text}' is not an IPv4 address`);
  if (a.family !== 4) throw invalid(FIELD, `${a.text} is IPv6; SNAT is IPv4 (IPv6 is routed without NAT)`);
  const net = nets.find((n) => v4(n).some((c) => cidrContains(c, a)));
  if (!net) {
    const left = leftBehind(state, a, nets, before);
    if (left) {
      throw invalid(
        'interfaces',
        `network '${left}' holds ${a.text}, the SNAT address (snat.ip); keep its interface or change snat in the same write (false turns it off)`,
      );
    }
    throw invalid(
      FIELD,
      `${a.text} is outside the IPv4 subnets of the router's networks (${listed(nets.flatMap(v4))}); the SNAT address must be on one of them (its external network)`,
    );
  }
  const why = misplaced(a, v4(net));
  if (why) throw invalid(FIELD, `${a.text} is ${why}, not a usable address`);
  return { a, net };
}

/** An address on `net` other than the router's own: held by no other host, nor by the router's other roles. */
function notTaken(
  state: IntentState,
  a: Address,
  net: Network,
  routes: readonly RouterRoute[],
  floatingIps: readonly RouterFloatingIp[],
  kept: boolean,
): void {
  const holder = state.ips.get(net.id)?.get(a.text);
  if (holder !== undefined) {
    throw conflict(
      FIELD,
      `${a.text} is already used by endpoint '${holder}' in network '${net.id}'; use the router's own address there or a free one`,
    );
  }
  const vip = allowedHolder(state, net.id, a.text);
  if (vip !== undefined) {
    throw conflict(
      FIELD,
      `${a.text} is an allowed address (a VIP) of endpoint '${vip}' in network '${net.id}'; the answers to the SNAT address must reach the router, use its own address there or a free one`,
    );
  }
  const hop = routes.findIndex((r) => r.nexthop === a.text);
  if (hop >= 0) {
    if (kept) {
      throw invalid(
        `routes[${hop}].nexthop`,
        `${a.text} is the SNAT address of this router (snat.ip); a next hop is another host, not the router`,
      );
    }
    throw invalid(
      FIELD,
      `${a.text} is the next hop of routes[${hop}] (${routes[hop]!.destination}), another host; the SNAT address is the router's, use its own address there or a free one`,
    );
  }
  const f = floatingIps.findIndex((x) => x.ip === a.text);
  if (f >= 0) {
    if (kept) {
      throw invalid(
        `floatingIps[${f}].ip`,
        `${a.text} is the SNAT address of this router (snat.ip); pick another floating IP or move SNAT`,
      );
    }
    throw invalid(
      FIELD,
      `${a.text} is floatingIps[${f}].ip, a floating IP of this router (1:1 NAT for ${floatingIps[f]!.fixedIp}); use another address for SNAT`,
    );
  }
}

/**
 * Another router's SNAT whose external network has another VNI but the same conntrack zone
 * (snatZone keeps the low 15 bits): one chassis may hold VLAN bindings of both networks, and the
 * two translations would share, and confuse, their connections. Routers of any tenant: the zone
 * is the chassis's (another tenant's is not named). The first such router by id.
 */
function checkZone(state: IntentState, id: string, a: Address, net: Network): void {
  const zone = snatZone(net.vni);
  for (const rid of state.sorted('router')) {
    if (rid === id) continue;
    const other = state.get('router', rid);
    const ext = other && snatNetwork(state, other);
    if (!ext || ext.vni === net.vni || snatZone(ext.vni) !== zone) continue;
    // Another tenant's router and network stay unnamed: their VNI is all the caller needs.
    const theirs =
      other.tenantId === net.tenantId
        ? `router '${rid}' has SNAT on ${vniOf(ext)}`
        : `another tenant's router has SNAT on VNI ${ext.vni}`;
    throw conflict(
      FIELD,
      `${a.text} is in ${vniOf(net)}, and ${theirs}: both would use conntrack zone ${zone} (32768 + the low 15 bits of the VNI); SNAT needs an external network whose VNI differs from theirs in its low 15 bits`,
    );
  }
}

/** The network holding `router`'s SNAT address (its external network), if it has SNAT. */
export function snatNetwork(state: IntentState, router: Router): Network | undefined {
  const a = router.snat && parseIp(router.snat.ip);
  if (!a) return undefined;
  for (const itf of router.interfaces) {
    const net = state.get('network', itf.networkId);
    if (net && v4(net).some((c) => cidrContains(c, a))) return net;
  }
  return undefined;
}

/** Whether `ip` (canonical IPv4 text) is `router`'s SNAT address, on network `networkId`. */
export function snatIpOn(state: IntentState, router: Router, networkId: string, ip: string): boolean {
  if (router.snat?.ip !== ip) return false;
  return snatNetwork(state, router)?.id === networkId;
}

/**
 * Network `networkId`'s new subnets (PUT or PATCH) against its router's SNAT: when the SNAT
 * address is on the network now, it must stay inside its IPv4 subnets and usable there; so must
 * the internal address of each port forward on it (router-port-forward.ts).
 */
export function checkSnatSubnets(
  state: IntentState,
  router: Router,
  networkId: string,
  subnets: readonly Cidr[],
): void {
  checkPortForwardSubnets(state, router, networkId, subnets);
  if (!router.snat || snatNetwork(state, router)?.id !== networkId) return;
  const mine = subnets.filter((c) => c.family === 4);
  const why = misplaced(parseIp(router.snat.ip)!, mine);
  if (!why) return;
  const what = why === 'outside' ? `outside the IPv4 subnets (${listed(mine)})` : why;
  throw invalid(
    'subnets',
    `${router.snat.ip}, the SNAT address of router '${router.id}', would be ${what}; change the router's snat first`,
  );
}
