import { routerLinkLocal } from '../../controller/intent/model-router.js';
import { parseCidr } from '../../controller/intent/net.js';
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
  nextHop6Words,
  REG_NEXTHOP6,
  REG_VIA_NEXTHOP,
} from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { addressTlv } from '../acl/l3l4.js';
import { ndRouterAnswerFlow } from '../arp-responder/nd.js';
import { frozen } from '../interned.js';
import type { RouterPort, StaticRoute, VlanPort } from '../view.js';
import { backToVlanPort } from '../vlan/compute.js';
import {
  ARP_WATCH_PRIORITY,
  COPY_UP_AND_ROUTE,
  ECHO_PRIORITY,
  LINK_LOCAL_DROP_PRIORITY,
  ND_REPLY_PRIORITY,
  NO_ROUTE_PRIORITY,
  ROUTE_PRIORITY_BASE,
  ROUTER_ADDRESS_PRIORITY,
  TTL_PRIORITY,
} from './priorities.js';

/**
 * IPv6 on a router, beside its IPv4 (apps/router/compute.ts), for each network where the router
 * has an IPv6 address (RouterPort.ipv6), on each chassis hosting the network:
 * - arp-responder: a neighbour solicitation for the gateway's IPv6 address, or for its link-local
 *   address (routerLinkLocal: the EUI-64 of the gateway MAC, where router advertisements come
 *   from), is answered in the switch with the gateway MAC and the router flag
 *   (apps/arp-responder/nd.ts), so VMs find their router as they do by ARP; a router
 *   solicitation goes up to the controller, which answers with a router advertisement
 *   (controller/router/ra-*), and is not flooded.
 * - l3-route, IPv6 to the gateway MAC:
 *   - an ICMPv6 echo request to any IPv6 address of the router is answered in place (priority 300;
 *     301 per VLAN binding port, answered tagged);
 *   - a destination in an IPv6 subnet of a network of the router: hop limit decremented, the
 *     destination network's gateway MAC into eth_src, its VNI into metadata, on to l3-neighbor
 *     (priority 100 + prefix length, so the longest prefix wins; /128 is 228, below the rest);
 *   - a destination of an IPv6 static route (staticRoute6Flow): the same, with the next hop
 *     endpoint's MAC into eth_dst, straight on to l2-lookup (same priorities: connected and static
 *     routes compete by prefix length; ::/0 matches no address, at 100); a next hop no bound
 *     endpoint holds goes into reg8..reg11 instead, on to l3-neighbor, as an IPv4 one into reg4;
 *   - what it cannot forward goes up to the controller, which answers the ICMPv6 error as for
 *     IPv4 (controller/router): a hop limit of 1 or 0 (priority 250: time exceeded), anything
 *     else to a router address (290: port or protocol unreachable), any other IPv6 to the gateway
 *     (10: no route).
 * - where a VLAN binding port of the network is local (ndWatchFlows): neighbour advertisements
 *   from it to the gateway MAC go up (l3-route, priority 295: a host answering the router's
 *   solicitation), unsolicited ones to ff02::1 are copied up on their way (arp-responder, 50: a
 *   failover moving an address), for the neighbour resolution (controller/router/neighbor-*).
 * - l3-neighbor: each IPv6 address of an endpoint of a routed network leads to its MAC
 *   (endpointNeighbor6Flows); any other IPv6 destination meets the table's miss, up to the
 *   controller, which resolves it by neighbour solicitation behind a VLAN binding or among a
 *   VIP's endpoints (the learned flows then lead there), else answers address unreachable.
 */

