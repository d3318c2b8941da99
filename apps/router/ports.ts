import type { Network, Router } from '../../controller/intent/model.js';
import {
  type Cidr,
  cidrsOverlap,
  isIpv4Cidr,
  parseCidr,
  parseIp,
  prefixHolding,
} from '../../controller/intent/net.js';
import { snatZone } from '../../controller/pipeline/registers.js';
import type { FloatingIp, NetworkRouter, PortForward, RouterPort, Snat, StaticRoute } from '../view.js';

/**
 * A router's interfaces as the flows need them: each network's VNI, gateway MAC and IP and IPv4
 * subnets, sorted by network id. Interfaces on a network that does not exist (never stored: the
 * intent rules refuse it) are left out.
 */
export function routerPorts(router: Router, network: (id: string) => Network | undefined): RouterPort[] {
  const ports: RouterPort[] = [];
  for (const i of router.interfaces) {
    const net = network(i.networkId);
    if (!net) continue;
    const port: RouterPort = {
      networkId: net.id,
      vni: net.vni,
      mac: i.mac.toLowerCase(),
      ip: i.ip,
      cidrs: net.subnets.filter(isIpv4Cidr),
      cidrs6: [],
    };
    if (i.ipv6 !== undefined) {
      port.ipv6 = i.ipv6;
      port.cidrs6 = net.subnets.filter(isIpv6Cidr);
    }
    ports.push(port);
  }
  return ports.sort((a, b) => (a.networkId < b.networkId ? -1 : a.networkId > b.networkId ? 1 : 0));
}

const isIpv6Cidr = (text: string): boolean => {
  const c = parseCidr(text);
  return typeof c !== 'string' && c.family === 6;
};

/**
 * The router's static routes with each next hop resolved: to a bound endpoint of one of its
 * networks (`endpointAt(networkId, ip)`: bound ones only), else to the address itself, which the
 * controller resolves by ARP (IPv6: neighbour solicitation). A next hop held by an endpoint that is
 * not bound is not told from one no endpoint holds (the resolution finds nothing, and the router
 * answers host unreachable). An IPv6 route's next hop is looked for only in the IPv6 subnets of
 * networks where the router has an IPv6 address; a route naming its network (a link-local next hop)
 * goes via that network.
 */
export function staticRoutes(
  router: Router,
  ports: readonly RouterPort[],
  endpointAt: (networkId: string, ip: string) => { endpointId: string; mac: string } | undefined,
): StaticRoute[] {
  const out: StaticRoute[] = [];
  for (const r of router.routes ?? []) {
    const v6 = parseIp(r.nexthop)?.family === 6;
    const holds = (c: string) => prefixHolding(c, r.nexthop) >= 0;
    // A route naming its next hop's network (required for a link-local one, in no subnet) goes there.
    const p = ports.find((x) =>
      r.networkId !== undefined
        ? x.networkId === r.networkId && (!v6 || x.ipv6 !== undefined)
        : v6
          ? x.ipv6 !== undefined && x.cidrs6.some(holds)
          : x.cidrs.some(holds),
    );
    if (!p) continue;
    const ep = endpointAt(p.networkId, r.nexthop);
    const via = ep
      ? { kind: 'endpoint' as const, ...ep, vni: p.vni, gatewayMac: p.mac }
      : { kind: 'arp' as const, nexthop: r.nexthop, vni: p.vni, gatewayMac: p.mac };
    out.push({ destination: r.destination, via });
  }
  return out;
}

/**
 * The router's floating IPs with the ports of their two sides: the network whose IPv4 subnets hold
 * `ip` (external) and the one holding `fixedIp` (internal). An entry whose sides are not both found
 * (never stored: the intent rules refuse it) is left out.
 */
export function floatingIps(router: Router, ports: readonly RouterPort[]): FloatingIp[] {
  const out: FloatingIp[] = [];
  const portOf = (ip: string) => ports.find((p) => p.cidrs.some((c) => prefixHolding(c, ip) >= 0));
  for (const f of router.floatingIps ?? []) {
    const external = portOf(f.ip);
    const internal = portOf(f.fixedIp);
    if (!external || !internal || external === internal) continue;
    out.push({ ip: f.ip, fixedIp: f.fixedIp, external, internal });
  }
  return out;
}

/**
 * The router's SNAT with its external port (the network whose IPv4 subnets hold the address) and
 * the sources it translates (the other networks' IPv4 subnets, and the prefixes its static routes
 * send into them: hosts behind an appliance VM), or undefined when it has none (or its network is
 * not found: never stored, the intent rules refuse it).
 */
export function routerSnat(router: Router, ports: readonly RouterPort[]): Snat | undefined {
  const ip = router.snat?.ip;
  if (ip === undefined) return undefined;
  const external = ports.find((p) => p.cidrs.some((c) => prefixHolding(c, ip) >= 0));
  if (!external) return undefined;
  const internal = ports.filter((p) => p !== external);
  const subnets = internal.flatMap((p) => p.cidrs);
  const sources = [...subnets, ...routedSources(router, internal, external, subnets)];
  const portForwards = (router.snat?.portForwards ?? []).map(
    (f): PortForward => ({
      protocol: f.protocol,
      port: f.port,
      ...(f.portEnd === undefined ? {} : { portEnd: f.portEnd }),
      internalIp: f.internalIp,
      internalPort: f.internalPort,
    }),
  );
  return { ip, external, sources, zone: snatZone(external.vni), portForwards };
}

/**
 * The IPv4 destinations of the router's static routes whose next hop is on an internal network:
 * hosts behind an appliance or a physical router there, translated as the VMs are (as a Neutron
 * router's SNAT translates whatever leaves by its gateway). Left out: the default route (it would
 * translate every source, the external network's own hosts too), a prefix that overlaps the
 * external network (its hosts are reached there, not behind the route) and one an internal subnet
 * already holds.
 */
function routedSources(
  router: Router,
  internal: readonly RouterPort[],
  external: RouterPort,
  subnets: readonly string[],
): string[] {
  const cidr = (text: string): Cidr | undefined => {
    const c = parseCidr(text);
    return typeof c === 'string' || c.family !== 4 ? undefined : c;
  };
  const out: string[] = [];
  for (const r of router.routes ?? []) {
    const dest = cidr(r.destination);
    if (!dest || dest.prefix === 0 || parseIp(r.nexthop)?.family !== 4) continue;
    const via = internal.some((p) =>
      r.networkId !== undefined
        ? p.networkId === r.networkId
        : p.cidrs.some((c) => prefixHolding(c, r.nexthop) >= 0),
    );
    if (!via) continue;
    if (external.cidrs.some((c) => cidrsOverlap(cidr(c)!, dest))) continue;
    if (subnets.some((c) => (cidr(c)?.prefix ?? 33) <= dest.prefix && cidrsOverlap(cidr(c)!, dest))) continue;
    out.push(r.destination);
  }
  return out;
}

/** What one network of the router sees of it, or undefined when it has no interface there. */
export function networkRouter(
  routerId: string,
  ports: RouterPort[],
  networkId: string,
  routes: StaticRoute[] = [],
  floating: readonly FloatingIp[] = [],
  snat?: Snat,
): NetworkRouter | undefined {
  const self = ports.find((p) => p.networkId === networkId);
  const floatingIps = floating.filter(
    (f) => f.external.networkId === networkId || f.internal.networkId === networkId,
  );
  if (!self) return undefined;
  const seen: NetworkRouter = { routerId, self, ports, routes, floatingIps };
  if (snat?.external.networkId === networkId) seen.snat = snat;
  return seen;
}
