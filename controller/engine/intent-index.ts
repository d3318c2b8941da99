import {
  type ChassisFacts,
  type ChassisPorts,
  type IntentView,
  portsSignature,
} from '../../apps/build-view.js';
import type {
  AnyObject,
  Chassis,
  Endpoint,
  Mirror,
  Network,
  NetworkAcl,
  Qos,
  Router,
  SecurityGroup,
  Tenant,
  VlanBinding,
} from '../intent/model.js';
import { effectiveQos } from '../intent/model.js';
import type { ObjectChange } from '../intent/service.js';
import type { FactsDelta } from './facts-delta.js';
import { GroupIndex } from './group-index.js';
import {
  Dirty,
  entry,
  type Iface,
  IndexedChassis,
  IndexedEndpoint,
  type Placement,
} from './index-records.js';
import { MirrorIndex } from './mirror-index.js';
import { RouterIndex } from './router-index.js';

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  entry(map, key, () => new Set<string>()).add(value);
}

const sameItems = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().join() === [...b].sort().join();

/**
 * The intent objects the apps read and the chassis facts, indexed so a change finds what it
 * touches without scanning: endpoints by iface-id, placed endpoints by network and chassis, VLAN
 * bindings and ACLs by network, security-group members and the groups naming a group as remote.
 * Every change records in `dirty` which units it invalidates.
 */
export class IntentIndex {
  readonly networks = new Map<string, Network>();
  /** tenant -> its default rate limits (only tenants that have some). */
  readonly tenantQos = new Map<string, Qos>();
  readonly endpoints = new Map<string, IndexedEndpoint>();
  readonly chassis = new Map<string, IndexedChassis>();
  readonly vlanBindings = new Map<string, VlanBinding>();
  readonly acls = new Map<string, NetworkAcl>();
  readonly ports = new Map<string, ChassisPorts>();
  /** network -> chassis -> placed endpoints. */
  readonly members = new Map<string, Map<string, Set<IndexedEndpoint>>>();
  readonly vlansByNetwork = new Map<string, Set<string>>();
  readonly aclsByNetwork = new Map<string, Set<string>>();
  readonly dirty = new Dirty();
  readonly groups = new GroupIndex(this.dirty);
  readonly securityGroups = this.groups.securityGroups;
  /** security group -> endpoints naming it (placed or not: remote-group rules use every member). */
  readonly sgMembers = this.groups.members;
  /** Security groups whose resolved rules must be recomputed (DesiredModel drops its cache of them). */
  readonly staleRules = this.groups.staleRules;
  readonly routing = new RouterIndex(this.dirty);
  readonly mirroring = new MirrorIndex(this.dirty);
  /** iface-id -> its binding in the last facts and the endpoints naming it. */
  private readonly ifaces = new Map<string, Iface>();
  private readonly portSigs = new Map<string, string>();

  load(intent: IntentView, facts: ChassisFacts): void {
    for (const c of intent.chassis) this.chassis.set(c.id, new IndexedChassis(c));
    for (const n of intent.networks) this.networks.set(n.id, n);
    for (const t of intent.tenants ?? []) if (t.qos) this.tenantQos.set(t.id, t.qos);
    for (const v of intent.vlanBindings) this.putVlan(v);
    for (const a of intent.networkAcls) this.putAcl(a);
    for (const sg of intent.securityGroups) this.groups.load(sg);
    for (const r of intent.routers ?? []) this.routing.changed(undefined, r);
    for (const m of intent.mirrors ?? []) this.mirroring.load(m);
    // forEach, not for-of over entries: no [key, value] pair allocated per binding.
    facts.bindings.forEach((b, iface) => {
      this.ifaces.set(iface, { binding: b, endpoints: undefined });
    });
    for (const [id, p] of facts.ports) {
      this.ports.set(id, p);
      this.portSigs.set(id, portsSignature(p));
    }
    // Every network is rebuilt in full, so no endpoint needs marking.
    for (const ep of intent.endpoints) this.putEndpoint(ep, true, false);
    for (const n of this.networks.keys()) this.dirty.networks.add(n);
    this.dirty.chassisSetChanged = true;
  }

