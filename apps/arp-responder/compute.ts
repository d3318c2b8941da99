import { cookieFor } from '../../controller/pipeline/cookies.js';
import { apply, type Desired, type DesiredFlow, output, setField } from '../../controller/pipeline/flow.js';
import { metadataForVni } from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import { isIpv4 } from '../../southbound/openflow/codec/values.js';
import type { DatapathView } from '../view.js';

const ARP_REQUEST = 1;
const ARP_REPLY = 2;

const move = (src: string, dst: string, nBits: number): Action => ({
  type: 'reg_move',
  src: { field: src, ofs: 0, nBits },
  dst: { field: dst, ofs: 0, nBits },
});

/**
 * Answers ARP requests for every known endpoint IPv4 address of a network on the chassis where the
 * request is made, local or remote endpoint alike, so ARP never floods across the overlay for
 * addresses weft knows. The request is turned into the reply in place and sent back out of in_port.
 */
export function compute(view: DatapathView): Desired {
  const flows: DesiredFlow[] = [];
  for (const net of view.networks) {
    const meta = metadataForVni(net.vni);
    for (const ep of [...net.local, ...net.remote]) {
      const cookie = cookieFor('arpResponder', `endpoint/${ep.endpointId}`);
      for (const ip of ep.ips.filter(isIpv4)) {
        flows.push({
          tableId: TABLE.ARP_RESPONDER,
          priority: 100,
          cookie,
          match: [
            { field: 'metadata', value: meta },
            { field: 'eth_type', value: 0x0806 },
            { field: 'arp_op', value: ARP_REQUEST },
            { field: 'arp_tpa', value: ip },
          ],
          instructions: [
            apply(
              move('eth_src', 'eth_dst', 48),
              setField('eth_src', ep.mac),
              setField('arp_op', ARP_REPLY),
              move('arp_sha', 'arp_tha', 48),
              setField('arp_sha', ep.mac),
              move('arp_spa', 'arp_tpa', 32),
              setField('arp_spa', ip),
              output(ofpp.IN_PORT),
            ),
          ],
        });
      }
    }
  }
  return { flows, groups: [] };
}
