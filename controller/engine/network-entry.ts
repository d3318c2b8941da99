import { qosField } from '../../apps/qos/compute.js';
import {
  floatingIps,
  networkRouter,
  routerPorts,
  routerSnat,
  staticRoutes,
} from '../../apps/router/ports.js';
import type {
  LocalPort,
  NetworkOnChassis,
  NetworkRouter,
  RemoteChassis,
  ResolvedRule,
  VlanPort,
} from '../../apps/view.js';
import { memberAddresses } from '../../apps/view.js';
import type { NetworkAcl } from '../intent/model.js';
import type { IntentIndex } from './intent-index.js';

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * What the network unit of one network on one chassis reads (apps/view.ts NetworkOnChassis),
 * from the index: its local ports, the chassis hosting it (flood buckets go to `real` hosts only:
 * where its ports are), its VLAN ports, ACLs, DHCP and router. Its remote endpoints are not part
 * of it: they have their own shared units. `hosts` also counts the chassis that only route into it.
 */
export function networkOnChassis(
  ix: IntentIndex,
  chassisId: string,
  networkId: string,
  hosts: readonly string[],
  real: readonly string[],
): NetworkOnChassis {
  const net = ix.networks.get(networkId)!;
  const local: LocalPort[] = [];
  for (const ep of ix.members.get(networkId)?.get(chassisId) ?? []) {
    local.push({
      endpointId: ep.id,
      ofport: ep.placement!.ofport,
      mac: ep.mac,
      ips: ep.ips,
      portSecurity: ep.portSecurity,
      securityGroupIds: ep.securityGroupIds,
      ...qosField(ix.qosOf(ep)),
    });
  }
  local.sort((a, b) => (a.endpointId < b.endpointId ? -1 : a.endpointId > b.endpointId ? 1 : 0));
  const remoteChassis: RemoteChassis[] = real
    .filter((h) => h !== chassisId)
    .map((h) => ({ chassisId: h, tunnelIp: ix.chassis.get(h)!.tunnelIp }));
  const byName = ix.ports.get(chassisId)?.byName;
  const vlans = [...(ix.vlansByNetwork.get(networkId) ?? [])]
    .map((id) => ix.vlanBindings.get(id)!)
    .filter((v) => ix.chassis.has(v.chassisId))
    .sort(byId);
  const vlanPorts: VlanPort[] = vlans
    .filter((v) => v.chassisId === chassisId && byName?.get(v.port) !== undefined)
    .map((v) => ({ bindingId: v.id, ofport: byName!.get(v.port)!, vlan: v.vlan }));
  const acls: NetworkAcl[] = [...(ix.aclsByNetwork.get(networkId) ?? [])]
    .map((id) => ix.acls.get(id)!)
    .sort((a, b) => b.priority - a.priority || byId(a, b));
  const entry: NetworkOnChassis = {
    networkId,
    tenantId: net.tenantId,
    vni: net.vni,
    local,
    remote: [],
    remoteChassis,
    vlanPorts,
    hasVlanBinding: vlans.length > 0,
    acls,
    dhcp: net.dhcp?.enabled === true,
    ...(net.dhcp?.enabled && net.dhcp.ipv6 ? { dhcp6: true as const } : {}),
    fromTunnel: hosts.length > 1,
  };
  const router = routerOf(ix, networkId);
  if (router) entry.router = router;
  return entry;
}

/** The router of a network as its flows need it, if it has one. */
function routerOf(ix: IntentIndex, networkId: string): NetworkRouter | undefined {
  const r = ix.routing.of(networkId);
  if (!r) return undefined;
  const ports = routerPorts(r, (n) => ix.networks.get(n));
  return networkRouter(
    r.id,
    ports,
    networkId,
    staticRoutes(r, ports, (n, ip) => boundAt(ix, n, ip)),
    floatingIps(r, ports),
    routerSnat(r, ports),
  );
}

/** The bound endpoint of a network holding an address (a next hop), scanning that network's only. */
function boundAt(
  ix: IntentIndex,
  networkId: string,
  ip: string,
): { endpointId: string; mac: string } | undefined {
  for (const eps of ix.members.get(networkId)?.values() ?? [])
    for (const ep of eps) if (ep.ips.includes(ip)) return { endpointId: ep.id, mac: ep.mac };
  return undefined;
}

/**
 * A security group's rules with remote groups resolved to their members' addresses: their own
 * and their allowed single addresses (a VIP a member holds is that member speaking; a prefix it
 * routes for is not: a member allowed 0.0.0.0/0 must not open the group to the world), as
 * apps/build-view.ts.
 */
export function resolvedRules(ix: IntentIndex, sgId: string): ResolvedRule[] | undefined {
  return ix.securityGroups.get(sgId)?.rules.map((r): ResolvedRule => {
    if (!r.remoteGroupId) return r;
    const ips = new Set<string>();
    for (const id of ix.sgMembers.get(r.remoteGroupId) ?? []) {
      for (const ip of memberAddresses(ix.endpoints.get(id)!)) ips.add(ip);
    }
    return { ...r, remoteIps: [...ips].sort() };
  });
}
