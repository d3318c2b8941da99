import type { OxmValue } from '../../southbound/openflow/codec/oxm.js';
import { canonicalIpv6, isIpv4, isIpv6, isMac } from '../../southbound/openflow/codec/values.js';
import { conflict, IntentError, invalid, notFound } from '../intent/errors.js';
import type { Endpoint } from '../intent/model.js';
import { prefixHolding } from '../intent/net.js';
import { CS } from '../pipeline/conntrack.js';
import type { TraceRouter } from './destination.js';
import {
  askHeaders,
  checkRequest,
  l4,
  probeText,
  receivedOf,
  sayWhereItIs,
  type TraceAnswer,
  type TraceLookups,
  type TraceRequest,
  traceAnswer,
  VM_TTL,
} from './endpoint-trace.js';
import { packetOf } from './packet.js';
import { routerPuntOf } from './router-answer.js';
import { type TraceWorld, traceAcross } from './trace-across.js';
import { type TraceTarget, verdictOf } from './verdict.js';

/**
 * `weft trace --from-binding`: a probe from a host behind a VLAN binding (a physical server, the
 * upstream router, a client on the Internet behind it), as it arrives tagged on the binding's
 * port, followed through weft's desired flows: to an endpoint of the binding's network, to a
 * floating IP or a port forward of the network's router (translated on the way, as conntrack
 * translates a new connection's first packet), or through the router to another network; or
 * the host's ARP request (IPv6: neighbour solicitation) for an address, answered by the router
 * or an endpoint's ARP flow on the binding's hypervisor, or carried to the endpoint itself. What
 * the endpoint trace is for a VM, this is for the physical side.
 */
export interface BindingTraceRequest extends TraceRequest {
  /** The sending host's address (IPv4 or IPv6, the family of `to`). */
  from: string;
  /** The sending host's MAC; default DEFAULT_HOST_MAC. */
  fromMac?: string;
}

export interface BindingTraceLookups extends TraceLookups {
  vlanBinding(id: string): { chassisId: string; port: string; vlan: number; networkId: string } | undefined;
}

/** A locally administered MAC no VM of weft's gets by default: the host's, unless given. */
export const DEFAULT_HOST_MAC = '02:57:ef:00:00:01';
const VLAN_PRESENT = 0x1000;

export function traceFromBinding(
  lookups: BindingTraceLookups,
  world: TraceWorld,
  bindingId: string,
  req: BindingTraceRequest,
): TraceAnswer {
  const { to, v6 } = checkRequest(req);
  const fromV6 = isIpv6(req.from);
  if (!fromV6 && !isIpv4(req.from)) throw invalid('from', `'${req.from}' is not an IPv4 or IPv6 address`);
  if (fromV6 !== v6) throw invalid('from', `${req.from} and ${to} are not of one family`);
  const from = fromV6 ? canonicalIpv6(req.from)! : req.from;
  const mac = (req.fromMac ?? DEFAULT_HOST_MAC).toLowerCase();
  if (!isMac(mac)) throw invalid('fromMac', `'${req.fromMac}' is not a MAC address`);
  const binding = lookups.vlanBinding(bindingId);
  if (!binding) throw notFound('vlanBinding', bindingId);
  const ofport = world.ports(binding.chassisId)?.byName.get(binding.port);
  if (ofport === undefined) {
    throw conflict(
      undefined,
      `chassis ${binding.chassisId} reports no port ${binding.port} on its integration bridge (vlan-binding ${bindingId})`,
    );
  }
  if (!world.desired(binding.chassisId)) {
    throw new IntentError(
      'unavailable',
      `no desired state for chassis ${binding.chassisId} yet: this controller is standby or still starting (trace on the leader)`,
    );
  }
  const arp = req.protocol === 'arp';
  if (arp && req.dstMac !== undefined)
    throw invalid(
      'dstMac',
      `an ${v6 ? 'neighbour solicitation' : 'ARP request'} has no destination MAC to give`,
    );
  // An ARP request is broadcast: it is meant for whoever holds `to` in the network, if anyone.
  const where = arp
    ? undefined
    : whereTo(lookups, binding.networkId, lookups.routerOf(binding.networkId), {
        to,
        req,
        ...(req.dstMac === undefined ? {} : { dstMac: req.dstMac.toLowerCase() }),
      });
  const target = where ? where.target : lookups.endpointByIp(binding.networkId, to);
  const gateway = where?.gateway;
  const headers: Record<string, OxmValue> = where
    ? {
        eth_dst: where.dstMac,
        eth_type: v6 ? 0x86dd : 0x0800,
        ...(v6 ? { ipv6_src: from, ipv6_dst: to } : { ip_src: from, ip_dst: to }),
        nw_ttl: req.ttl ?? VM_TTL,
        ...l4(req, v6),
      }
    : askHeaders(mac, from, to, v6);
  const packet = packetOf({
    in_port: ofport,
    eth_src: mac,
    vlan_vid: VLAN_PRESENT | binding.vlan,
    ...headers,
  });
  const established = req.established === true;
  const run = traceAcross(world, binding.chassisId, packet, {
    ctState: BigInt(CS.TRK | (established ? CS.EST : CS.NEW)),
  });
  const goal: TraceTarget = {
    ...(target ? { endpoint: target.id } : {}),
    arp,
    what: probeText(req, `${from} (vlan-binding ${bindingId})`, to, v6),
    ...(gateway ? { gateway } : {}),
  };
  const punt = routerPuntOf(run, goal, lookups.arpState?.bind(lookups));
  const verdict = verdictOf(run.hops, goal, established, punt);
  const received = receivedOf(run, verdict, goal);
  if (arp) sayWhereItIs(verdict, received, to);
  return traceAnswer({ from: bindingId, chassis: binding.chassisId, to, req, established }, verdict, {
    packet,
    received,
    hops: run.hops,
  });
}

