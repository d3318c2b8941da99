import type { ChassisFacts, ChassisPorts, IntentView } from '../../apps/build-view.js';
import type {
  AnyObject,
  Chassis,
  Endpoint,
  Network,
  NetworkAcl,
  SecurityGroup,
  VlanBinding,
} from '../intent/model.js';
import type { ObjectChange } from '../intent/service.js';

export interface Placement {
  chassisId: string;
  ofport: number;
}

/**
 * What a change invalidates, in the units of apps/units.ts. Filled by IntentIndex as changes
 * arrive, drained by DesiredModel.flush().
 */
export class Dirty {
  /** Rebuild every unit of the network on every chassis (rare changes: network, VLAN binding, tunnel IP). */
  readonly networks = new Set<string>();
  /** Recompute the network unit on every chassis hosting it (its ACLs changed). */
  readonly networkUnits = new Set<string>();
  /** network -> chassis whose network unit must be recomputed (its local ports changed). */
  readonly networkUnitOn = new Map<string, Set<string>>();
  /** network -> endpoints whose units must be recomputed on every chassis hosting the network. */
  readonly endpoints = new Map<string, Set<string>>();
  /** Endpoints whose local unit must be recomputed (their security groups' rules changed). */
  readonly localUnits = new Set<string>();
  /** Chassis whose own facts (profile, tunnel ports, port names) changed: rebuild everything on them. */
  readonly chassis = new Set<string>();

  touchedNetworks(): Set<string> {
    return new Set([
      ...this.networks,
      ...this.networkUnits,
      ...this.networkUnitOn.keys(),
      ...this.endpoints.keys(),
    ]);
  }

  clear(): void {
    this.networks.clear();
    this.networkUnits.clear();
    this.networkUnitOn.clear();
    this.endpoints.clear();
    this.localUnits.clear();
    this.chassis.clear();
  }
}

/** The map's value at key, created by `make` when absent. */
export function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  const have = map.get(key);
  if (have !== undefined) return have;
  const made = make();
  map.set(key, made);
  return made;
}

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  entry(map, key, () => new Set<string>()).add(value);
}

const sameItems = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().join() === [...b].sort().join();

const portsSignature = (p: ChassisPorts | undefined): string =>
  p
    ? `${p.tunnelPort}|${[...(p.vniTunnelPorts ?? [])].sort((a, b) => a[0] - b[0]).join(';')}|${[...p.byName]
        .sort()
        .join(';')}`
    : '';

/**
 * The intent objects the apps read and the chassis facts, indexed so a change finds what it
 * touches without scanning: endpoints by iface-id, placed endpoints by network and chassis, VLAN
 * bindings and ACLs by network, security-group members and the groups naming a group as remote.
 * Every change records in `dirty` which units it invalidates.
 */
export class IntentIndex {
  readonly networks = new Map<string, Network>();
  readonly endpoints = new Map<string, Endpoint>();
  readonly chassis = new Map<string, Chassis>();
  readonly vlanBindings = new Map<string, VlanBinding>();
  readonly acls = new Map<string, NetworkAcl>();
  readonly securityGroups = new Map<string, SecurityGroup>();
  readonly ports = new Map<string, ChassisPorts>();
  readonly placement = new Map<string, Placement>();
  /** network -> chassis -> placed endpoint ids. */
  readonly members = new Map<string, Map<string, Set<string>>>();
  readonly vlansByNetwork = new Map<string, Set<string>>();
  readonly aclsByNetwork = new Map<string, Set<string>>();
  /** security group -> endpoints naming it (placed or not: remote-group rules use every member). */
  readonly sgMembers = new Map<string, Set<string>>();
  /** security group -> groups with a rule naming it as remote group. */
  readonly sgReferrers = new Map<string, Set<string>>();
  readonly dirty = new Dirty();
  private bindings = new Map<string, Placement>();
  /** iface-id -> the endpoint naming it (a Set only when several do: an operator's mistake). */
  private readonly endpointsByIface = new Map<string, string | Set<string>>();
  private readonly portSigs = new Map<string, string>();

  load(intent: IntentView, facts: ChassisFacts): void {
    for (const c of intent.chassis) this.chassis.set(c.id, c);
    for (const n of intent.networks) this.networks.set(n.id, n);
    for (const v of intent.vlanBindings) this.putVlan(v);
    for (const a of intent.networkAcls) this.putAcl(a);
    for (const sg of intent.securityGroups) this.putSecurityGroup(sg);
    this.bindings = new Map(facts.bindings);
    for (const [id, p] of facts.ports) {
      this.ports.set(id, p);
      this.portSigs.set(id, portsSignature(p));
    }
    // Every network is rebuilt in full, so no endpoint needs marking.
    for (const ep of intent.endpoints) this.putEndpoint(ep, true, false);
    for (const n of this.networks.keys()) this.dirty.networks.add(n);
  }

