import { prefixHolding } from '../../controller/intent/net.js';
import type { DesiredFlow } from '../../controller/pipeline/flow.js';
import { apply, setField } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { arpAnswerFlow } from '../arp-responder/compute.js';
import type { FloatingIp, RouterPort } from '../view.js';
import { IS_IP, routerAddressGuardFlows } from './guard.js';
import { FLOATING_DNAT_PRIORITY } from './priorities.js';

/**
 * Floating IPs: stateless 1:1 NAT between a router's external network (the one holding the
 * floating address, usually bound to a physical VLAN) and the network of the fixed address. It is
 * as distributed as the routing it rides on, and needs no conntrack: each direction is one
 * rewrite in l3-route, on the chassis that routes the packet anyway.
 *
 * On every chassis hosting the external network (its network unit):
 * - arp-responder: the floating IP is answered with the router's MAC there, as its gateway address
 *   is (hosts on that network send to it through the router);
 * - port-security: no VM speaks as the floating IP (ARP or IP from it dropped, above every
 *   endpoint's pass flows, as for the gateway's address: a VM allowed a prefix holding it would
 *   otherwise take its traffic);
 * - l3-route: IPv4 to the router's MAC for the floating IP: destination rewritten to the fixed
 *   address, then routed as this network's packets to the fixed address are (the connected route,
 *   or a static route covering it, through a firewall VM say) at FLOATING_DNAT_PRIORITY, above the
 *   routes; and packets to the fixed address itself dropped there: its answers would leave as the
 *   floating IP (stateless NAT cannot tell them apart), so the external side reaches it only at
 *   its floating IP.
 * On every chassis hosting the internal network (its network unit), per route the router has into
 * the external network (its subnets, the static routes via a next hop there): the same route for
 * packets from the fixed address, which also rewrites their source to the floating IP, one priority
 * above it (route4Priority): whatever the fixed address sends out to the external side leaves as the
 * floating IP, and answers to it come back through the inbound rewrite. OVS fixes the IPv4, TCP and
 * UDP checksums on the rewrite.
 *
 * Not translated: a packet from another internal network to a floating IP (it is routed to the
 * external network, where no host holds the address: use the fixed address inside the router).
 */

/** One IPv4 l3-route flow of a network (a connected subnet or a static route) and its prefix. */
export interface RouteOf {
  cidr: string;
  flow: DesiredFlow;
}

/** The route the network's flows take for `ip`: the longest prefix holding it, as OVS picks by priority. */
function routeFor(routes: readonly RouteOf[], ip: string): DesiredFlow | undefined {
  let best: RouteOf | undefined;
  let bestLength = -1;
  for (const r of routes) {
    const length = prefixHolding(r.cidr, ip);
    if (length > bestLength) {
      best = r;
      bestLength = length;
    }
  }
  return best?.flow;
}

/** `route`'s instructions with `also` appended to its actions. */
function withActions(route: DesiredFlow, ...also: Action[]): DesiredFlow['instructions'] | undefined {
  const [first, ...rest] = route.instructions;
  if (first?.type !== 'apply_actions') return undefined;
  return [apply(...first.actions, ...also), ...rest];
}

/**
 * The external network's side: ARP answers, the spoofing guard, the inbound rewrite, which then
 * takes the route this network's packets to the fixed address take (`routes`: its IPv4 routes,
 * a static route through a firewall VM included); and packets to the fixed address itself
 * dropped: its answers would leave translated (stateless NAT cannot tell them apart), so from the
 * external side it is reachable at its floating IP only.
 */
export function floatingInboundFlows(
  cookie: bigint,
  meta: OxmTlv,
  toGateway: OxmTlv,
  self: RouterPort,
  floating: readonly FloatingIp[],
  routes: readonly RouteOf[],
  flows: DesiredFlow[],
): void {
  for (const f of floating) {
    if (f.external.networkId !== self.networkId) continue;
    flows.push(arpAnswerFlow(meta, f.ip, self.mac, cookie));
    routerAddressGuardFlows(cookie, meta, f.ip, flows);
    const route = routeFor(routes, f.fixedIp);
    const instructions = route && withActions(route, setField('ipv4_dst', f.fixedIp));
    if (!instructions) continue;
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: FLOATING_DNAT_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IP, { field: 'ipv4_dst', value: f.ip }],
      instructions,
    });
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: FLOATING_DNAT_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IP, { field: 'ipv4_dst', value: f.fixedIp }],
      instructions: [],
    });
  }
}

/**
 * The internal network's side: `routeInto` is one IPv4 l3-route flow of this network into the
 * network with VNI `vni`; for each floating IP whose fixed address is on this network and whose
 * external side is that network, its variant for packets from the fixed address, source rewritten.
 */
export function floatingOutboundFlows(
  self: RouterPort,
  floating: readonly FloatingIp[],
  vni: number,
  routeInto: DesiredFlow,
  flows: DesiredFlow[],
): void {
  for (const f of floating) {
    if (f.internal.networkId !== self.networkId || f.external.vni !== vni) continue;
    const instructions = withActions(routeInto, setField('ipv4_src', f.ip));
    if (!instructions) continue;
    flows.push({
      tableId: routeInto.tableId,
      priority: routeInto.priority + 1,
      cookie: routeInto.cookie,
      match: [...routeInto.match, { field: 'ipv4_src', value: f.fixedIp }],
      instructions,
    });
  }
}
