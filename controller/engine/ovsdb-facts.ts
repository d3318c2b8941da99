import { EventEmitter } from 'node:events';
import type { ChassisFacts, ChassisPorts } from '../../apps/build-view.js';
import { computeBindings } from '../../southbound/ovsdb/chassis/bindings.js';
import type { ChassisManager } from '../../southbound/ovsdb/chassis/manager.js';
import type { VswitchState } from '../../southbound/ovsdb/chassis/state.js';
import type { BridgeRow, InterfaceRow } from '../../southbound/ovsdb/vswitch.js';
import type { FactsSource } from './engine.js';

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
 * FactsSource over the ChassisManager: every connected chassis's facts, recomputed when its
 * database changes. An iface-id bound on two chassis at once (a VM mid-migration) goes to the
 * chassis that reported it last, as the manager's migration event says.
 */
export class OvsdbFacts extends EventEmitter implements FactsSource {
  private perChassis = new Map<string, OneChassisFacts>();
  private snapshot: ChassisFacts = { bindings: new Map(), ports: new Map() };
  private dpidToChassis = new Map<string, string>();
  private lastBoundOn = new Map<string, string>();

  constructor(
    private readonly manager: ChassisManager,
    private readonly bridgeOf: (systemId: string) => string = () => 'br-int',
    private readonly stateOf: (systemId: string) => VswitchState | undefined = (id) =>
      manager.agentOf(id)?.state,
  ) {
    super();
    const refresh = () => this.refresh();
    manager.on('chassis', refresh);
    manager.on('chassisDown', refresh);
    manager.on('ensured', refresh);
    manager.on('binding', (e) => {
      if (e.event.kind !== 'unbind') this.lastBoundOn.set(e.event.binding.ifaceId, e.systemId);
      refresh();
    });
  }

  current(): ChassisFacts {
    return this.snapshot;
  }

  chassisOfDatapath(dpid: string): string | undefined {
    return this.dpidToChassis.get(dpid);
  }

  onChange(cb: () => void): void {
    this.on('change', cb);
  }

  knownChassis(): ReadonlySet<string> {
    return new Set(this.perChassis.keys());
  }

  refresh(): void {
    this.perChassis.clear();
    for (const info of this.manager.chassis()) {
      const state = this.stateOf(info.systemId);
      if (state) this.perChassis.set(info.systemId, factsOfChassis(state, this.bridgeOf(info.systemId)));
    }
    const bindings = new Map<string, { chassisId: string; ofport: number }>();
    const ports = new Map<string, ChassisPorts>();
    this.dpidToChassis.clear();
    for (const [chassisId, f] of this.perChassis) {
      ports.set(chassisId, f.ports);
      if (f.dpid) this.dpidToChassis.set(f.dpid, chassisId);
      for (const [ifaceId, ofport] of f.bindings) {
        const prev = bindings.get(ifaceId);
        if (prev && this.lastBoundOn.get(ifaceId) !== chassisId) continue;
        bindings.set(ifaceId, { chassisId, ofport });
      }
    }
    this.snapshot = { bindings, ports };
    this.emit('change');
  }
}