  applyChange(c: ObjectChange): void {
    const before = c.before as AnyObject | undefined;
    const after = c.after as AnyObject | undefined;
    switch (c.kind) {
      case 'network':
        if (after) this.networks.set(c.id, after as Network);
        else this.networks.delete(c.id);
        this.dirty.networks.add(c.id);
        // The other networks of its router route into its subnets.
        for (const m of this.routing.matesOf(c.id)) if (m !== c.id) this.dirty.networkUnits.add(m);
        return;
      case 'tenant': {
        // Rare: a change of its default limits rebuilds its networks (their endpoints' meters).
        const qos = (after as Tenant | undefined)?.qos;
        if (stableQos(qos) === stableQos(this.tenantQos.get(c.id))) return;
        if (qos) this.tenantQos.set(c.id, qos);
        else this.tenantQos.delete(c.id);
        for (const n of this.networks.values()) if (n.tenantId === c.id) this.dirty.networks.add(n.id);
        return;
      }
      case 'router':
        // Rare: every network it is or was on is rebuilt (hosts, gateway, l3-neighbor flows).
        this.routing.changed(before as Router | undefined, after as Router | undefined);
        return;
      case 'endpoint': {
        const b = before as Endpoint | undefined;
        const a = after as Endpoint | undefined;
        // Remote-group rules list members' addresses: only a change of those or of membership counts.
        const sameForGroups =
          b &&
          a &&
          sameItems(b.ips, a.ips) &&
          sameItems(b.allowedAddresses ?? [], a.allowedAddresses ?? []) &&
          sameItems(b.securityGroupIds, a.securityGroupIds);
        const was = b && this.placementOf(b.id);
        if (b) this.routing.nexthopChanged(b);
        if (a) this.routing.nexthopChanged(a);
        if (b) this.removeEndpoint(b, !sameForGroups);
        if (a) this.putEndpoint(a, !sameForGroups);
        const now = a && this.placementOf(a.id);
        if (was?.chassisId !== now?.chassisId || was?.ofport !== now?.ofport)
          this.mirroring.destinationMoved(c.id);
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
      case 'mirror':
        this.mirroring.changed(before as Mirror | undefined, after as Mirror | undefined);
        return;
      case 'networkAcl':
        if (before) this.removeAcl(before as NetworkAcl);
        if (after) this.putAcl(after as NetworkAcl);
        return;
      case 'securityGroup':
        this.groups.changed(c.id, before as SecurityGroup | undefined, after as SecurityGroup | undefined);
        return;
      default:
        return;
    }
  }

  /**
   * New chassis facts: only what differs from the last facts seen marks anything dirty. With a
   * delta, only the iface-ids and chassis it names are looked at; without, every binding and
   * chassis is compared.
   */
  applyFacts(facts: ChassisFacts, delta?: FactsDelta): void {
    const changed: Iface[] = [];
    if (delta) {
      for (const iface of delta.ifaces) this.bindingFact(iface, facts.bindings.get(iface), changed);
    } else {
      facts.bindings.forEach((b, iface) => {
        this.bindingFact(iface, b, changed);
      });
      for (const [iface, f] of this.ifaces)
        if (f.binding !== undefined && !facts.bindings.has(iface))
          this.bindingFact(iface, undefined, changed);
    }
    for (const f of changed) {
      if (typeof f.endpoints === 'string') this.replace(f.endpoints);
      else for (const id of f.endpoints ?? []) this.replace(id);
    }

    const ids = delta ? delta.chassis : new Set([...facts.ports.keys(), ...this.ports.keys()]);
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

  /** One iface-id's binding in the new facts (undefined: none); collects those that changed. */
  private bindingFact(iface: string, b: Placement | undefined, changed: Iface[]): void {
    const f = this.ifaces.get(iface);
    if (b) {
      // A binding nobody names yet is only remembered: no unit depends on it.
      if (!f) this.ifaces.set(iface, { binding: b, endpoints: undefined });
      else {
        const old = f.binding;
        f.binding = b;
        if (!old || old.chassisId !== b.chassisId || old.ofport !== b.ofport) changed.push(f);
      }
      return;
    }
    if (!f || f.binding === undefined) return;
    f.binding = undefined;
    if (f.endpoints === undefined) this.ifaces.delete(iface);
    else changed.push(f);
  }

  /** The limits an endpoint is held to: its own, else its tenant's default (per direction). */
  qosOf(ep: { networkId: string; qos: Qos | undefined }): Qos | undefined {
    const net = this.networks.get(ep.networkId);
    if (!net) return ep.qos;
    return effectiveQos(ep.qos, this.tenantQos.get(net.tenantId), net.mtu);
  }

  /** Where an endpoint is placed (bound on an existing chassis), if it is. */
  placementOf(epId: string): Placement | undefined {
    return this.endpoints.get(epId)?.placement;
  }

  /**
   * Chassis a network is present on (`all`, sorted): where it is hosted (`real`: its endpoints are
   * bound or its VLAN bindings live there) and where a network on the same router is hosted
   * (those chassis route into it). Without a router the two are the same array.
   */
  hostsOf(networkId: string): { all: string[]; real: string[] } {
    const real = this.realHostsOf(networkId);
    const mates = this.routing.matesOf(networkId);
    if (mates.length <= 1 || !this.networks.has(networkId)) return { all: real, real };
    const all = new Set(real);
    for (const m of mates) if (m !== networkId) for (const h of this.realHostsOf(m)) all.add(h);
    return { all: [...all].sort(), real };
  }

  private realHostsOf(networkId: string): string[] {
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
      if (!this.chassis.has(id)) this.dirty.chassisSetChanged = true;
      if (before.tunnelIp !== after.tunnelIp) {
        for (const n of this.networksOn(id)) this.dirty.networks.add(n);
        // Mirrors copying to an endpoint there send their copies to the new address.
        for (const byChassis of this.members.values())
          for (const ep of byChassis.get(id) ?? []) this.mirroring.destinationMoved(ep.id);
      }
      this.chassis.set(id, new IndexedChassis(after));
      if (before.offload !== after.offload || before.tunnelIp !== after.tunnelIp) this.dirty.chassis.add(id);
      return;
    }
    // Created or deleted: which endpoints are placed (and which VLAN bindings count) changes.
    this.dirty.chassisSetChanged = true;
    for (const n of this.networksOn(id)) this.dirty.networks.add(n);
    if (after) this.chassis.set(id, new IndexedChassis(after));
    else this.chassis.delete(id);
    for (const v of this.vlanBindings.values()) if (v.chassisId === id) this.dirty.networks.add(v.networkId);
    for (const ep of this.endpoints.values())
      if (this.ifaces.get(ep.ifaceId)?.binding?.chassisId === id) this.replace(ep.id);
  }

  private placeOf(ep: IndexedEndpoint): Placement | undefined {
    const b = this.ifaces.get(ep.ifaceId)?.binding;
    return b && this.chassis.has(b.chassisId) ? b : undefined;
  }

  /** Recomputes where an endpoint is placed; a move dirties its units and both chassis' network units. */
  private replace(epId: string): void {
    const ep = this.endpoints.get(epId);
    if (!ep) return;
    const old = ep.placement;
    const now = this.placeOf(ep);
    if (old?.chassisId === now?.chassisId && old?.ofport === now?.ofport) return;
    this.unplace(ep, old);
    this.place(ep, now);
    this.moved(ep.networkId, old, now);
    this.routing.nexthopChanged(ep);
    this.mirroring.destinationMoved(ep.id);
    addTo(this.dirty.endpoints, ep.networkId, ep.id);
  }

  /** The network unit of a chassis lists its local ports: where one came or went, it is stale. */
  private moved(networkId: string, was: Placement | undefined, now: Placement | undefined): void {
    if (was?.chassisId === now?.chassisId && was?.ofport === now?.ofport) return;
    if (was) addTo(this.dirty.networkUnitOn, networkId, was.chassisId);
    if (now) addTo(this.dirty.networkUnitOn, networkId, now.chassisId);
  }

  private place(ep: IndexedEndpoint, p: Placement | undefined): void {
    if (!p) return;
    ep.placement = p; // the facts' own record: sources never mutate one they handed over
    const byChassis = entry(this.members, ep.networkId, () => new Map<string, Set<IndexedEndpoint>>());
    entry(byChassis, p.chassisId, () => new Set<IndexedEndpoint>()).add(ep);
  }

  private unplace(ep: IndexedEndpoint, p: Placement | undefined): void {
    if (!p) return;
    ep.placement = undefined;
    const byChassis = this.members.get(ep.networkId);
    const set = byChassis?.get(p.chassisId);
    set?.delete(ep);
    if (set?.size === 0) byChassis!.delete(p.chassisId);
    if (byChassis?.size === 0) this.members.delete(ep.networkId);
  }

  private putEndpoint(raw: Endpoint, groupsChanged = true, markDirty = true): void {
    const ep = new IndexedEndpoint(raw);
    this.endpoints.set(ep.id, ep);
    const f = entry(this.ifaces, ep.ifaceId, (): Iface => ({ binding: undefined, endpoints: undefined }));
    if (f.endpoints === undefined) f.endpoints = ep.id;
    else if (typeof f.endpoints === 'string') {
      if (f.endpoints !== ep.id) f.endpoints = new Set([f.endpoints, ep.id]);
    } else f.endpoints.add(ep.id);
    this.place(ep, this.placeOf(ep));
    if (markDirty) addTo(this.dirty.endpoints, ep.networkId, ep.id);
    for (const sg of ep.securityGroupIds) this.groups.join(sg, ep.id, groupsChanged);
  }

  private removeEndpoint(ep: Endpoint, groupsChanged = true): void {
    const indexed = this.endpoints.get(ep.id);
    this.endpoints.delete(ep.id);
    const f = this.ifaces.get(ep.ifaceId);
    if (f?.endpoints === ep.id) f.endpoints = undefined;
    else if (typeof f?.endpoints === 'object') {
      f.endpoints.delete(ep.id);
      if (f.endpoints.size === 1) f.endpoints = [...f.endpoints][0]!;
    }
    if (f && f.endpoints === undefined && f.binding === undefined) this.ifaces.delete(ep.ifaceId);
    if (indexed) this.unplace(indexed, indexed.placement);
    addTo(this.dirty.endpoints, ep.networkId, ep.id);
    for (const sg of ep.securityGroupIds) this.groups.leave(sg, ep.id, groupsChanged);
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
}

const stableQos = (q: Qos | undefined): string => JSON.stringify(q ?? null);
