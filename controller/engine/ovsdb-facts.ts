import { EventEmitter } from 'node:events';
import { type ChassisFacts, type ChassisPorts, portsSignature } from '../../apps/build-view.js';
import type { ChassisInfo } from '../../southbound/ovsdb/chassis/agent.js';
import type { BindingEvent } from '../../southbound/ovsdb/chassis/bindings.js';
import { computeBindings } from '../../southbound/ovsdb/chassis/bindings.js';
import type { ChassisManager } from '../../southbound/ovsdb/chassis/manager.js';
import type { VswitchState } from '../../southbound/ovsdb/chassis/state.js';
import type { BridgeRow, InterfaceRow } from '../../southbound/ovsdb/vswitch.js';
import type { FactsSource } from './engine.js';
import type { FactsDelta } from './facts-delta.js';
import { entry } from './index-records.js';

/**
 * The chassis facts the engine needs, read from one chassis's OVSDB replica. Pure, so the same
 * database always gives the same facts: which datapath id the integration bridge has, which
 * OpenFlow port number the VXLAN port(s) and every other interface got, and which logical
 * port (iface-id) sits on which ofport.
 */
export interface OneChassisFacts {
  dpid?: string;
  ports: ChassisPorts;
  bindings: Map<string, number>;
}

const VNI_PORT = /^vxlan(\d+)$/;

