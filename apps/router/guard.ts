import type { DesiredFlow } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { frozen } from '../interned.js';
import { ROUTER_SPOOF_PRIORITY } from './ipv6.js';

/** The router app's ethertype matches, one object each for all its flows. */
export const IS_IP = frozen({ field: 'eth_type', value: 0x0800 });
export const IS_ARP = frozen({ field: 'eth_type', value: 0x0806 });

/**
 * No VM speaks as an IPv4 address the router owns on the network (`meta`): its gateway address, a
 * floating IP. ARP and IP from it are dropped in port-security above every endpoint's pass flows,
 * so not even a VM allowed a prefix holding it (allowedAddresses) can take its traffic.
 */
export function routerAddressGuardFlows(
  cookie: bigint,
  meta: OxmTlv,
  ip: string,
  flows: DesiredFlow[],
): void {
  for (const match of [
    [meta, IS_ARP, { field: 'arp_spa', value: ip }],
    [meta, IS_IP, { field: 'ipv4_src', value: ip }],
  ]) {
    flows.push({
      tableId: TABLE.PORT_SECURITY,
      priority: ROUTER_SPOOF_PRIORITY,
      cookie,
      match,
      instructions: [],
    });
  }
}
