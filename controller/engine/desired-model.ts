import type { Logger } from 'pino';
import { sgLogging } from '../../apps/acl/sg-log.js';
import type { ChassisFacts, IntentView } from '../../apps/build-view.js';
import { type MirrorPlacement, portMirrors, portTaps } from '../../apps/mirror/resolve.js';
import {
  chassisUnit,
  endpointArpUnit,
  localEndpointUnit,
  networkUnit,
  remoteEndpointUnit,
} from '../../apps/units.js';
import type { DatapathCtx, LocalPort, ResolvedRule, SgLogging } from '../../apps/view.js';
import { tunnelPortFor } from '../../apps/view.js';
import type { ObjectChange } from '../intent/service.js';
import { checkFlow, type Desired, type DesiredFlow } from '../pipeline/flow.js';
import { TABLE } from '../pipeline/tables.js';
import { flowKey } from '../reconcile/canonical.js';
import {
  type ChassisChanges,
  type ChassisDesired,
  ChassisState,
  type Keyed,
  NetOnChassis,
  RemoteEntry,
  RemoteTable,
  type Unit,
  unitOf,
} from './desired-state.js';
import type { FactsDelta } from './facts-delta.js';
import { entry, type IndexedEndpoint, type Placement } from './index-records.js';
import { IntentIndex } from './intent-index.js';
import { networkOnChassis, resolvedRules } from './network-entry.js';

export type { ChassisChanges, ChassisDesired } from './desired-state.js';

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a === b || (a.length === b.length && a.every((x, i) => x === b[i]));

/**
 * Incremental desired state of every chassis. Intent changes and new chassis facts mark units
 * dirty (IntentIndex); flush() recomputes only those units and hands each chassis's changes to the
 * reconciler as flow keys and group ids with their new value (or null: no longer desired). Its
 * result always equals computeDatapath over buildDatapathViews of the same intent and facts (a
 * property test holds it to that); it is just cheaper: adding an endpoint computes that
 * endpoint's two units and its chassis's network unit. The remote-endpoint units of a network
 * are computed once and shared by every chassis hosting it (RemoteTable), so a full recompute
 * costs one unit per endpoint, not one per endpoint per chassis.
 */
export class DesiredModel {
  private index = new IntentIndex();
  private readonly states = new Map<string, ChassisState>();
  /** network -> chassis hosting it at the last flush. */
  private readonly hosted = new Map<string, { all: string[]; real: string[] }>();
  /** network -> remote-table signature -> table. */
  private readonly tables = new Map<string, Map<string, RemoteTable>>();
  private readonly rulesMemo = new Map<string, ResolvedRule[] | undefined>();
  private pipeline?: Unit;
  /** Chassis that recorded changes during the current flush. */
  private readonly touched = new Set<ChassisState>();
  private readonly touch = (st: ChassisState) => {
    this.touched.add(st);
  };

  constructor(private readonly log?: Logger) {}

  /** Starts over from a full snapshot (startup, or a source that cannot say what changed). */
  reset(intent: IntentView, facts: ChassisFacts): void {
    this.index = new IntentIndex();
    this.states.clear();
    this.hosted.clear();
    this.tables.clear();
    this.rulesMemo.clear();
    this.touched.clear();
    this.index.load(intent, facts);
  }

  intentChanged(changes: readonly ObjectChange[]): void {
    for (const c of changes) this.index.applyChange(c);
  }

  /** New chassis facts; `delta` names what changed (without it, everything is compared). */
  factsChanged(facts: ChassisFacts, delta?: FactsDelta): void {
    this.index.applyFacts(facts, delta);
  }

  chassis(chassisId: string): ChassisDesired | undefined {
    return this.states.get(chassisId);
  }

  chassisIds(): string[] {
    return [...this.states.keys()];
  }

  desired(chassisId: string): Desired | undefined {
    return this.states.get(chassisId)?.toDesired();
  }

