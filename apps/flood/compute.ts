import { cookieFor } from '../../controller/pipeline/cookies.js';
import {
  apply,
  type Desired,
  type DesiredFlow,
  type DesiredGroup,
  group,
  setField,
} from '../../controller/pipeline/flow.js';
import { GROUP_KIND, groupId } from '../../controller/pipeline/groups.js';
import { PORT_CLASS, REG_OUTPORT, REG_PORT_CLASS } from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { type Bucket, WATCH_ANY } from '../../southbound/openflow/codec/buckets.js';
import { OFPP16_IN_PORT } from '../../southbound/openflow/codec/constants.js';
import { frozen, Interner, tunnelActions, tunnelKey, vniMetadataTlv } from '../interned.js';
import { type DatapathCtx, type DatapathView, type NetworkOnChassis, tunnelPortFor } from '../view.js';

import { taggedOutput } from '../vlan/compute.js';

const MULTICAST_BIT = '01:00:00:00:00:00';

const bucket = (actions: Action[]): Bucket => ({
  weight: 0,
  watchPort: WATCH_ANY,
  watchGroup: WATCH_ANY,
  actions,
});

/**
 * Broadcast, multicast (and, on networks bridged to a VLAN, unknown unicast) through one ALL group
 * per network per chassis. Two groups, so nothing loops or comes back twice:
 * - FLOOD_ALL for traffic from a local or VLAN port: every local port, every VLAN port, one bucket
 *   per remote chassis of the network (tun_dst + tun_id, out of the tunnel).
 * - FLOOD_LOCAL for traffic that came in through the tunnel: local and VLAN ports only; the sending
 *   chassis already reached every other chassis.
 * Local ports are reached through the ingress policy tables (reg7 + resubmit), so a broadcast obeys
 * the same ACLs and security groups as unicast. OVS drops an output to the packet's own in_port, so
 * the sender never receives its own frame.
 */
export function compute(view: DatapathView): Desired {
  const flows: DesiredFlow[] = [];
  const groups: DesiredGroup[] = [];
  for (const net of view.networks) computeNetwork(view, net, flows, groups);
  return { flows, groups };
}

// Buckets repeat across networks and chassis (one per port number, one per tunnel destination):
// shared and frozen (apps/interned.ts).
const toLocalPort = new Interner((ofport: number) =>
  frozen(
    bucket([
      setField(REG_OUTPORT, ofport),
      { type: 'resubmit', port: OFPP16_IN_PORT, table: TABLE.INGRESS_ACL },
    ]),
  ),
);
/** Into the tunnel towards one chassis, by tunnelKey. */
const toRemoteChassis = new Interner((key: string) => frozen(bucket(tunnelActions(key))));

function localBuckets(net: NetworkOnChassis): Bucket[] {
  const buckets = net.local.map((p) => toLocalPort.get(p.ofport));
  for (const v of net.vlanPorts) {
    buckets.push(bucket(taggedOutput(v.vlan, v.ofport)));
  }
  return buckets;
}

/** One network's flood groups and the flows that lead broadcast and multicast into them. */
export function computeNetwork(
  view: DatapathCtx,
  net: NetworkOnChassis,
  flows: DesiredFlow[],
  groups: DesiredGroup[],
): void {
  const allId = groupId(GROUP_KIND.FLOOD_ALL, net.vni);
  const localId = groupId(GROUP_KIND.FLOOD_LOCAL, net.vni);
  const tunnelPort = tunnelPortFor(view, net.vni);
  const local = localBuckets(net);
  const remote: Bucket[] = [];
  if (tunnelPort !== undefined) {
    for (const c of net.remoteChassis)
      remote.push(toRemoteChassis.get(tunnelKey(view.offload, net.vni, c.tunnelIp, tunnelPort)));
  }
  groups.push({ groupId: allId, type: 'all', buckets: [...local, ...remote] });
  groups.push({ groupId: localId, type: 'all', buckets: local });

  const cookie = cookieFor('flood', `network/${net.networkId}`);
  const multicast = { field: 'eth_dst', value: MULTICAST_BIT, mask: MULTICAST_BIT };
  const fromTunnel = { field: REG_PORT_CLASS, value: PORT_CLASS.TUNNEL };
  const metaMatch = vniMetadataTlv.get(net.vni);
  flows.push({
    tableId: TABLE.L2_LOOKUP,
    priority: 60,
    cookie,
    match: [fromTunnel, metaMatch, multicast],
    instructions: [apply(group(localId))],
  });
  flows.push({
    tableId: TABLE.L2_LOOKUP,
    priority: 50,
    cookie,
    match: [metaMatch, multicast],
    instructions: [apply(group(allId))],
  });
  if (net.hasVlanBinding) {
    // Hosts behind a VLAN binding have MACs weft never learns: unknown unicast must flood too.
    flows.push({
      tableId: TABLE.L2_LOOKUP,
      priority: 20,
      cookie,
      match: [fromTunnel, metaMatch],
      instructions: [apply(group(localId))],
    });
    flows.push({
      tableId: TABLE.L2_LOOKUP,
      priority: 10,
      cookie,
      match: [metaMatch],
      instructions: [apply(group(allId))],
    });
  }
}
