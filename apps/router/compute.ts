import { parseCidr } from '../../controller/intent/net.js';
import { objectCookie } from '../../controller/pipeline/cookies.js';
import {
  apply,
  type DesiredFlow,
  goto,
  move,
  output,
  setField,
  TO_CONTROLLER,
  writeMetadata,
} from '../../controller/pipeline/flow.js';
import {
  METADATA_VNI_MASK,
  metadataForVni,
  REG_NEXTHOP,
  REG_VIA_NEXTHOP,
} from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { isIpv4, parseIpv4 } from '../../southbound/openflow/codec/values.js';
import { addressTlv } from '../acl/l3l4.js';
import { arpAnswerFlow } from '../arp-responder/compute.js';
import { frozen, vniMetadataTlv } from '../interned.js';
import type { NetworkOnChassis, RouterPort, StaticRoute, VlanPort } from '../view.js';
import { backToVlanPort } from '../vlan/compute.js';
import { floatingInboundFlows, floatingOutboundFlows, type RouteOf } from './floating.js';
import { IS_ARP, IS_IP, routerAddressGuardFlows } from './guard.js';
import { endpointNeighbor6Flows, routerNetworkFlows6 } from './ipv6.js';
import {
  ARP_REPLY_PRIORITY,
  ARP_WATCH_PRIORITY,
  COPY_UP_AND_ROUTE,
  ECHO_PRIORITY,
  NO_ROUTE_PRIORITY,
  NOT_ROUTED_PRIORITY,
  ROUTER_ADDRESS_PRIORITY,
  route4Priority,
  TTL_PRIORITY,
} from './priorities.js';
import { snatFlows } from './snat.js';

/**
 * Distributed routing between the networks of one router: every chassis hosting one of them
 * routes what its own VMs send, so there is no gateway node and a routed packet crosses the
 * underlay at most once (straight to the hypervisor of its destination).
 *
 * Per network with a router interface, on each chassis hosting it (the network unit):
 * - arp-responder: the gateway IP is answered with the gateway MAC (VMs find their router).
 * - l3-route, IPv4 to the gateway MAC:
 *   - an ICMP echo request to any interface IP of the router is answered in place (priority 300;
 *     301 per VLAN binding port, whose answer is tagged again);
 *   - a destination in a subnet of a network of the router: TTL decremented, the destination
 *     network's gateway MAC into eth_src, its VNI into metadata, on to l3-neighbor (priority
 *     100 + 2 x prefix length, route4Priority: the longest prefix wins; a floating IP's variant of a
 *     route, one above it: ./floating.ts);
 *   - a destination of an IPv4 static route: the same, with the next hop VM's MAC into eth_dst,
 *     straight on to l2-lookup (same priorities, so connected and static routes compete by prefix
 *     length); a next hop no bound endpoint holds goes into reg4 instead, on to l3-neighbor, where
 *     the MAC the controller learns by ARP completes it (controller/router/neighbor-*); IPv6
 *     static routes are ./ipv6.ts's;
 *   - where a VLAN binding port of the network is local, ARP replies to the gateway MAC go up to
 *     the controller (priority 280): the hosts behind it answering the router's ARP requests;
 *   - anything else to a router address goes up to the controller, which answers port or protocol
 *     unreachable (priority 290: the router runs no service);
 *   - a TTL of 1 or 0 goes up to the controller, which answers time exceeded (priority 250, above
 *     every route: the router would have to decrement it to zero); this is traceroute's hop;
 *   - any other IPv4 packet sent to the gateway goes up, for a net unreachable (priority 10);
 *   - what is not IPv4 is dropped here, by a flow that says so (priority 5).
 * (controller/router answers them; the l3-neighbor table's miss, a routed packet to an address
 * no endpoint holds, goes up for a host unreachable.)
 * Per endpoint address of a routed network, on every chassis hosting the network (the endpoint's
 * ARP unit, the same everywhere):
 * - l3-neighbor: `ipv4_dst=<address>` -> the endpoint's MAC into eth_dst, on to l2-lookup, which
 *   delivers it locally (through the destination's ingress policy) or into the tunnel.
 * The source network's egress policy ran before l3-route; the destination's ingress policy runs
 * after l2-lookup, so routed traffic meets both as bridged traffic does.
 */

export const ARP_REPLY = frozen({ field: 'arp_op', value: 2 });
export const ARP_REQUEST = frozen({ field: 'arp_op', value: 1 });
export const BROADCAST = frozen({ field: 'eth_dst', value: 'ff:ff:ff:ff:ff:ff' });
const IS_ICMP = frozen({ field: 'ip_proto', value: 1 });
const ECHO_REQUEST = frozen({ field: 'icmp_type', value: 8 });
const ECHO_REPLY = 0;
const TO_NEIGHBOR = goto(TABLE.L3_NEIGHBOR);
const TO_L2 = goto(TABLE.L2_LOOKUP);

const TTL_RUNS_OUT = [frozen({ field: 'nw_ttl', value: 0 }), frozen({ field: 'nw_ttl', value: 1 })];

