import type { DesiredFlow } from '../../controller/pipeline/flow.js';
import { apply, goto, setField, writeMetadata } from '../../controller/pipeline/flow.js';
import { METADATA_VNI_MASK, metadataForVni } from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { arpAnswerFlow } from '../arp-responder/compute.js';
import { frozen } from '../interned.js';
import type { FloatingIp, RouterPort } from '../view.js';
import { ROUTER_SPOOF_PRIORITY } from './ipv6.js';
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
 *   address, then routed to it as any packet to the internal network is (TTL decremented, that
 *   network's gateway MAC and VNI, on to l3-neighbor) at FLOATING_DNAT_PRIORITY, above the routes.
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

const IS_IP = frozen({ field: 'eth_type', value: 0x0800 });
const IS_ARP = frozen({ field: 'eth_type', value: 0x0806 });
const TO_NEIGHBOR = goto(TABLE.L3_NEIGHBOR);

/** The external network's side: ARP answers, the spoofing guard, the inbound rewrite. */
export function floatingInboundFlows(
  cookie: bigint,
  meta: OxmTlv,
  toGateway: OxmTlv,
  self: RouterPort,
  floating: readonly FloatingIp[],
  flows: DesiredFlow[],
): void {
  for (const f of floating) {
    if (f.external.networkId !== self.networkId) continue;
    flows.push(arpAnswerFlow(meta, f.ip, self.mac, cookie));
    for (const match of [
      [meta, IS_ARP, { field: 'arp_spa', value: f.ip }],
      [meta, IS_IP, { field: 'ipv4_src', value: f.ip }],
    ]) {
      flows.push({
        tableId: TABLE.PORT_SECURITY,
        priority: ROUTER_SPOOF_PRIORITY,
        cookie,
        match,
        instructions: [],
      });
    }
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: FLOATING_DNAT_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IP, { field: 'ipv4_dst', value: f.ip }],
      instructions: [
        apply({ type: 'dec_nw_ttl' }, setField('eth_src', f.internal.mac), setField('ipv4_dst', f.fixedIp)),
        writeMetadata(metadataForVni(f.internal.vni), METADATA_VNI_MASK),
        TO_NEIGHBOR,
      ],
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
    const [first, ...rest] = routeInto.instructions;
    if (first?.type !== 'apply_actions') continue;
    flows.push({
      tableId: routeInto.tableId,
      priority: routeInto.priority + 1,
      cookie: routeInto.cookie,
      match: [...routeInto.match, { field: 'ipv4_src', value: f.fixedIp }],
      instructions: [apply(...first.actions, setField('ipv4_src', f.ip)), ...rest],
    });
  }
}