  applyChange(c: ObjectChange): void {
    const before = c.before as AnyObject | undefined;
    const after = c.after as AnyObject | undefined;
    switch (c.kind) {
      case 'network':
        if (after) this.networks.set(c.id, after as Network);
        else this.networks.delete(c.id);
        this.dirty.networks.add(c.id);
        return;
      case 'endpoint': {
        const b = before as Endpoint | undefined;
        const a = after as Endpoint | undefined;
        // Remote-group rules list members' addresses: only a change of those or of membership counts.
        const sameForGroups =
          b && a && sameItems(b.ips, a.ips) && sameItems(b.securityGroupIds, a.securityGroupIds);
        const was = b && this.placement.get(b.id);
        if (b) this.removeEndpoint(b, !sameForGroups);
        if (a) this.putEndpoint(a, !sameForGroups);
        const now = a && this.placement.get(a.id);
        if (b?.networkId === a?.networkId) this.moved((a ?? b)!.networkId, was, now);
        else {
          if (b) this.moved(b.networkId, was, undefined);
          if (a) this.moved(a.networkId, undefined, now);
        }
        return;
      }
      case 'chassis':
        this.changeChassis(c.id, before as Chassis | undefined, after as Chassis | undefined);
        return;
      case 'vlanBinding':
        if (before) this.removeVlan(before as VlanBinding);
        if (after) this.putVlan(after as VlanBinding);
        return;
      case 'networkAcl':
        if (before) this.removeAcl(before as NetworkAcl);
        if (after) this.putAcl(after as NetworkAcl);
        return;
      case 'securityGroup':
        if (before) this.removeSecurityGroup(before as SecurityGroup);
        if (after) this.putSecurityGroup(after as SecurityGroup);
        this.sgChanged(c.id);
        return;
      default:
        return;
    }
  }

  /** New chassis facts: only what differs from the last facts seen marks anything dirty. */
  applyFacts(facts: ChassisFacts): void {
    const changedIfaces: string[] = [];
    for (const [iface, b] of facts.bindings) {
      const old = this.bindings.get(iface);
      if (!old || old.chassisId !== b.chassisId || old.ofport !== b.ofport) changedIfaces.push(iface);
    }
    for (const iface of this.bindings.keys()) if (!facts.bindings.has(iface)) changedIfaces.push(iface);
    this.bindings = new Map(facts.bindings);
    for (const iface of changedIfaces) {
      const ids = this.endpointsByIface.get(iface);
      if (typeof ids === 'string') this.replace(ids);
      else for (const id of ids ?? []) this.replace(id);
    }

    const ids = new Set([...facts.ports.keys(), ...this.ports.keys()]);
    for (const id of ids) {
      const p = facts.ports.get(id);
      const sig = portsSignature(p);
      if ((this.portSigs.get(id) ?? '') === sig) continue;
      if (p) this.ports.set(id, p);
      else this.ports.delete(id);
      this.portSigs.set(id, sig);
      this.dirty.chassis.add(id);
    }
  }

  /** Chassis currently hosting a network: where its endpoints are bound or its VLAN bindings live. */
  hostsOf(networkId: string): string[] {
    if (!this.networks.has(networkId)) return [];
    const hosts = new Set(this.members.get(networkId)?.keys() ?? []);
    for (const id of this.vlansByNetwork.get(networkId) ?? []) {
      const v = this.vlanBindings.get(id)!;
      if (this.chassis.has(v.chassisId)) hosts.add(v.chassisId);
    }
    return [...hosts].sort();
  }

  /** Networks with a placed endpoint or a VLAN binding on a chassis (before any pending flush). */
  private networksOn(chassisId: string): Set<string> {
    const out = new Set<string>();
    for (const [net, byChassis] of this.members) if (byChassis.has(chassisId)) out.add(net);
    for (const v of this.vlanBindings.values()) if (v.chassisId === chassisId) out.add(v.networkId);
    return out;
  }

  private changeChassis(id: string, before: Chassis | undefined, after: Chassis | undefined): void {
    if (before && after) {
      if (before.tunnelIp !== after.tunnelIp) for (const n of this.networksOn(id)) this.dirty.networks.add(n);
      this.chassis.set(id, after);
      if (before.offload !== after.offload || before.tunnelIp !== after.tunnelIp) this.dirty.chassis.add(id);
      return;
    }
    // Created or deleted: which endpoints are placed (and which VLAN bindings count) changes.
    for (const n of this.networksOn(id)) this.dirty.networks.add(n);
    if (after) this.chassis.set(id, after);
    else this.chassis.delete(id);
    for (const v of this.vlanBindings.values()) if (v.chassisId === id) this.dirty.networks.add(v.networkId);
    for (const ep of this.endpoints.values())
      if (this.bindings.get(ep.ifaceId)?.chassisId === id) this.replace(ep.id);
  }

  private placeOf(ep: Endpoint): Placement | undefined {
    const b = this.bindings.get(ep.ifaceId);
    return b && this.chassis.has(b.chassisId) ? b : undefined;
  }

  /** Recomputes where an endpoint is placed; a move dirties its units and both chassis' network units. */
  private replace(epId: string): void {
    const ep = this.endpoints.get(epId);
    if (!ep) return;
    const old = this.placement.get(epId);
    const now = this.placeOf(ep);
    if (old?.chassisId === now?.chassisId && old?.ofport === now?.ofport) return;
    this.unplace(ep, old);
    this.place(ep, now);
    this.moved(ep.networkId, old, now);
    addTo(this.dirty.endpoints, ep.networkId, ep.id);
  }