  /** Recomputes every dirty unit; returns the chassis whose desired state changed since last asked. */
  flush(): ChassisChanges[] {
    const ix = this.index;
    const dirty = ix.dirty;
    for (const sg of ix.staleRules) this.rulesMemo.delete(sg);
    ix.staleRules.clear();

    // A deleted chassis's networks were marked for a full rebuild by the index. Only when the set
    // of chassis changed: a flush of one endpoint's change must not walk every chassis.
    this.pipeline ??= this.unit(chassisUnit);
    if (dirty.chassisSetChanged) {
      for (const id of this.states.keys()) if (!ix.chassis.has(id)) this.states.delete(id);
      for (const c of ix.chassis.values()) {
        if (!this.states.has(c.id))
          this.states.set(c.id, new ChassisState(c.id, this.ctxOf(c.id), this.pipeline, this.touch));
      }
    }
    // Chassis whose own facts changed: every network on them is rebuilt there.
    const rebuildOn = new Map<string, Set<string>>();
    for (const id of dirty.chassis) {
      const st = this.states.get(id);
      if (!st) continue;
      st.ctx = this.ctxOf(id);
      for (const net of st.nets.keys()) entry(rebuildOn, net, () => new Set<string>()).add(id);
    }
    const touched = dirty.touchedNetworks();
    for (const net of rebuildOn.keys()) touched.add(net);
    // Where a network on a router comes or goes, the others of its router follow (they route into it).
    for (const net of [...touched]) for (const m of ix.routing.matesOf(net)) touched.add(m);
    for (const net of touched) this.flushNetwork(net, rebuildOn.get(net));

    for (const epId of dirty.localUnits) {
      const ep = ix.endpoints.get(epId);
      const p = ep?.placement;
      const nc = ep && p && this.states.get(p.chassisId)?.nets.get(ep.networkId);
      if (!nc || !ep || !p) continue;
      const st = this.states.get(p.chassisId)!;
      const now = this.localUnitOf(ep, p.ofport, nc.table, st.ctx);
      st.swap(nc.local.get(epId), now);
      nc.local.set(epId, now);
    }
    dirty.clear();
    const out: ChassisChanges[] = [];
    for (const st of this.touched) {
      if (this.states.get(st.chassisId) !== st) continue; // deleted meanwhile
      st.endFlush();
      if (st.hasChanges()) out.push(st.takeChanges());
    }
    this.touched.clear();
    return out;
  }

  private flushNetwork(networkId: string, rebuildOn: Set<string> | undefined): void {
    const ix = this.index;
    const dirty = ix.dirty;
    const { all: hosts, real } = ix.hostsOf(networkId);
    const was = this.hosted.get(networkId);
    const old = was?.all ?? [];
    const oldSet = new Set(old);
    // Also where only the chassis hosting it for real changed (one that routed into it now has a
    // port of it): the flood groups of the others must reach it.
    const hostsChanged = !sameList(old, hosts) || !sameList(was?.real ?? [], real);
    const newSet = new Set(hosts);
    for (const c of old) {
      const st = this.states.get(c);
      const nc = st?.nets.get(networkId);
      if (!st || !nc || newSet.has(c)) continue;
      st.dropNetwork(nc);
      st.nets.delete(networkId);
    }
    const full = dirty.networks.has(networkId) || hosts.length === 0;
    if (full) this.tables.delete(networkId);
    if (hosts.length === 0) {
      this.hosted.delete(networkId);
      return;
    }
    this.hosted.set(networkId, { all: hosts, real });

    // Shared remote tables first: each changed endpoint's entry, old and new, for every table.
    const endpoints = full ? [] : [...(dirty.endpoints.get(networkId) ?? [])];
    const updates = new Map<RemoteTable, Array<[string, RemoteEntry | undefined, RemoteEntry | undefined]>>();
    for (const table of this.tables.get(networkId)?.values() ?? []) {
      const list: Array<[string, RemoteEntry | undefined, RemoteEntry | undefined]> = [];
      for (const epId of endpoints) {
        const before = table.entries.get(epId);
        const now = this.remoteEntryOf(table, networkId, epId);
        if (now) table.entries.set(epId, now);
        else table.entries.delete(epId);
        list.push([epId, before, now]);
      }
      updates.set(table, list);
    }

    const unitOn = dirty.networkUnitOn.get(networkId);
    const realSet = real === hosts ? newSet : new Set(real);
    for (const c of hosts) {
      const st = this.states.get(c)!;
      const nc = st.nets.get(networkId);
      const routedOnly = !realSet.has(c);
      if (!nc || full || !oldSet.has(c) || rebuildOn?.has(c) || nc.routedOnly !== routedOnly) {
        // The shared table already holds this flush's entries: drop what this chassis had (the
        // entries as they were before this flush), never record an addition the rebuild may not
        // repeat (a chassis that now only routes in sees less of each entry).
        if (nc) {
          st.dropNetwork(nc, new Map((updates.get(nc.table) ?? []).map(([id, before]) => [id, before])));
          st.nets.delete(networkId);
        }
        this.rebuildNetwork(st, networkId, hosts, real, routedOnly);
        continue;
      }
      const removed: Array<Unit | undefined> = [];
      const added: Array<Unit | undefined> = [];
      if (!routedOnly && (hostsChanged || dirty.networkUnits.has(networkId) || unitOn?.has(c))) {
        removed.push(nc.unit);
        nc.unit = this.networkUnitOf(st, networkId, hosts, real);
        added.push(nc.unit);
      }
      for (const epId of endpoints) {
        removed.push(nc.local.get(epId));
        const ep = ix.endpoints.get(epId);
        const p = ep?.placement;
        if (ep && p && ep.networkId === networkId && p.chassisId === c) {
          const unit = this.localUnitOf(ep, p.ofport, nc.table, st.ctx);
          nc.local.set(epId, unit);
          added.push(unit);
        } else nc.local.delete(epId);
      }
      for (const u of removed) st.swap(u, undefined);
      for (const u of added) st.swap(undefined, u);
      for (const [, before, now] of updates.get(nc.table) ?? []) st.swapEntry(before, now, routedOnly);
    }
  }

