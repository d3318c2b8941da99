import {
  type Chassis,
  type Endpoint,
  effectiveQos,
  type Mirror,
  type Network,
  type NetworkAcl,
  type Router,
  type SecurityGroup,
  type Tenant,
  type VlanBinding,
} from '../controller/intent/model.js';
import { sgLogging } from './acl/sg-log.js';
import { type MirrorPlacement, portMirrors, portTaps } from './mirror/resolve.js';
import { qosField } from './qos/compute.js';
import { floatingIps, networkRouter, routerPorts, routerSnat, staticRoutes } from './router/ports.js';
import type {
  DatapathView,
  LocalPort,
  NetworkOnChassis,
  RemoteChassis,
  RemoteEndpoint,
  ResolvedSecurityGroup,
  SgLogging,
} from './view.js';
import { memberAddresses } from './view.js';

/** The intent objects the overlay apps read (a consistent snapshot at one revision). */
export interface IntentView {
  networks: readonly Network[];
  endpoints: readonly Endpoint[];
  chassis: readonly Chassis[];
  vlanBindings: readonly VlanBinding[];
  networkAcls: readonly NetworkAcl[];
  securityGroups: readonly SecurityGroup[];
  /** Absent: no routers. */
  routers?: readonly Router[];
  /** Absent: no mirrors. */
  mirrors?: readonly Mirror[];
  /** Only their default rate limits are read (absent: no tenant has any). */
  tenants?: readonly Pick<Tenant, 'id' | 'qos'>[];
}

/** Facts learned from each chassis's OVSDB: where ports are bound and what their numbers are. */
export interface ChassisFacts {
  /** iface-id -> where the interface carrying it sits (the binding of an endpoint). */
  bindings: ReadonlyMap<string, { chassisId: string; ofport: number }>;
  /** chassis id -> OpenFlow numbers of its ports. */
  ports: ReadonlyMap<string, ChassisPorts>;
}

export interface ChassisPorts {
  /** The `remote_ip=flow key=flow` VXLAN port. */
  tunnelPort?: number;
  /** asap2 profile: VNI -> fixed-key VXLAN port. */
  vniTunnelPorts?: ReadonlyMap<number, number>;
  /** Port name -> ofport, for vlan-bindings that name a physical port. */
  byName: ReadonlyMap<string, number>;
}

/** Equal for two chassis with the same port numbers (tunnel ports and ports by name), in any order. */
export const portsSignature = (p: ChassisPorts | undefined): string =>
  p
    ? `${p.tunnelPort}|${[...(p.vniTunnelPorts ?? [])].sort((a, b) => a[0] - b[0]).join(';')}|${[...p.byName]
        .sort()
        .join(';')}`
    : '';

interface Placed {
  ep: Endpoint;
  chassisId: string;
  ofport: number;
}

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Joins intent and chassis facts into one DatapathView per chassis. A network is present on a
 * chassis when one of its endpoints is bound there or a VLAN binding of it lives there (it is
 * hosted there), or when a network on the same router is hosted there (that chassis routes into
 * it); only those chassis get its flows. Unbound endpoints are reachable from nowhere until they bind.
 */