const IS_IPV6 = frozen({ field: 'eth_type', value: 0x86dd });
const IS_ICMPV6 = frozen({ field: 'ip_proto', value: 58 });
const ECHO_REQUEST = frozen({ field: 'icmpv6_type', value: 128 });
const ROUTER_SOLICITATION = frozen({ field: 'icmpv6_type', value: 133 });
const IS_NA = frozen({ field: 'icmpv6_type', value: 136 });
const TO_ALL_NODES = frozen({ field: 'ipv6_dst', value: 'ff02::1' });
/** port-security: above every endpoint's flows there (at most 125). */
export const ROUTER_SPOOF_PRIORITY = 130;
const CODE_0 = frozen({ field: 'icmpv6_code', value: 0 });
/** arp-responder: a VM's router solicitation goes up for the controller's advertisement (not flooded). */
export const ROUTER_SOLICITATION_PRIORITY = 100;
const ECHO_REPLY = 129;
const HOP_LIMIT_RUNS_OUT = [frozen({ field: 'nw_ttl', value: 0 }), frozen({ field: 'nw_ttl', value: 1 })];
/** The hop limit of the router's own answers (what Linux sends with). */
const ANSWER_HOP_LIMIT = 64;
const TO_NEIGHBOR = goto(TABLE.L3_NEIGHBOR);
const TO_L2 = goto(TABLE.L2_LOOKUP);

/** `ipv6_dst=<cidr>` (masked unless a /128), or undefined for ::/0 or a non-IPv6 prefix. */
export function ipv6DstTlv(cidr: string): { tlv: OxmTlv; prefix: number } | undefined {
  const c = parseCidr(cidr);
  if (typeof c === 'string' || c.family !== 6) return undefined;
  const tlv = addressTlv('dst', c.text, 6);
  return tlv && { tlv, prefix: c.prefix };
}

/** ipv6_dst=fe80::/10: a link-local destination, which no router forwards. */
const LINK_LOCAL_DST = frozen(ipv6DstTlv('fe80::/10')!.tlv);
/** ipv6_src=fe80::/10: a link-local source, which no router forwards either. */
const LINK_LOCAL_SRC = frozen(addressTlv('src', 'fe80::/10', 6)!);

