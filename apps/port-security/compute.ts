import { objectCookie } from '../../controller/pipeline/cookies.js';
import { type Desired, type DesiredFlow, goto } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { isIpv4 } from '../../southbound/openflow/codec/values.js';
import { frozen, inPortTlv } from '../interned.js';
import type { DatapathView, LocalPort } from '../view.js';

const ETH_IP = 0x0800;
const ETH_ARP = 0x0806;
const ETH_IPV6 = 0x86dd;

/**
 * Only an endpoint's own MAC and IPs leave its port: IPv4 with its source address, ARP with its
 * sha/spa, IPv6 with its source address or any link-local one (neighbour discovery needs them).
 * Anything else from the port meets the table's drop miss. An endpoint with port security off
 * passes unchecked; one with no IPs yet may send anything from its own MAC.
 */
export function compute(view: DatapathView): Desired {
  const flows: DesiredFlow[] = [];
  for (const net of view.networks) for (const port of net.local) portFlows(port, flows);
  return { flows, groups: [] };
}

const TO_EGRESS_ACL = [goto(TABLE.EGRESS_ACL)];
const IS_IP: OxmTlv = frozen({ field: 'eth_type', value: ETH_IP });
const IS_ARP: OxmTlv = frozen({ field: 'eth_type', value: ETH_ARP });
const IS_IPV6: OxmTlv = frozen({ field: 'eth_type', value: ETH_IPV6 });

/** The flow letting what `match` selects on to the egress ACLs. */
const pass = (cookie: bigint, priority: number, match: OxmTlv[]): DesiredFlow => ({
  tableId: TABLE.PORT_SECURITY,
  priority,
  cookie,
  match,
  instructions: TO_EGRESS_ACL,
});

export function portFlows(port: LocalPort, flows: DesiredFlow[]): void {
  const cookie = objectCookie('portSecurity', 'endpoint', port.endpointId);
  const inPort = inPortTlv.get(port.ofport);
  if (!port.portSecurity) {
    flows.push(pass(cookie, 100, [inPort]));
    return;
  }
  const src: OxmTlv = { field: 'eth_src', value: port.mac };
  if (port.ips.length === 0) {
    flows.push(pass(cookie, 90, [inPort, src]));
    return;
  }
  let anyV6 = false;
  for (const ip of port.ips) {
    if (isIpv4(ip)) {
      flows.push(pass(cookie, 100, [inPort, src, IS_IP, { field: 'ipv4_src', value: ip }]));
      flows.push(
        pass(cookie, 100, [
          inPort,
          src,
          IS_ARP,
          { field: 'arp_spa', value: ip },
          { field: 'arp_sha', value: port.mac },
        ]),
      );
    } else {
      anyV6 = true;
      flows.push(pass(cookie, 100, [inPort, src, IS_IPV6, { field: 'ipv6_src', value: ip }]));
    }
  }
  if (anyV6) {
    flows.push(
      pass(cookie, 90, [inPort, src, IS_IPV6, { field: 'ipv6_src', value: 'fe80::', mask: 'ffc0::' }]),
    );
  }
}