export function buildDatapathViews(intent: IntentView, facts: ChassisFacts): Map<string, DatapathView> {
  const chassisById = new Map(intent.chassis.map((c) => [c.id, c]));
  const placedByNetwork = new Map<string, Placed[]>();
  for (const ep of intent.endpoints) {
    const b = facts.bindings.get(ep.ifaceId);
    if (!b || !chassisById.has(b.chassisId)) continue;
    const list = placedByNetwork.get(ep.networkId) ?? [];
    list.push({ ep, chassisId: b.chassisId, ofport: b.ofport });
    placedByNetwork.set(ep.networkId, list);
  }
  const vlanByNetwork = new Map<string, VlanBinding[]>();
  for (const vb of intent.vlanBindings) {
    if (!chassisById.has(vb.chassisId)) continue;
    const list = vlanByNetwork.get(vb.networkId) ?? [];
    list.push(vb);
    vlanByNetwork.set(vb.networkId, list);
  }

  const aclsByNetwork = new Map<string, NetworkAcl[]>();
  for (const acl of intent.networkAcls) {
    const list = aclsByNetwork.get(acl.networkId) ?? [];
    list.push(acl);
    aclsByNetwork.set(acl.networkId, list);
  }
  for (const list of aclsByNetwork.values()) list.sort((a, b) => b.priority - a.priority || byId(a, b));
  const resolvedGroups = resolveSecurityGroups(intent);

  const netById = new Map(intent.networks.map((n) => [n.id, n]));
  const tenantQos = new Map((intent.tenants ?? []).map((t) => [t.id, t.qos]));
  /** network -> its router's view of it. */
  const routed = new Map<string, ReturnType<typeof networkRouter>>();
  const boundAt = (networkId: string, ip: string) => {
    const p = placedByNetwork.get(networkId)?.find((x) => x.ep.ips.includes(ip));
    return p && { endpointId: p.ep.id, mac: p.ep.mac.toLowerCase() };
  };
  for (const r of intent.routers ?? []) {
    const ports = routerPorts(r, (id) => netById.get(id));
    const routes = staticRoutes(r, ports, boundAt);
    const floating = floatingIps(r, ports);
    const snat = routerSnat(r, ports);
    for (const p of ports) {
      routed.set(p.networkId, networkRouter(r.id, ports, p.networkId, routes, floating, snat));
    }
  }
  const hostedOn = new Map<string, Set<string>>();
  for (const net of intent.networks) {
    const hosts = new Set<string>();
    for (const p of placedByNetwork.get(net.id) ?? []) hosts.add(p.chassisId);
    for (const v of vlanByNetwork.get(net.id) ?? []) hosts.add(v.chassisId);
    hostedOn.set(net.id, hosts);
  }

  const mirrorsOf = mirrorIndex(intent, placedByNetwork, chassisById);

  const views = new Map<string, DatapathView>();
  for (const c of [...intent.chassis].sort(byId)) {
    const ports = facts.ports.get(c.id);
    views.set(c.id, {
      chassisId: c.id,
      tunnelIp: c.tunnelIp,
      offload: c.offload,
      tunnelPort: ports?.tunnelPort,
      vniTunnelPorts: ports?.vniTunnelPorts ?? new Map(),
      networks: [],
      securityGroups: new Map(),
    });
  }

  const groupLogs = new Map(intent.securityGroups.map((g) => [g.id, g.log]));
  for (const net of [...intent.networks].sort((a, b) => a.vni - b.vni)) {
    const placed = (placedByNetwork.get(net.id) ?? []).sort((a, b) => byId(a.ep, b.ep));
    const vlans = (vlanByNetwork.get(net.id) ?? []).sort(byId);
    const real = hostedOn.get(net.id)!;
    const hosts = new Set(real);
    // Chassis hosting another network of its router route into it.
    for (const m of routed.get(net.id)?.ports ?? [])
      for (const h of hostedOn.get(m.networkId) ?? []) hosts.add(h);
    for (const chassisId of [...hosts].sort()) {
      const view = views.get(chassisId);
      if (!view) continue;
      const remoteChassis: RemoteChassis[] = [...real]
        .filter((h) => h !== chassisId)
        .sort()
        .map((h) => ({ chassisId: h, tunnelIp: chassisById.get(h)!.tunnelIp }));
      const remote: RemoteEndpoint[] = placed
        .filter((p) => p.chassisId !== chassisId)
        .map((p) => ({
          endpointId: p.ep.id,
          mac: p.ep.mac.toLowerCase(),
          ips: p.ep.ips,
          chassisId: p.chassisId,
          tunnelIp: chassisById.get(p.chassisId)!.tunnelIp,
        }));
      const byName = facts.ports.get(chassisId)?.byName;
      const entry: NetworkOnChassis = {
        networkId: net.id,
        tenantId: net.tenantId,
        vni: net.vni,
        local: placed
          .filter((p) => p.chassisId === chassisId)
          .map((p) => ({
            endpointId: p.ep.id,
            ofport: p.ofport,
            mac: p.ep.mac.toLowerCase(),
            ips: p.ep.ips,
            portSecurity: p.ep.portSecurity,
            securityGroupIds: p.ep.securityGroupIds,
            ...(p.ep.allowedAddresses?.length ? { allowedAddresses: p.ep.allowedAddresses } : {}),
            ...qosField(effectiveQos(p.ep.qos, tenantQos.get(net.tenantId), net.mtu)),
            ...sgLogField(p.ep.securityGroupIds.map((id) => groupLogs.get(id))),
            ...mirrorsOf(view, p.ep.id),
          })),
        remote,
        remoteChassis,
        vlanPorts: vlans
          .filter((v) => v.chassisId === chassisId && byName?.get(v.port) !== undefined)
          .map((v) => ({ bindingId: v.id, ofport: byName!.get(v.port)!, vlan: v.vlan })),
        hasVlanBinding: vlans.length > 0,
        acls: aclsByNetwork.get(net.id) ?? [],
        dhcp: net.dhcp?.enabled === true,
        ...(net.dhcp?.enabled && net.dhcp.ipv6 ? { dhcp6: true as const } : {}),
        fromTunnel: hosts.size > 1,
      };
      const router = routed.get(net.id);
      if (router) entry.router = router;
      if (!real.has(chassisId)) entry.routedOnly = true;
      view.networks.push(entry);
      const groups = view.securityGroups as Map<string, ResolvedSecurityGroup>;
      for (const port of entry.local) {
        for (const sg of port.securityGroupIds) {
          const resolved = resolvedGroups.get(sg);
          if (resolved) groups.set(sg, resolved);
        }
      }
    }
  }
  return views;
}

