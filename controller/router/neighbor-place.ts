import { taggedOutput } from '../../apps/vlan/compute.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ROUTER_MAC_PREFIX } from '../intent/model-router.js';
import { isLinkLocal6, isMulticastMac, prefixHolding } from '../intent/net.js';
import { output } from '../pipeline/flow.js';
import { whyNoHostAt } from './icmp-error.js';
import type { NeighborKey, NeighborPlace, NeighborState } from './neighbor-resolver.js';
import type { NeighborContext } from './neighbor-service.js';

/**
 * Where the routers' neighbours may sit, and who may answer for an address (pure, over what the
 * NeighborContext reads of the intent and the facts):
 * - a VIP (an address endpoints are allowed exactly, `allowedAddresses`) sits behind the port of
 *   one of those endpoints, and only they answer for it: the router asks them alone, and takes
 *   an answer only from one of their ports, with that endpoint's MAC;
 * - any other address no endpoint holds sits behind a VLAN binding of the network (a physical
 *   host or router): asked out of every binding port, tagged; answered from one, by a MAC no
 *   endpoint, group or router of weft has.
 */

/** Where a request (ARP, or IPv6 neighbour solicitation) for an address goes out: a datapath, and the actions putting it on the wire there. */
export interface RequestOut {
  dpid: string;
  actions: Action[];
}

/** Out of the place a learned neighbour sits at: its endpoint's port, or its VLAN binding's port (tagged). */
export const actionsToward = (p: Pick<NeighborPlace, 'endpointId' | 'ofport' | 'vlan'>): Action[] =>
  p.endpointId !== undefined ? [output(p.ofport)] : taggedOutput(p.vlan, p.ofport);

/**
 * Whether weft resolves `ip` in the network (by ARP, or neighbour solicitation for IPv6): a VIP while one of the endpoints allowed it is
 * bound (never behind a VLAN binding, even when none is), any other address where a VLAN binding
 * may hide it.
 */
export function resolvable(ctx: NeighborContext, networkId: string, ip: string): boolean {
  // IPv6 is solicited from the router's IPv6 address there: none, nothing to ask from.
  if (ip.includes(':') && ctx.routerInterface(networkId)?.ipv6 === undefined) return false;
  // The router's own (a packet to it from another of its networks: not translated there, see
  // apps/router/floating.ts and snat.ts); no host would answer for it but the router itself.
  if (ctx.isNatAddress?.(networkId, ip)) return false;
  if (ctx.vipAllowed(networkId, ip).length > 0) return ctx.vipHolders(networkId, ip).length > 0;
  return ctx.vlanPorts(networkId).length > 0;
}

/** Where a broadcast request for `key.ip` goes: to the VIP's holders, else out of every VLAN binding port. */
export function broadcastPlaces(ctx: NeighborContext, key: NeighborKey): RequestOut[] {
  const places =
    ctx.vipAllowed(key.networkId, key.ip).length > 0
      ? ctx
          .vipHolders(key.networkId, key.ip)
          .map((h) => ({ chassisId: h.chassisId, actions: [output(h.ofport)] }))
      : ctx
          .vlanPorts(key.networkId)
          .map((p) => ({ chassisId: p.chassisId, actions: taggedOutput(p.vlan, p.ofport) }));
  return places.flatMap((p) => {
    const dpid = ctx.datapathOfChassis(p.chassisId);
    return dpid ? [{ dpid, actions: p.actions }] : [];
  });
}

/** What an ARP packet or a neighbour advertisement says: `ip` is at `mac` (lower case). */
export interface NeighborClaim {
  ip: string;
  mac: string;
  /** An advertisement without the override flag (RFC 4861 4.4): it may not change a known MAC. */
  noOverride?: boolean;
  /** An advertisement without its target link-layer option: `mac` is the frame's source. */
  macFromFrame?: boolean;
}

/**
 * The place a claim (an ARP packet's sender, an advertisement's target) from `inPort` of `dpid`
 * speaks from, if it may speak for the address in the network; else why not (logged at debug,
 * the packet ignored).
 */