/** `ipv4_dst=<cidr>` (masked unless a /32), or undefined for a /0 or a non-IPv4 prefix. */
export function ipv4DstTlv(cidr: string): { tlv: OxmTlv; prefix: number } | undefined {
  const c = parseCidr(cidr);
  if (typeof c === 'string' || c.family !== 4) return undefined;
  const tlv = addressTlv('dst', c.text, 4);
  return tlv && { tlv, prefix: c.prefix };
}

/** The network's gateway: its ARP answer and its l3-route flows. */
export function routerNetworkFlows(
  net: Pick<NetworkOnChassis, 'vni' | 'router'> & { vlanPorts?: readonly VlanPort[] },
  flows: DesiredFlow[],
): void {
  const r = net.router;
  if (!r) return;
  const cookie = objectCookie('router', 'router', r.routerId);
  const meta = vniMetadataTlv.get(net.vni);
  const toGateway = { field: 'eth_dst', value: r.self.mac };
  /** This network's IPv4 routes (connected and static) with their prefixes: a floating IP's inbound flow follows one. */
  const routes4: RouteOf[] = [];
  flows.push(arpAnswerFlow(meta, r.self.ip, r.self.mac, cookie));
  // No VM speaks as the gateway, even one allowed a prefix holding its address (allowedAddresses):
  // its ARP would take the network's routed traffic.
  routerAddressGuardFlows(cookie, meta, r.self.ip, flows);
  /** A ping to `ip`, answered back where it came from (tagged again from a VLAN binding port). */
  const echoFlows = (ip: string) => {
    flows.push(echoReplyFlow(cookie, [meta, toGateway], r.self.mac, ip, [output(ofpp.IN_PORT)]));
    // From a host behind a VLAN binding: the reply goes back tagged (classify took the tag off).
    for (const v of net.vlanPorts ?? []) {
      const fromPort = [{ field: 'in_port', value: v.ofport }, meta, toGateway];
      flows.push(echoReplyFlow(cookie, fromPort, r.self.mac, ip, backToVlanPort(v), ECHO_PRIORITY + 1));
    }
  };
  // A dedicated SNAT address (./snat.ts) answers pings too, on its own network.
  if (r.snat && r.snat.ip !== r.self.ip) echoFlows(r.snat.ip);
  for (const p of r.ports) {
    echoFlows(p.ip);
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: ROUTER_ADDRESS_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IP, { field: 'ipv4_dst', value: p.ip }],
      instructions: TO_CONTROLLER,
    });
    routeFlows(cookie, meta, toGateway, p, flows, (f, cidr) => {
      routes4.push({ cidr, flow: f });
      floatingOutboundFlows(r.self, r.floatingIps, p.vni, f, flows);
    });
  }
  routerNetworkFlows6(cookie, meta, r.self, r.ports, net.vlanPorts ?? [], r.routes, flows);
  for (const v of net.vlanPorts ?? []) {
    const fromPort = { field: 'in_port', value: v.ofport };
    // The ARP of hosts behind a VLAN binding, for the neighbour resolution (controller/router):
    // their answers to the router's requests, up (priority 280); their requests not for an
    // endpoint (those are answered above) and their broadcast replies, copied up on their way (a
    // gratuitous ARP, as a keepalived or firewall pair failing over sends, moves a neighbour weft
    // learned at once). Only from the binding's port: no VM can make weft work for it this way.
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: ARP_REPLY_PRIORITY,
      cookie,
      match: [fromPort, meta, toGateway, IS_ARP, ARP_REPLY],
      instructions: TO_CONTROLLER,
    });
    for (const announce of [[ARP_REQUEST], [ARP_REPLY, BROADCAST]]) {
      flows.push({
        tableId: TABLE.ARP_RESPONDER,
        priority: ARP_WATCH_PRIORITY,
        cookie,
        match: [fromPort, meta, IS_ARP, ...announce],
        instructions: COPY_UP_AND_ROUTE,
      });
    }
  }
  for (const ttl of TTL_RUNS_OUT) {
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: TTL_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IP, ttl],
      instructions: TO_CONTROLLER,
    });
  }
  for (const route of r.routes) {
    const flow = staticRouteFlow(cookie, meta, toGateway, route);
    if (!flow) continue;
    flows.push(flow);
    routes4.push({ cidr: route.destination, flow });
    floatingOutboundFlows(r.self, r.floatingIps, route.via.vni, flow, flows);
  }
  floatingInboundFlows(cookie, meta, toGateway, r.self, r.floatingIps, routes4, flows);
  snatFlows(cookie, meta, toGateway, r, net.vlanPorts ?? [], flows);
  flows.push({
    tableId: TABLE.L3_ROUTE,
    priority: NO_ROUTE_PRIORITY,
    cookie,
    match: [meta, toGateway, IS_IP],
    instructions: TO_CONTROLLER,
  });
  flows.push({
    tableId: TABLE.L3_ROUTE,
    priority: NOT_ROUTED_PRIORITY,
    cookie,
    match: [meta, toGateway],
    instructions: [],
  });
}