export function factsOfChassis(state: VswitchState, bridgeName: string): OneChassisFacts {
  let bridge: BridgeRow | undefined;
  for (const b of state.bridges.values()) if (b.name === bridgeName) bridge = b;
  const onBridge = new Set<string>();
  if (bridge) {
    for (const portUuid of bridge.ports) {
      const port = state.ports.get(portUuid);
      for (const i of port?.interfaces ?? []) onBridge.add(i);
    }
  }
  const byName = new Map<string, number>();
  const vniTunnelPorts = new Map<number, number>();
  let tunnelPort: number | undefined;
  for (const [uuid, i] of state.interfaces as ReadonlyMap<string, InterfaceRow>) {
    if (!onBridge.has(uuid) || i.ofport === null || i.ofport <= 0) continue;
    byName.set(i.name, i.ofport);
    if (i.type !== 'vxlan') continue;
    const key = i.options.get('key');
    if (key === 'flow' && i.options.get('remote_ip') === 'flow') tunnelPort = i.ofport;
    const m = VNI_PORT.exec(i.name);
    if (m && key !== 'flow' && key !== undefined) vniTunnelPorts.set(Number(key), i.ofport);
  }
  const bindings = new Map<string, number>();
  for (const [ifaceId, b] of computeBindings(state))
    if (b.bridge === bridgeName) bindings.set(ifaceId, b.ofport);
  const dpid = bridge?.datapath_id?.replace(/"/g, '').toLowerCase().padStart(16, '0');
  return { dpid: dpid || undefined, ports: { tunnelPort, vniTunnelPorts, byName }, bindings };
}

/**
 * FactsSource over the ChassisManager: every connected chassis's facts, recomputed for a chassis
 * when its database changes, and kept as one snapshot updated in place, so a VM port appearing on
 * one hypervisor costs that hypervisor's facts, not every chassis's (a full rebuild walked all
 * 100,000 bindings of 1,000 chassis for each). Each change is reported with what it touched
 * (FactsDelta). An iface-id bound on two chassis at once (a VM mid-migration) goes to the chassis
 * that reported it last, as the manager's migration event says; when that one lets go, to
 * another that still has it.
 */
export class OvsdbFacts extends EventEmitter implements FactsSource {
  private readonly perChassis = new Map<string, OneChassisFacts>();
  private readonly bindings = new Map<string, { chassisId: string; ofport: number }>();
  private readonly ports = new Map<string, ChassisPorts>();
  private readonly snapshot: ChassisFacts = { bindings: this.bindings, ports: this.ports };
  private readonly dpidToChassis = new Map<string, string>();
  private readonly lastBoundOn = new Map<string, string>();
  /** iface-id -> the chassis whose database binds it (one, or two while a VM migrates). */
  private readonly reporters = new Map<string, Set<string>>();

  constructor(
    private readonly manager: ChassisManager,
    private readonly bridgeOf: (systemId: string) => string = () => 'br-int',
    private readonly stateOf: (systemId: string) => VswitchState | undefined = (id) =>
      manager.agentOf(id)?.state,
  ) {
    super();
    manager.on('chassis', (info: ChassisInfo) => this.refresh(info.systemId));
    manager.on('chassisDown', (info: ChassisInfo) => this.refresh(info.systemId));
    manager.on('ensured', (info: ChassisInfo) => this.refresh(info.systemId));
    manager.on('binding', (e: { systemId: string; event: BindingEvent }) => {
      if (e.event.kind !== 'unbind') this.lastBoundOn.set(e.event.binding.ifaceId, e.systemId);
      this.refresh(e.systemId);
    });
  }

  /** The facts as of now; the same object, updated in place as chassis report. */
  current(): ChassisFacts {
    return this.snapshot;
  }

  chassisOfDatapath(dpid: string): string | undefined {
    return this.dpidToChassis.get(dpid);
  }

  onChange(cb: (delta?: FactsDelta) => void): void {
    this.on('change', cb);
  }

  knownChassis(): ReadonlySet<string> {
    return new Set(this.perChassis.keys());
  }

  /** Re-reads one chassis's database (or, without an id, every chassis's) and reports the change. */
  refresh(systemId?: string): void {
    const listed = this.manager.chassis();
    const delta = { ifaces: new Set<string>(), chassis: new Set<string>() };
    if (systemId !== undefined) {
      this.refreshChassis(
        systemId,
        listed.some((c) => c.systemId === systemId),
        delta,
      );
    } else {
      const ids = new Set(listed.map((c) => c.systemId));
      for (const id of new Set([...this.perChassis.keys(), ...ids]))
        this.refreshChassis(id, ids.has(id), delta);
    }
    this.emit('change', delta);
  }

  private refreshChassis(
    id: string,
    listed: boolean,
    delta: { ifaces: Set<string>; chassis: Set<string> },
  ): void {
    const state = listed ? this.stateOf(id) : undefined;
    const next = state ? factsOfChassis(state, this.bridgeOf(id)) : undefined;
    const prev = this.perChassis.get(id);
    if (!prev && !next) return;
    // Named only when its ports or datapath changed: a VM port coming or going is not a chassis change.
    if (
      !prev ||
      !next ||
      prev.dpid !== next.dpid ||
      portsSignature(prev.ports) !== portsSignature(next.ports)
    )
      delta.chassis.add(id);
    if (next) {
      this.perChassis.set(id, next);
      this.ports.set(id, next.ports);
    } else {
      this.perChassis.delete(id);
      this.ports.delete(id);
    }
    if (prev?.dpid && prev.dpid !== next?.dpid && this.dpidToChassis.get(prev.dpid) === id)
      this.dpidToChassis.delete(prev.dpid);
    if (next?.dpid) this.dpidToChassis.set(next.dpid, id);

    const before = prev?.bindings ?? new Map<string, number>();
    const after = next?.bindings ?? new Map<string, number>();
    // A chassis binds ~100 ports: deciding each again is cheap, and catches the case where a
    // binding here is unchanged but this chassis has now bound it last (a migration's end).
    for (const ifaceId of after.keys()) {
      entry(this.reporters, ifaceId, () => new Set<string>()).add(id);
      this.decide(ifaceId, delta);
    }
    for (const ifaceId of before.keys()) {
      if (after.has(ifaceId)) continue;
      const r = this.reporters.get(ifaceId);
      r?.delete(id);
      if (r?.size === 0) this.reporters.delete(ifaceId);
      this.decide(ifaceId, delta);
    }
  }

  /** Where an iface-id is bound now: the chassis that bound it last, else where it was, else any. */
  private decide(ifaceId: string, delta: { ifaces: Set<string> }): void {
    const r = this.reporters.get(ifaceId);
    const current = this.bindings.get(ifaceId);
    let chassisId: string | undefined;
    if (r && r.size > 0) {
      const last = this.lastBoundOn.get(ifaceId);
      if (last !== undefined && r.has(last)) chassisId = last;
      else if (current && r.has(current.chassisId)) chassisId = current.chassisId;
      else chassisId = r.values().next().value;
    }
    const ofport =
      chassisId === undefined ? undefined : this.perChassis.get(chassisId)?.bindings.get(ifaceId);
    if (chassisId === undefined || ofport === undefined) {
      if (!current) return;
      this.bindings.delete(ifaceId);
    } else {
      if (current?.chassisId === chassisId && current.ofport === ofport) return;
      this.bindings.set(ifaceId, { chassisId, ofport });
    }
    delta.ifaces.add(ifaceId);
  }
}