  /**
   * Builds the network's part of a chassis from nothing (joined, or too much changed). Where the
   * chassis only routes into the network, that part is the way to each endpoint and nothing else.
   */
  private rebuildNetwork(
    st: ChassisState,
    networkId: string,
    hosts: string[],
    real: string[],
    routedOnly: boolean,
  ): void {
    const ix = this.index;
    const old = st.nets.get(networkId);
    if (old) st.dropNetwork(old);
    const nc = new NetOnChassis(this.tableFor(networkId, st.ctx), routedOnly);
    if (!routedOnly) nc.unit = this.networkUnitOf(st, networkId, hosts, real);
    for (const ep of ix.members.get(networkId)?.get(st.chassisId) ?? []) {
      nc.local.set(ep.id, this.localUnitOf(ep, ep.placement!.ofport, nc.table, st.ctx));
    }
    st.nets.set(networkId, nc);
    st.addNetwork(nc);
  }

  private tableFor(networkId: string, ctx: DatapathCtx): RemoteTable {
    const vni = this.index.networks.get(networkId)!.vni;
    const port = tunnelPortFor(ctx, vni);
    const sig = `${port}|${ctx.offload}`;
    const byNet = entry(this.tables, networkId, () => new Map<string, RemoteTable>());
    const have = byNet.get(sig);
    if (have) return have;
    const table = new RemoteTable({
      chassisId: '',
      tunnelIp: '',
      offload: ctx.offload,
      tunnelPort: port,
      vniTunnelPorts: port === undefined ? new Map() : new Map([[vni, port]]),
    });
    for (const eps of this.index.members.get(networkId)?.values() ?? []) {
      for (const ep of eps) table.entries.set(ep.id, this.remoteEntry(table, vni, ep, ep.placement!));
    }
    byNet.set(sig, table);
    return table;
  }

  private remoteEntryOf(table: RemoteTable, networkId: string, epId: string): RemoteEntry | undefined {
    const ix = this.index;
    const ep = ix.endpoints.get(epId);
    const p = ep?.placement;
    if (!ep || !p || ep.networkId !== networkId) return undefined;
    return this.remoteEntry(table, ix.networks.get(networkId)!.vni, ep, p);
  }

  /** A placed endpoint's entry in a remote table of its network. */
  private remoteEntry(table: RemoteTable, vni: number, ep: IndexedEndpoint, p: Placement): RemoteEntry {
    const tunnelIp = this.index.chassis.get(p.chassisId)!.tunnelIp;
    const remote = {
      endpointId: ep.id,
      mac: ep.mac,
      ips: ep.ips,
      chassisId: p.chassisId,
      tunnelIp,
    };
    // Neither unit has groups, so the ARP part of the entry is exactly its flows: its answers
    // (table arp-responder) first, then its l3-neighbor flows where the network is routed.
    const routed = this.index.routing.of(ep.networkId) !== undefined;
    const arp = this.keyed(() => endpointArpUnit({ vni, routed }, remote));
    const tunnel = this.keyed(() => remoteEndpointUnit(table.ctx, { vni }, remote));
    let answers = 0;
    if (routed)
      while (answers < (arp?.flows.length ?? 0) && arp!.flows[answers]!.tableId === TABLE.ARP_RESPONDER)
        answers++;
    const arpEnd = 2 * (arp?.flows.length ?? 0);
    return new RemoteEntry(p.chassisId, unitOf(arp, tunnel), arpEnd, routed ? 2 * answers : arpEnd);
  }

