import { cookieFor } from '../../controller/pipeline/cookies.js';
import {
  apply,
  type Desired,
  type DesiredFlow,
  goto,
  output,
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
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { OFPVID_PRESENT, ofpp } from '../../southbound/openflow/codec/constants.js';
import { ARP_REQUEST_MATCH, arpReplyActions } from '../arp-responder/compute.js';
import { NA_MATCH, ndReplyActions } from '../arp-responder/nd.js';
import { vniMetadataTlv } from '../interned.js';
import type { DatapathView, NetworkOnChassis, VlanPort } from '../view.js';

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

/** Out of `port` (a VLAN binding's physical port, or IN_PORT) with the tag of `vlan` pushed. */
export function taggedOutput(vlan: number, port: number): Action[] {
  return [
    { type: 'push_vlan', ethertype: 0x8100 },
    setField('vlan_vid', OFPVID_PRESENT | vlan),
    output(port),
  ];
}

/** Back out of the VLAN port a question came in on, tagged again (classify took the tag off). */
export function backToVlanPort(v: VlanPort): Action[] {
  return taggedOutput(v.vlan, ofpp.IN_PORT);
}

/**
 * The VLAN ports of one network on this chassis: tagged frames join the network untagged, and an
 * ARP request (or IPv6 neighbour solicitation) a host behind one asks is answered back to it
 * tagged (the one arp-reply flow for VM ports sends answers out untagged, which a host on a VLAN
 * never sees).
 */
export function vlanNetworkFlows(net: NetworkOnChassis, flows: DesiredFlow[]): void {
  const meta = vniMetadataTlv.get(net.vni);
  for (const v of net.vlanPorts) {
    const cookie = cookieFor('vlan', `vlan-binding/${v.bindingId}`);
    flows.push({
      tableId: TABLE.CLASSIFY,
      priority: 110,
      cookie,
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
    flows.push({
      tableId: TABLE.ARP_REPLY,
      priority: 110,
      cookie,
      match: [{ field: 'in_port', value: v.ofport }, meta, ...ARP_REQUEST_MATCH],
      instructions: [apply(...arpReplyActions(), ...backToVlanPort(v))],
    });
    flows.push({
      tableId: TABLE.ARP_REPLY,
      priority: 110,
      cookie,
      match: [{ field: 'in_port', value: v.ofport }, meta, ...NA_MATCH],
      instructions: [apply(...ndReplyActions(), ...backToVlanPort(v))],
    });
  }
}
