import { objectCookie } from '../../controller/pipeline/cookies.js';
import { type DesiredFlow, TO_CONTROLLER } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { isIpv4 } from '../../southbound/openflow/codec/values.js';
import { inPortTlv, vniMetadataTlv } from '../interned.js';
import { isSingleAddress, type LocalPort } from '../view.js';
import { ARP_REPLY, ARP_REQUEST, BROADCAST } from './compute.js';
import { IS_ARP } from './guard.js';
import { ndWatchFlows } from './ipv6.js';
import { ARP_REPLY_PRIORITY, ARP_WATCH_PRIORITY, COPY_UP_AND_ROUTE } from './priorities.js';

/**
 * A VIP (an address the endpoint is allowed, `allowedAddresses`) in a routed network is a
 * neighbour the router resolves by ARP (IPv4) or neighbour solicitation (IPv6), as it does a host
 * behind a VLAN binding: several VMs may be allowed it and only the one holding it now
 * (keepalived's master) answers. On the endpoint's own chassis, from its port only, for an IPv4 VIP:
 *
 *   table=35 priority=280 in_port=<port>,metadata=<VNI>,arp,dl_dst=<gateway MAC>,arp_op=2,arp_spa=<VIP>
 *            -> controller  (its answer to the router's request)
 *   table=30 priority=50  in_port=<port>,metadata=<VNI>,arp,arp_op=1,arp_spa=<VIP>
 *   table=30 priority=50  in_port=<port>,metadata=<VNI>,arp,dl_dst=ff:ff:ff:ff:ff:ff,arp_op=2,arp_spa=<VIP>
 *            -> a copy to the controller, and on  (its gratuitous ARP when it takes the VIP over
 *               moves the router's neighbour entry at once, rather than after a missed re-validation)
 *
 * and for an IPv6 VIP, where the router has an IPv6 address on the network, the same two kinds of flow for neighbour advertisements with nd_target=<VIP>
 * (./ipv6.ts ndWatchFlows: to the gateway MAC up; to ff02::1, unsolicited, copied up).
 *
 * Port security has already let only the endpoints allowed the VIP send ARP from it, with their
 * own MAC; controller/router/neighbor-service.ts checks the port and the allowance again.
 */
export function vipWatchFlows(
  net: { vni: number; gatewayMac: string; routes6?: boolean },
  port: Pick<LocalPort, 'endpointId' | 'ofport' | 'portSecurity' | 'allowedAddresses'>,
  flows: DesiredFlow[],
): void {
  if (!port.portSecurity) return;
  // IPv6 ones only where the router routes IPv6 into the network (an address of its there).
  const vips = (port.allowedAddresses ?? []).filter(
    (a) => isSingleAddress(a) && (isIpv4(a) || net.routes6 === true),
  );
  if (vips.length === 0) return;
  const cookie = objectCookie('router', 'endpoint', port.endpointId);
  const inPort = inPortTlv.get(port.ofport);
  const meta = vniMetadataTlv.get(net.vni);
  const from: OxmTlv[] = [inPort, meta, IS_ARP];
  for (const vip of vips) {
    if (!isIpv4(vip)) {
      ndWatchFlows(cookie, inPort, meta, net.gatewayMac, vip, flows);
      continue;
    }
    const spa: OxmTlv = { field: 'arp_spa', value: vip };
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: ARP_REPLY_PRIORITY,
      cookie,
      match: [...from, { field: 'eth_dst', value: net.gatewayMac }, ARP_REPLY, spa],
      instructions: TO_CONTROLLER,
    });
    for (const announce of [[ARP_REQUEST], [BROADCAST, ARP_REPLY]]) {
      flows.push({
        tableId: TABLE.ARP_RESPONDER,
        priority: ARP_WATCH_PRIORITY,
        cookie,
        match: [...from, ...announce, spa],
        instructions: COPY_UP_AND_ROUTE,
      });
    }
  }
}
