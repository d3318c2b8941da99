import type { Desired, DesiredFlow, DesiredGroup } from '../controller/pipeline/flow.js';
import { aclLogMeter, networkAclFlows } from './acl/network-acl.js';
import { portSecurityGroupFlows } from './acl/security-groups.js';
import { sgLogMeter } from './acl/sg-log.js';
import { endpointArpFlows, neighbourReplyFlows } from './arp-responder/compute.js';
import { endpointNdFlows } from './arp-responder/nd.js';
import { dhcpNetworkFlows } from './dhcp/compute.js';
import { computeNetwork as floodNetwork } from './flood/compute.js';
import { mirrorTapFlows } from './mirror/compute.js';
import { localPortFlows, networkFlows, remoteEndpointFlows } from './overlay/compute.js';
import { compute as pipeline } from './pipeline/compute.js';
import { portFlows as portSecurityFlows } from './port-security/compute.js';
import { portMeters } from './qos/compute.js';
import { endpointNeighborFlows, routerNetworkFlows } from './router/compute.js';
import { vipWatchFlows } from './router/vip-watch.js';
import type { DatapathCtx, LocalPort, NetworkOnChassis, RemoteEndpoint, ResolvedRule } from './view.js';
import { vlanNetworkFlows } from './vlan/compute.js';

/**
 * The desired state of a datapath is the union of small units, each a pure function of a small
 * part of the view, so a change recomputes only the units it touches (controller/engine's
 * DesiredModel) while a full computation (computeDatapath) is the same units over a whole view.
 *
 * - chassis unit: the pipeline's table-miss flows (and its few others), the arp-reply and
 *   nd-reply flows (the same on every chassis).
 * - network unit: what one network needs on one chassis as a whole: the tunnel classifier,
 *   flood groups and flows, VLAN ports, network ACLs, DHCP, its router gateway. Reads the network's local ports (for flood
 *   buckets), remote chassis, VLAN ports and ACLs; never its remote endpoints.
 * - local endpoint unit: an endpoint bound to this chassis: its overlay flows (with its mirrors'
 *   copies), the flows delivering mirrors' copies to it, port security and security groups, and
 *   (in a routed network) the flows sending its VIPs' ARP up to the router's neighbour resolution.
 * - remote endpoint unit: an endpoint of the network bound elsewhere: the unicast flow into the
 *   tunnel. It reads only the endpoint, the VNI and the chassis's tunnel port and profile, so
 *   chassis alike in those share one computed result.
 * - endpoint ARP unit: the ARP answers for an endpoint's addresses (and, in a network on a
 *   router, the l3-neighbor flows that lead routed packets to its MAC), the same on every chassis
 *   hosting its network (where it is local and where it is remote), so it is computed once.
 */

let pipelineUnit: Desired | undefined;

export function chassisUnit(): Desired {
  pipelineUnit ??= {
    flows: [...pipeline().flows, ...neighbourReplyFlows()],
    groups: [],
  };
  return pipelineUnit;
}

export function networkUnit(dp: DatapathCtx, net: NetworkOnChassis): Desired {
  const flows: DesiredFlow[] = [];
  const groups: DesiredGroup[] = [];
  if (net.routedOnly) return { flows, groups };
  networkFlows(dp, net, flows);
  floodNetwork(dp, net, flows, groups);
  vlanNetworkFlows(net, flows);
  for (const f of networkAclFlows(net)) flows.push(f);
  dhcpNetworkFlows(net, flows);
  routerNetworkFlows(net, flows);
  const meter = aclLogMeter(net);
  return meter ? { flows, groups, meters: [meter] } : { flows, groups };
}

/**
 * `net.gatewayMac`: the router's MAC on the network, when it is on one (its VIPs are neighbours to
 * resolve); `routes6`: it has an IPv6 address there (its IPv6 VIPs too).
 */
export function localEndpointUnit(
  net: Pick<NetworkOnChassis, 'vni'> & { gatewayMac?: string; routes6?: boolean },
  port: LocalPort,
  rules: ResolvedRule[],
): Desired {
  const flows: DesiredFlow[] = [];
  localPortFlows(net, port, flows);
  mirrorTapFlows(port, flows);
  portSecurityFlows(port, flows);
  portSecurityGroupFlows(port, rules, flows);
  if (net.gatewayMac !== undefined)
    vipWatchFlows({ vni: net.vni, gatewayMac: net.gatewayMac, routes6: net.routes6 === true }, port, flows);
  // A port that only marks DSCP has no meter.
  const logMeter = sgLogMeter(port);
  if (!port.qos?.egress && !port.qos?.ingress && !logMeter) return { flows, groups: [] };
  const meters = portMeters(port);
  if (logMeter) meters.push(logMeter);
  return { flows, groups: [], meters };
}

export function remoteEndpointUnit(
  dp: DatapathCtx,
  net: Pick<NetworkOnChassis, 'vni'>,
  ep: RemoteEndpoint,
): Desired {
  const flows: DesiredFlow[] = [];
  remoteEndpointFlows(dp, net, ep, flows);
  return { flows, groups: [] };
}

export function endpointArpUnit(
  net: { vni: number; routed: boolean },
  ep: { endpointId: string; mac: string; ips: readonly string[] },
): Desired {
  const flows: DesiredFlow[] = [];
  endpointArpFlows(net, ep, flows);
  endpointNdFlows(net, ep, flows);
  if (net.routed) endpointNeighborFlows(net, ep, flows);
  return { flows, groups: [] };
}

/** What a chassis that only routes into the network keeps of an endpoint's ARP unit: its l3-neighbor flows. */
export function endpointNeighborUnit(
  net: { vni: number },
  ep: { endpointId: string; mac: string; ips: readonly string[] },
): Desired {
  const flows: DesiredFlow[] = [];
  endpointNeighborFlows(net, ep, flows);
  return { flows, groups: [] };
}