export function answerPlace(
  ctx: NeighborContext,
  dpid: string,
  inPort: number,
  networkId: string,
  claim: NeighborClaim,
): NeighborPlace | string {
  const net = ctx.network(networkId);
  const iface = ctx.routerInterface(networkId);
  const chassisId = ctx.chassisOfDatapath(dpid);
  if (!net || !iface) return 'no router on this network';
  if (!chassisId) return `${dpid} is the datapath of no chassis weft knows`;
  const at = { dpid, chassisId, vni: net.vni, gatewayMac: iface.mac.toLowerCase() };
  const allowed = ctx.vipAllowed(networkId, claim.ip);
  if (allowed.length > 0) {
    const h = ctx
      .vipHolders(networkId, claim.ip)
      .find((x) => x.chassisId === chassisId && x.ofport === inPort);
    if (!h)
      return `${claim.ip} is allowed to ${allowed.join(', ')}: only they answer for it, from their ports`;
    if (h.mac !== claim.mac) return `sender MAC ${claim.mac} is not ${h.endpointId}'s ${h.mac}`;
    return { ...at, bindingId: '', endpointId: h.endpointId, ofport: inPort, vlan: 0 };
  }
  const port = ctx.vlanPorts(networkId).find((p) => p.chassisId === chassisId && p.ofport === inPort);
  if (!port) return `port ${inPort} of ${dpid} is no VLAN binding of ${networkId}`;
  // A link-local address (fe80::/10) is on every link: a physical router's, a static route's next hop.
  if (!isLinkLocal6(claim.ip) && !net.subnets.some((c) => prefixHolding(c, claim.ip) >= 0))
    return `${claim.ip} is outside ${net.id}'s subnets`;
  const noHost = whyNoHostAt(claim.ip, net.subnets);
  if (noHost) return `sender address: ${noHost.replace('its destination ', '')}`;
  const owner = ctx.endpointByIp(networkId, claim.ip) ?? ctx.endpointByMac(networkId, claim.mac);
  if (owner)
    return `${claim.ip} / ${claim.mac} belongs to endpoint ${owner.id}: weft knows it from the intent`;
  if (claim.mac === '00:00:00:00:00:00' || isMulticastMac(claim.mac))
    return `sender MAC ${claim.mac} is not a unicast address`;
  if (claim.mac.startsWith(ROUTER_MAC_PREFIX)) return `sender MAC ${claim.mac} is a weft router's`;
  return { ...at, bindingId: port.bindingId, ofport: port.ofport, vlan: port.vlan };
}

/**
 * Why an entry no longer stands, from the intent and facts now: its network or the router's
 * interface on it is gone, an endpoint now holds its address (or, behind a VLAN binding, its MAC),
 * its VIP holder is no longer allowed it, bound there or has another MAC, or its binding is gone or
 * changed. Its flows could otherwise send a tenant's traffic into a VLAN since bound to another
 * network, or to a VM no longer allowed the address.
 */
export function staleness(
  ctx: NeighborContext,
  n: NeighborKey & { state: NeighborState; mac?: string; place?: NeighborPlace },
): string | undefined {
  if (!ctx.network(n.networkId)) return 'its network is gone';
  const iface = ctx.routerInterface(n.networkId);
  if (!iface) return 'no router has an interface on its network any more';
  if (n.ip.includes(':') && iface.ipv6 === undefined)
    return 'the router has no IPv6 address on its network any more';
  const fixed = ctx.endpointByIp(n.networkId, n.ip);
  if (fixed) return `endpoint ${fixed.id} now holds its address`;
  if (ctx.isNatAddress?.(n.networkId, n.ip))
    return 'it is a floating IP or the SNAT address of the router now';
  const p = n.place;
  if (!p) return undefined;
  if (p.endpointId !== undefined) {
    const h = ctx.vipHolders(n.networkId, n.ip).find((x) => x.endpointId === p.endpointId);
    if (!h) return `endpoint ${p.endpointId} is no longer allowed ${n.ip}, or no longer bound`;
    if (h.chassisId !== p.chassisId || h.ofport !== p.ofport) return `endpoint ${p.endpointId} moved`;
    return h.mac === n.mac ? undefined : `endpoint ${p.endpointId} has another MAC now`;
  }
  const byMac = n.mac && ctx.endpointByMac(n.networkId, n.mac);
  if (byMac) return `endpoint ${byMac.id} now holds its MAC`;
  if (ctx.vipAllowed(n.networkId, n.ip).length > 0)
    return `${n.ip} is allowed to endpoints now: only they hold it`;
  const bound = ctx
    .vlanPorts(n.networkId)
    .some(
      (v) =>
        v.bindingId === p.bindingId &&
        v.chassisId === p.chassisId &&
        v.ofport === p.ofport &&
        v.vlan === p.vlan,
    );
  return bound ? undefined : `its VLAN binding ${p.bindingId || `(port ${p.ofport})`} is gone or changed`;
}