function sgLogField(logs: Array<SecurityGroup['log']>): { sgLog?: SgLogging } {
  const sgLog = sgLogging(logs);
  return sgLog ? { sgLog } : {};
}

/** Every security group with remote-group rules expanded to the members' addresses. */
function resolveSecurityGroups(intent: IntentView): Map<string, ResolvedSecurityGroup> {
  const members = new Map<string, string[]>();
  for (const ep of intent.endpoints) {
    for (const sg of ep.securityGroupIds) {
      const list = members.get(sg) ?? [];
      list.push(...memberAddresses(ep));
      members.set(sg, list);
    }
  }
  const out = new Map<string, ResolvedSecurityGroup>();
  for (const sg of intent.securityGroups) {
    out.set(sg.id, {
      id: sg.id,
      rules: sg.rules.map((r) =>
        r.remoteGroupId ? { ...r, remoteIps: [...new Set(members.get(r.remoteGroupId) ?? [])].sort() } : r,
      ),
    });
  }
  return out;
}

/**
 * The mirror fields of each local port (`mirrors`, `taps`; none when it has neither), through the
 * shared resolution of apps/mirror/resolve.ts.
 */
function mirrorIndex(
  intent: IntentView,
  placedByNetwork: ReadonlyMap<string, Placed[]>,
  chassisById: ReadonlyMap<string, Chassis>,
): (view: DatapathView, endpointId: string) => Pick<LocalPort, 'mirrors' | 'taps'> {
  const from = new Map<string, Mirror[]>();
  const to = new Map<string, Mirror[]>();
  for (const m of intent.mirrors ?? []) {
    entryOf(from, m.source).push(m);
    entryOf(to, m.destination).push(m);
  }
  if (from.size === 0) return () => ({});
  const placement = new Map<string, MirrorPlacement>();
  for (const list of placedByNetwork.values())
    for (const p of list)
      placement.set(p.ep.id, {
        chassisId: p.chassisId,
        ofport: p.ofport,
        tunnelIp: chassisById.get(p.chassisId)!.tunnelIp,
      });
  return (view, endpointId) => {
    const mirrors = portMirrors(view, from.get(endpointId) ?? [], (id) => placement.get(id));
    const taps = portTaps(view, to.get(endpointId) ?? []);
    return { ...(mirrors ? { mirrors } : {}), ...(taps ? { taps } : {}) };
  };
}

function entryOf(map: Map<string, Mirror[]>, key: string): Mirror[] {
  const have = map.get(key);
  if (have) return have;
  const list: Mirror[] = [];
  map.set(key, list);
  return list;
}