/** The IPv6 part of one network's gateway (net.router.self has an IPv6 address), into `flows`. */
export function routerNetworkFlows6(
  cookie: bigint,
  meta: OxmTlv,
  self: RouterPort,
  ports: readonly RouterPort[],
  vlanPorts: readonly VlanPort[],
  routes: readonly StaticRoute[],
  flows: DesiredFlow[],
): void {
  if (self.ipv6 === undefined) return;
  const toGateway: OxmTlv = { field: 'eth_dst', value: self.mac };
  const linkLocal = routerLinkLocal(self.mac);
  flows.push(ndRouterAnswerFlow(meta, self.ipv6, self.mac, cookie));
  flows.push(ndRouterAnswerFlow(meta, linkLocal, self.mac, cookie));
  // No VM may speak as the router: its link-local address is where VMs' default route points
  // (router advertisements), and port security lets any link-local source and ND target by; its
  // global address may lie in a prefix an endpoint is allowed (allowedAddresses).
  for (const address of [linkLocal, self.ipv6]) {
    flows.push({
      tableId: TABLE.PORT_SECURITY,
      priority: ROUTER_SPOOF_PRIORITY,
      cookie,
      match: [meta, IS_IPV6, { field: 'ipv6_src', value: address }],
      instructions: [],
    });
    flows.push({
      tableId: TABLE.PORT_SECURITY,
      priority: ROUTER_SPOOF_PRIORITY,
      cookie,
      match: [meta, IS_IPV6, IS_ICMPV6, IS_NA, CODE_0, { field: 'nd_target', value: address }],
      instructions: [],
    });
  }
  flows.push({
    tableId: TABLE.ARP_RESPONDER,
    priority: ROUTER_SOLICITATION_PRIORITY,
    cookie,
    match: [meta, IS_IPV6, IS_ICMPV6, ROUTER_SOLICITATION, CODE_0],
    instructions: TO_CONTROLLER,
  });
  const echoFlows = (ip: string) => {
    const echo = (from: OxmTlv[], out: Action[], priority: number): DesiredFlow => ({
      tableId: TABLE.L3_ROUTE,
      priority,
      cookie,
      match: [...from, IS_IPV6, IS_ICMPV6, ECHO_REQUEST, { field: 'ipv6_dst', value: ip }],
      instructions: [apply(...echoReplyActions(self.mac, ip), ...out)],
    });
    flows.push(echo([meta, toGateway], [output(ofpp.IN_PORT)], ECHO_PRIORITY));
    for (const v of vlanPorts) {
      flows.push(
        echo([{ field: 'in_port', value: v.ofport }, meta, toGateway], backToVlanPort(v), ECHO_PRIORITY + 1),
      );
    }
  };
  // Its link-local address answers pings on its own link only (as any link-local address).
  echoFlows(linkLocal);
  // Link-local destinations are never routed (RFC 4291 2.5.6), whatever ::/0 says (a default route
  // via an upstream's fe80:: address): the router's own goes up as its other addresses do, for a
  // port unreachable; any other is dropped, above every route and the hop limit check.
  flows.push({
    tableId: TABLE.L3_ROUTE,
    priority: ROUTER_ADDRESS_PRIORITY,
    cookie,
    match: [meta, toGateway, IS_IPV6, { field: 'ipv6_dst', value: linkLocal }],
    instructions: TO_CONTROLLER,
  });
  // Nor a link-local source (RFC 4291 2.5.6): its answers could not find the way back.
  for (const linkLocalOnly of [LINK_LOCAL_DST, LINK_LOCAL_SRC]) {
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: LINK_LOCAL_DROP_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IPV6, linkLocalOnly],
      instructions: [],
    });
  }
  for (const p of ports) {
    if (p.ipv6 === undefined) continue;
    echoFlows(p.ipv6);
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: ROUTER_ADDRESS_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IPV6, { field: 'ipv6_dst', value: p.ipv6 }],
      instructions: TO_CONTROLLER,
    });
    for (const cidr of p.cidrs6) {
      const dst = ipv6DstTlv(cidr);
      if (!dst) continue;
      flows.push({
        tableId: TABLE.L3_ROUTE,
        priority: ROUTE_PRIORITY_BASE + dst.prefix,
        cookie,
        match: [meta, toGateway, IS_IPV6, dst.tlv],
        instructions: [
          apply({ type: 'dec_nw_ttl' }, setField('eth_src', p.mac)),
          writeMetadata(metadataForVni(p.vni), METADATA_VNI_MASK),
          TO_NEIGHBOR,
        ],
      });
    }
  }
  for (const v of vlanPorts) {
    ndWatchFlows(cookie, { field: 'in_port', value: v.ofport }, meta, self.mac, undefined, flows);
  }
  for (const hopLimit of HOP_LIMIT_RUNS_OUT) {
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: TTL_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IPV6, hopLimit],
      instructions: TO_CONTROLLER,
    });
  }
  for (const route of routes) {
    const flow = staticRoute6Flow(cookie, meta, toGateway, route);
    if (flow) flows.push(flow);
  }
  flows.push({
    tableId: TABLE.L3_ROUTE,
    priority: NO_ROUTE_PRIORITY,
    cookie,
    match: [meta, toGateway, IS_IPV6],
    instructions: TO_CONTROLLER,
  });
}

/**
 * An IPv6 static route: its destination to the next hop, as if the sender had sent it there itself
 * (hop limit decremented, the gateway's MAC on the next hop's network as source, that network's
 * VNI). Via a bound endpoint (an appliance VM): its MAC as destination, on to l2-lookup. Via any
 * other address (a physical router behind a VLAN binding): that address into reg8..reg11 (reg3=1)
 * and on to l3-neighbor, where the MAC the controller learned by neighbour discovery completes it,
 * or, not learned yet, the packet goes up for its resolution. Undefined for an IPv4 route
 * (apps/router/compute.ts).
 */
