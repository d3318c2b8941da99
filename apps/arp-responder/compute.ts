import { objectCookie } from '../../controller/pipeline/cookies.js';
import { apply, type Desired, type DesiredFlow, output, setField } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import { isIpv4 } from '../../southbound/openflow/codec/values.js';
import { frozen, vniMetadataTlv } from '../interned.js';
import type { DatapathView, NetworkOnChassis } from '../view.js';

const ARP_REQUEST = 1;
const ARP_REPLY = 2;

const move = (src: string, dst: string, nBits: number): Action => ({
  type: 'reg_move',
  src: { field: src, ofs: 0, nBits },
  dst: { field: dst, ofs: 0, nBits },
});

// Parts every answer shares (flows are never mutated once built, so one copy serves all).
const ETH_SRC_TO_DST = move('eth_src', 'eth_dst', 48);
const SHA_TO_THA = move('arp_sha', 'arp_tha', 48);
const SPA_TO_TPA = move('arp_spa', 'arp_tpa', 32);
const SET_REPLY = setField('arp_op', ARP_REPLY);
const BACK_OUT = output(ofpp.IN_PORT);
const IS_ARP = frozen({ field: 'eth_type', value: 0x0806 });
const IS_REQUEST = frozen({ field: 'arp_op', value: ARP_REQUEST });

/**
 * Answers ARP requests for every known endpoint IPv4 address of a network on the chassis where the
 * request is made, local or remote endpoint alike, so ARP never floods across the overlay for
 * addresses weft knows. The request is turned into the reply in place and sent back out of in_port.
 */
export function compute(view: DatapathView): Desired {
  const flows: DesiredFlow[] = [];
  for (const net of view.networks) {
    for (const ep of net.local) endpointArpFlows(net, ep, flows);
    for (const ep of net.remote) endpointArpFlows(net, ep, flows);
  }
  return { flows, groups: [] };
}

/** The answers for one endpoint's IPv4 addresses in its network. */
export function endpointArpFlows(
  net: Pick<NetworkOnChassis, 'vni'>,
  ep: { endpointId: string; mac: string; ips: readonly string[] },
  flows: DesiredFlow[],
): void {
  const meta = vniMetadataTlv.get(net.vni);
  const cookie = objectCookie('arpResponder', 'endpoint', ep.endpointId);
  for (const ip of ep.ips) {
    if (!isIpv4(ip)) continue;
    flows.push({
      tableId: TABLE.ARP_RESPONDER,
      priority: 100,
      cookie,
      match: [meta, IS_ARP, IS_REQUEST, { field: 'arp_tpa', value: ip }],
      instructions: [
        apply(
          ETH_SRC_TO_DST,
          setField('eth_src', ep.mac),
          SET_REPLY,
          SHA_TO_THA,
          setField('arp_sha', ep.mac),
          SPA_TO_TPA,
          setField('arp_spa', ip),
          BACK_OUT,
        ),
      ],
    });
  }
}
