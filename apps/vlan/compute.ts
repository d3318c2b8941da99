import { cookieFor } from '../../controller/pipeline/cookies.js';
import {
  apply,
  type Desired,
  type DesiredFlow,
  goto,
  setField,
  writeMetadata,
} from '../../controller/pipeline/flow.js';
import {
  METADATA_VNI_MASK,
  metadataForVni,
  PORT_CLASS,
  REG_PORT_CLASS,
} from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import { OFPVID_PRESENT } from '../../southbound/openflow/codec/constants.js';
import type { DatapathView, NetworkOnChassis } from '../view.js';

/**
 * VNI <-> VLAN translation for vlan-bindings. On the way in, a frame tagged with the bound VLAN on
 * the physical port loses its tag and joins the network (and may ask the ARP responder). On the
 * way out, the flood app's buckets push the tag (apps/flood), and known unicast to hosts behind
 * the VLAN is flooded on that network, since weft does not learn their MACs.
 */
export function compute(view: DatapathView): Desired {
  const flows: DesiredFlow[] = [];
  for (const net of view.networks) vlanNetworkFlows(net, flows);
  return { flows, groups: [] };
}

/** The VLAN ports of one network on this chassis: tagged frames join the network untagged. */
export function vlanNetworkFlows(net: NetworkOnChassis, flows: DesiredFlow[]): void {
  for (const v of net.vlanPorts) {
    flows.push({
      tableId: TABLE.CLASSIFY,
      priority: 110,
      cookie: cookieFor('vlan', `vlan-binding/${v.bindingId}`),
      match: [
        { field: 'in_port', value: v.ofport },
        { field: 'vlan_vid', value: OFPVID_PRESENT | v.vlan },
      ],
      instructions: [
        apply({ type: 'pop_vlan' }, setField(REG_PORT_CLASS, PORT_CLASS.VLAN)),
        writeMetadata(metadataForVni(net.vni), METADATA_VNI_MASK),
        goto(TABLE.ARP_RESPONDER),
      ],
    });
  }
}