function staticRoute6Flow(
  cookie: bigint,
  meta: OxmTlv,
  toGateway: OxmTlv,
  route: StaticRoute,
): DesiredFlow | undefined {
  const via = route.via;
  if (via.kind !== 'endpoint' && !via.nexthop.includes(':')) return undefined;
  const dst = ipv6DstTlv(route.destination);
  // ::/0 (the default route) has no ipv6_dst match: it is every IPv6 packet to the gateway.
  if (!dst && route.destination !== '::/0') return undefined;
  return {
    tableId: TABLE.L3_ROUTE,
    priority: ROUTE_PRIORITY_BASE + (dst?.prefix ?? 0),
    cookie,
    match: dst ? [meta, toGateway, IS_IPV6, dst.tlv] : [meta, toGateway, IS_IPV6],
    instructions: [
      apply(
        { type: 'dec_nw_ttl' },
        setField('eth_src', via.gatewayMac),
        ...(via.kind === 'endpoint'
          ? [setField('eth_dst', via.mac)]
          : [
              ...nextHop6Words(via.nexthop).map((w, i) => setField(REG_NEXTHOP6[i]!, w)),
              setField(REG_VIA_NEXTHOP, 1),
            ]),
      ),
      writeMetadata(metadataForVni(via.vni), METADATA_VNI_MASK),
      via.kind === 'endpoint' ? TO_L2 : TO_NEIGHBOR,
    ],
  };
}

/** An echo request to `routerIp` turned into its reply in place (OVS fixes the ICMPv6 checksum). */
function echoReplyActions(gatewayMac: string, routerIp: string): Action[] {
  return [
    move('eth_src', 'eth_dst', 48),
    setField('eth_src', gatewayMac),
    move('ipv6_src', 'ipv6_dst', 128),
    setField('ipv6_src', routerIp),
    setField('nw_ttl', ANSWER_HOP_LIMIT),
    setField('icmpv6_type', ECHO_REPLY),
  ];
}

/** l3-neighbor: each IPv6 address of an endpoint of a routed network leads to its MAC. */
export function endpointNeighbor6Flows(
  meta: OxmTlv,
  cookie: bigint,
  ep: { mac: string; ips: readonly string[] },
  flows: DesiredFlow[],
): void {
  let instructions: DesiredFlow['instructions'] | undefined;
  for (const ip of ep.ips) {
    if (!ip.includes(':')) continue; // canonical intent text: a colon is IPv6
    instructions ??= [apply(setField('eth_dst', ep.mac)), TO_L2];
    flows.push({
      tableId: TABLE.L3_NEIGHBOR,
      priority: 100,
      cookie,
      match: [meta, IS_IPV6, { field: 'ipv6_dst', value: ip }],
      instructions,
    });
  }
}

/**
 * The neighbour advertisements the router's neighbour resolution reads from one port (a VLAN
 * binding's, or a VIP holder's: then only for `target`): answers to the router (to its gateway
 * MAC) go up; unsolicited ones to all nodes (a host or keepalived announcing an address it took
 * over) are copied up and go on. Port security has let a VM's through only for its own addresses.
 */
export function ndWatchFlows(
  cookie: bigint,
  inPort: OxmTlv,
  meta: OxmTlv,
  gatewayMac: string,
  target: string | undefined,
  flows: DesiredFlow[],
): void {
  const na = [IS_IPV6, IS_ICMPV6, IS_NA, CODE_0];
  const of = target === undefined ? [] : [{ field: 'nd_target', value: target }];
  flows.push({
    tableId: TABLE.L3_ROUTE,
    priority: ND_REPLY_PRIORITY,
    cookie,
    match: [inPort, meta, { field: 'eth_dst', value: gatewayMac }, ...na, ...of],
    instructions: TO_CONTROLLER,
  });
  flows.push({
    tableId: TABLE.ARP_RESPONDER,
    priority: ARP_WATCH_PRIORITY,
    cookie,
    match: [inPort, meta, ...na, TO_ALL_NODES, ...of],
    instructions: COPY_UP_AND_ROUTE,
  });
}