  /** The network unit of a chassis lists its local ports: where one came or went, it is stale. */
  private moved(networkId: string, was: Placement | undefined, now: Placement | undefined): void {
    if (was?.chassisId === now?.chassisId && was?.ofport === now?.ofport) return;
    if (was) addTo(this.dirty.networkUnitOn, networkId, was.chassisId);
    if (now) addTo(this.dirty.networkUnitOn, networkId, now.chassisId);
  }

  private place(ep: Endpoint, p: Placement | undefined): void {
    if (!p) return;
    this.placement.set(ep.id, p); // the facts' own record: sources never mutate one they handed over
    const byChassis = entry(this.members, ep.networkId, () => new Map<string, Set<string>>());
    entry(byChassis, p.chassisId, () => new Set<string>()).add(ep.id);
  }

  private unplace(ep: Endpoint, p: Placement | undefined): void {
    if (!p) return;
    this.placement.delete(ep.id);
    const byChassis = this.members.get(ep.networkId);
    const set = byChassis?.get(p.chassisId);
    set?.delete(ep.id);
    if (set?.size === 0) byChassis!.delete(p.chassisId);
    if (byChassis?.size === 0) this.members.delete(ep.networkId);
  }

  private putEndpoint(ep: Endpoint, groupsChanged = true, markDirty = true): void {
    this.endpoints.set(ep.id, ep);
    const byIface = this.endpointsByIface.get(ep.ifaceId);
    if (byIface === undefined) this.endpointsByIface.set(ep.ifaceId, ep.id);
    else if (typeof byIface === 'string') {
      if (byIface !== ep.id) this.endpointsByIface.set(ep.ifaceId, new Set([byIface, ep.id]));
    } else byIface.add(ep.id);
    this.place(ep, this.placeOf(ep));
    if (markDirty) addTo(this.dirty.endpoints, ep.networkId, ep.id);
    for (const sg of ep.securityGroupIds) {
      addTo(this.sgMembers, sg, ep.id);
      if (groupsChanged) this.membersChanged(sg);
    }
  }

  private removeEndpoint(ep: Endpoint, groupsChanged = true): void {
    this.endpoints.delete(ep.id);
    const byIface = this.endpointsByIface.get(ep.ifaceId);
    if (byIface === ep.id) this.endpointsByIface.delete(ep.ifaceId);
    else if (typeof byIface === 'object') {
      byIface.delete(ep.id);
      if (byIface.size === 1) this.endpointsByIface.set(ep.ifaceId, [...byIface][0]!);
    }
    this.unplace(ep, this.placement.get(ep.id));
    addTo(this.dirty.endpoints, ep.networkId, ep.id);
    for (const sg of ep.securityGroupIds) {
      const set = this.sgMembers.get(sg);
      set?.delete(ep.id);
      if (set?.size === 0) this.sgMembers.delete(sg);
      if (groupsChanged) this.membersChanged(sg);
    }
  }

  private putVlan(v: VlanBinding): void {
    this.vlanBindings.set(v.id, v);
    addTo(this.vlansByNetwork, v.networkId, v.id);
    this.dirty.networks.add(v.networkId);
  }

  private removeVlan(v: VlanBinding): void {
    this.vlanBindings.delete(v.id);
    this.vlansByNetwork.get(v.networkId)?.delete(v.id);
    this.dirty.networks.add(v.networkId);
  }

  private putAcl(a: NetworkAcl): void {
    this.acls.set(a.id, a);
    addTo(this.aclsByNetwork, a.networkId, a.id);
    this.dirty.networkUnits.add(a.networkId);
  }

  private removeAcl(a: NetworkAcl): void {
    this.acls.delete(a.id);
    this.aclsByNetwork.get(a.networkId)?.delete(a.id);
    this.dirty.networkUnits.add(a.networkId);
  }

  private putSecurityGroup(sg: SecurityGroup): void {
    this.securityGroups.set(sg.id, sg);
    for (const r of sg.rules) if (r.remoteGroupId) addTo(this.sgReferrers, r.remoteGroupId, sg.id);
  }

  private removeSecurityGroup(sg: SecurityGroup): void {
    this.securityGroups.delete(sg.id);
    for (const r of sg.rules) if (r.remoteGroupId) this.sgReferrers.get(r.remoteGroupId)?.delete(sg.id);
  }

  /** A group's rules changed: its members' local units are stale. */
  private sgChanged(sgId: string): void {
    this.staleRules.add(sgId);
    for (const ep of this.sgMembers.get(sgId) ?? []) this.dirty.localUnits.add(ep);
  }

  /** A group's membership (or a member's addresses) changed: groups naming it as remote are stale. */
  private membersChanged(sgId: string): void {
    for (const referrer of this.sgReferrers.get(sgId) ?? []) this.sgChanged(referrer);
  }

  /** Security groups whose resolved rules must be recomputed (DesiredModel drops its cache of them). */
  readonly staleRules = new Set<string>();
}