interface Where {
  dstMac: string;
  target?: Endpoint;
  gateway?: TraceTarget['gateway'];
}

/**
 * Where the host sends the probe and whom it is meant for: an endpoint of the binding's network
 * holding `to` (its MAC); else the network's router, for its own address there, a floating IP or
 * the SNAT address (a port forward's internal host is the target), or an address it routes to
 * (the host has a route via it); else only `dstMac` says where.
 */
function whereTo(
  lookups: BindingTraceLookups,
  networkId: string,
  router: TraceRouter | undefined,
  q: { to: string; req: BindingTraceRequest; dstMac?: string },
): Where {
  const { to, req } = q;
  const local = lookups.endpointByIp(networkId, to);
  const iface = router?.interfaces.find((i) => i.networkId === networkId);
  if (local) return { dstMac: q.dstMac ?? local.mac, target: local };
  if (!router || !iface) {
    if (q.dstMac) return { dstMac: q.dstMac };
    throw invalid(
      'to',
      `no endpoint of network ${networkId} holds ${to} and it has no router: give dstMac (the host's own neighbour's MAC)`,
    );
  }
  const gw = { router: router.id, from: networkId };
  const viaRouter = (ip: string): Where => {
    const into = router.interfaces.find((i) =>
      [...i.subnets, ...(i.subnets6 ?? [])].some((c) => prefixHolding(c, ip) >= 0),
    );
    const target = into && lookups.endpointByIp(into.networkId, ip);
    return {
      dstMac: q.dstMac ?? iface.mac,
      ...(target ? { target } : {}),
      gateway: { ...gw, ...(into ? { into: into.networkId } : {}) },
    };
  };
  const floating = router.floatingIps?.find((f) => f.ip === to);
  if (floating) return viaRouter(floating.fixedIp);
  // The SNAT address is often the router's own there: a forwarded port first, then the router.
  const fwd =
    router.snat?.ip === to && req.protocol !== 'icmp'
      ? router.snat.portForwards?.find(
          (f) => f.protocol === req.protocol && f.port <= req.port! && req.port! <= (f.portEnd ?? f.port),
        )
      : undefined;
  if (fwd) return viaRouter(fwd.internalIp);
  if (to === iface.ip || to === iface.ipv6 || router.snat?.ip === to) {
    return { dstMac: q.dstMac ?? iface.mac, gateway: { ...gw, routerAddress: true } };
  }
  // On the host's own link: it asks for the address itself, never the router.
  if ([...iface.subnets, ...(iface.subnets6 ?? [])].some((c) => prefixHolding(c, to) >= 0)) {
    if (q.dstMac) return { dstMac: q.dstMac };
    throw invalid(
      'to',
      `no endpoint of network ${networkId} holds ${to}, on the host's own link: give dstMac (the MAC its ARP gets)`,
    );
  }
  return viaRouter(to);
}