/** A ping to one of the router's addresses: the request turned into the reply, back where it came from (`out`). */
function echoReplyFlow(
  cookie: bigint,
  from: OxmTlv[],
  gatewayMac: string,
  routerIp: string,
  out: Action[],
  priority = ECHO_PRIORITY,
): DesiredFlow {
  return {
    tableId: TABLE.L3_ROUTE,
    priority,
    cookie,
    match: [...from, IS_IP, IS_ICMP, ECHO_REQUEST, { field: 'ipv4_dst', value: routerIp }],
    instructions: [
      apply(
        move('eth_src', 'eth_dst', 48),
        setField('eth_src', gatewayMac),
        // The names OVS dumps the fields by (the reconciler compares moves by name).
        move('ip_src', 'ip_dst', 32),
        setField('ipv4_src', routerIp),
        // OVS adjusts the ICMP checksum when it rewrites the type.
        setField('icmp_type', ECHO_REPLY),
        ...out,
      ),
    ],
  };
}

/** Into one network of the router: a flow per IPv4 subnet of it. */
function routeFlows(
  cookie: bigint,
  meta: OxmTlv,
  toGateway: OxmTlv,
  into: RouterPort,
  flows: DesiredFlow[],
  then: (route: DesiredFlow, cidr: string) => void,
): void {
  for (const cidr of into.cidrs) {
    const dst = ipv4DstTlv(cidr);
    if (!dst) continue;
    const flow: DesiredFlow = {
      tableId: TABLE.L3_ROUTE,
      priority: route4Priority(dst.prefix),
      cookie,
      match: [meta, toGateway, IS_IP, dst.tlv],
      instructions: [
        apply({ type: 'dec_nw_ttl' }, setField('eth_src', into.mac)),
        writeMetadata(metadataForVni(into.vni), METADATA_VNI_MASK),
        TO_NEIGHBOR,
      ],
    };
    flows.push(flow);
    then(flow, cidr);
  }
}

/**
 * A static route: its destination to the next hop, as if the sender had sent it there itself (TTL
 * decremented, the gateway's MAC on the next hop's network as source, that network's VNI); same
 * priority scheme as connected routes, so the longest prefix wins among both. Via a bound
 * endpoint: its MAC as destination, straight on to l2-lookup. Via any other address: that address
 * into reg4 (reg3=1) and on to l3-neighbor, where the MAC the controller learned by ARP completes
 * it, or, not learned yet, the packet goes up to the controller, which resolves it.
 */
function staticRouteFlow(
  cookie: bigint,
  meta: OxmTlv,
  toGateway: OxmTlv,
  route: StaticRoute,
): DesiredFlow | undefined {
  const dst = ipv4DstTlv(route.destination);
  // 0.0.0.0/0 (a default route) has no ipv4_dst match: it is every IPv4 packet to the gateway. An
  // IPv6 route (no ipv4_dst, not 0.0.0.0/0) is ./ipv6.ts's.
  const prefix = dst?.prefix ?? 0;
  if (!dst && route.destination !== '0.0.0.0/0') return undefined;
  const via = route.via;
  const toNextHop =
    via.kind === 'endpoint'
      ? [setField('eth_dst', via.mac)]
      : [setField(REG_NEXTHOP, parseIpv4(via.nexthop)), setField(REG_VIA_NEXTHOP, 1)];
  return {
    tableId: TABLE.L3_ROUTE,
    priority: route4Priority(prefix),
    cookie,
    match: dst ? [meta, toGateway, IS_IP, dst.tlv] : [meta, toGateway, IS_IP],
    instructions: [
      apply({ type: 'dec_nw_ttl' }, setField('eth_src', via.gatewayMac), ...toNextHop),
      writeMetadata(metadataForVni(via.vni), METADATA_VNI_MASK),
      via.kind === 'endpoint' ? TO_L2 : TO_NEIGHBOR,
    ],
  };
}

/** l3-neighbor: each IPv4 address of an endpoint of a routed network leads to its MAC (IPv6: ./ipv6.ts). */
export function endpointNeighborFlows(
  net: Pick<NetworkOnChassis, 'vni'>,
  ep: { endpointId: string; mac: string; ips: readonly string[] },
  flows: DesiredFlow[],
): void {
  const meta = vniMetadataTlv.get(net.vni);
  const cookie = objectCookie('router', 'endpoint', ep.endpointId);
  let instructions: DesiredFlow['instructions'] | undefined;
  for (const ip of ep.ips) {
    if (!isIpv4(ip)) continue;
    instructions ??= [apply(setField('eth_dst', ep.mac)), TO_L2];
    flows.push({
      tableId: TABLE.L3_NEIGHBOR,
      priority: 100,
      cookie,
      match: [meta, IS_IP, { field: 'ipv4_dst', value: ip }],
      instructions,
    });
  }
  endpointNeighbor6Flows(meta, cookie, ep, flows);
}
