import { objectCookie } from '../../controller/pipeline/cookies.js';
import { type DesiredFlow, TO_CONTROLLER } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import { frozen, vniMetadataTlv } from '../interned.js';
import type { NetworkOnChassis } from '../view.js';

/** Above port security's own-address flows (100): a DHCP client has no address yet. */
export const DHCP_PRIORITY = 110;
const UDP = 17;
const BOOTP_SERVER = 67;
const BOOTP_CLIENT = 68;
const DHCP6_CLIENT = 546;
const DHCP6_SERVER = 547;

const IS_IP = frozen({ field: 'eth_type', value: 0x0800 });
const IS_UDP = frozen({ field: 'ip_proto', value: UDP });
const FROM_CLIENT = frozen({ field: 'udp_src', value: BOOTP_CLIENT });
const FROM_SERVER = frozen({ field: 'udp_src', value: BOOTP_SERVER });
const TO_SERVER = frozen({ field: 'udp_dst', value: BOOTP_SERVER });
const IS_IPV6 = frozen({ field: 'eth_type', value: 0x86dd });
const FROM_CLIENT6 = frozen({ field: 'udp_src', value: DHCP6_CLIENT });
const FROM_SERVER6 = frozen({ field: 'udp_src', value: DHCP6_SERVER });
const TO_SERVER6 = frozen({ field: 'udp_dst', value: DHCP6_SERVER });

/**
 * DHCP served by weft (controller/dhcp): in a network with DHCP on, a client's request leaving a
 * local port (classify sent it to port-security) goes to the controller instead of on, whatever
 * its addresses: a client asking for its first lease has none (0.0.0.0, broadcast), and one
 * renewing sends to the server it knows. The controller answers only a request whose port,
 * MAC and network are an endpoint's, with that endpoint's address; everything else is ignored
 * there, so this flow opens nothing port security closes. Requests never reach other VMs or the
 * overlay: a tenant's own DHCP server would be unreachable in such a network, by design; and no
 * VM may answer as one (UDP from port 67 is dropped: a rogue server's offer would hand its
 * neighbours another gateway, even from weft's own server address). With `dhcp.ipv6`, DHCPv6 the
 * same way (UDP 546 -> 547 up; from 547 dropped): weft hands out the endpoint's IPv6 addresses.
 */
export function dhcpNetworkFlows(
  net: Pick<NetworkOnChassis, 'networkId' | 'vni' | 'dhcp' | 'dhcp6'>,
  flows: DesiredFlow[],
): void {
  if (!net.dhcp) return;
  const cookie = objectCookie('dhcp', 'network', net.networkId);
  const meta = vniMetadataTlv.get(net.vni);
  const families = [
    [IS_IP, [FROM_CLIENT, TO_SERVER], FROM_SERVER],
    [IS_IPV6, [FROM_CLIENT6, TO_SERVER6], FROM_SERVER6],
  ] as const;
  for (const [ip, request, answer] of net.dhcp6 ? families : families.slice(0, 1)) {
    flows.push({
      tableId: TABLE.PORT_SECURITY,
      priority: DHCP_PRIORITY,
      cookie,
      match: [meta, ip, IS_UDP, ...request],
      instructions: TO_CONTROLLER,
    });
    flows.push({
      tableId: TABLE.PORT_SECURITY,
      priority: DHCP_PRIORITY,
      cookie,
      match: [meta, ip, IS_UDP, answer],
      instructions: [],
    });
  }
}