  /**
   * An endpoint's local unit. Its MAC's l2-lookup match is the one of its flow into the tunnel
   * (in `table`, which chassis that host it remotely see), so that match and its key are shared.
   * `ctx`: its chassis (where its mirrors' copies leave from or arrive).
   */
  private localUnitOf(ep: IndexedEndpoint, ofport: number, table: RemoteTable, ctx: DatapathCtx): Unit {
    const ix = this.index;
    const from = ix.mirroring.from(ep.id);
    const to = ix.mirroring.to(ep.id);
    const vni = ix.networks.get(ep.networkId)!.vni;
    const tunnel = table.entries.get(ep.id)?.tunnelFlow();
    const port: LocalPort = {
      endpointId: ep.id,
      ofport,
      mac: ep.mac,
      ips: ep.ips,
      portSecurity: ep.portSecurity,
      securityGroupIds: ep.securityGroupIds,
      allowedAddresses: ep.allowedAddresses,
      qos: ix.qosOf(ep),
      sgLog: ep.securityGroupIds.length === 0 ? undefined : this.sgLogOf(ep.securityGroupIds),
      mirrors: from && portMirrors(ctx, from, this.placementOf),
      taps: to && portTaps(ctx, to),
      l2Match: tunnel?.flow.match,
    };
    const rules =
      ep.securityGroupIds.length === 0 ? [] : ep.securityGroupIds.flatMap((id) => this.rulesOf(id) ?? []);
    const gw = ix.routing.gatewayOf(ep.networkId);
    const net = gw ? { vni, gatewayMac: gw.mac, routes6: gw.routes6 } : { vni };
    return unitOf(this.keyed(() => localEndpointUnit(net, port, rules), tunnel));
  }

  /** `hosts`: every chassis the network is present on; `real`: those hosting it (not only routing into it). */
  private networkUnitOf(st: ChassisState, networkId: string, hosts: string[], real: string[]): Unit {
    const entry = networkOnChassis(this.index, st.chassisId, networkId, hosts, real);
    return this.unit(() => networkUnit(st.ctx, entry));
  }

  /** A security group's rules with remote groups resolved (memoised until the group or its members change). */
  private rulesOf(sgId: string): ResolvedRule[] | undefined {
    if (this.rulesMemo.has(sgId)) return this.rulesMemo.get(sgId);
    const rules = resolvedRules(this.index, sgId);
    this.rulesMemo.set(sgId, rules);
    return rules;
  }

  /** What an endpoint's security groups log together. */
  private sgLogOf(ids: readonly string[]): SgLogging | undefined {
    const groups = this.index.securityGroups;
    return sgLogging(ids.map((id) => groups.get(id)?.log));
  }

  /** Where an endpoint is bound, for the mirrors copying to it. */
  private readonly placementOf = (endpointId: string): MirrorPlacement | undefined => {
    const p = this.index.endpoints.get(endpointId)?.placement;
    return (
      p && {
        chassisId: p.chassisId,
        ofport: p.ofport,
        tunnelIp: this.index.chassis.get(p.chassisId)!.tunnelIp,
      }
    );
  };

  private ctxOf(chassisId: string): DatapathCtx {
    const c = this.index.chassis.get(chassisId)!;
    const ports = this.index.ports.get(chassisId);
    return {
      chassisId,
      tunnelIp: c.tunnelIp,
      offload: c.offload,
      tunnelPort: ports?.tunnelPort,
      vniTunnelPorts: ports?.vniTunnelPorts ?? new Map(),
    };
  }

  private unit(compute: () => Desired): Unit {
    return unitOf(this.keyed(compute));
  }

  /**
   * Runs a unit function and keys its flows (a flow whose match list is `known`'s has its key);
   * a flow the pipeline refuses is a bug: logged, and the unit left empty (undefined).
   */
  private keyed(compute: () => Desired, known?: { key: string; flow: DesiredFlow }): Keyed | undefined {
    try {
      const d = compute();
      const keys = new Array<string>(d.flows.length);
      for (let i = 0; i < keys.length; i++) {
        const f = d.flows[i]!;
        checkFlow(f);
        const k = known?.flow;
        keys[i] =
          k && f.match === k.match && f.tableId === k.tableId && f.priority === k.priority
            ? known!.key
            : flowKey(f);
      }
      return d.meters
        ? { flows: d.flows, groups: d.groups, meters: d.meters, keys }
        : { flows: d.flows, groups: d.groups, keys };
    } catch (err) {
      this.log?.error({ err: (err as Error).message }, 'a unit of desired state failed to compute');
      return undefined;
    }
  }
}
