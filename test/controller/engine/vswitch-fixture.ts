import { EventEmitter } from 'node:events';
import type { VswitchState } from '../../../southbound/ovsdb/chassis/state.js';
import type { BridgeRow, InterfaceRow, PortRow } from '../../../southbound/ovsdb/vswitch.js';

/** A hypervisor as its database describes it: integration bridge dpid, VXLAN port, bound VM ports. */
export interface Hv {
  dpid: string;
  tunnel: number | null;
  /** iface-id -> ofport. */
  ifaces: Map<string, number>;
}

const m = (o: Record<string, string> = {}) => new Map(Object.entries(o));

/** The OVSDB replica contents of such a hypervisor (bridge br-int), as factsOfChassis reads them. */
export function vswitch(hv: Hv): VswitchState {
  const interfaces = new Map<string, InterfaceRow>();
  const ports = new Map<string, PortRow>();
  const add = (name: string, row: Partial<InterfaceRow>) => {
    interfaces.set(`i-${name}`, {
      _uuid: `i-${name}`,
      name,
      type: '',
      options: m(),
      external_ids: m(),
      ofport: null,
      ...row,
    } as InterfaceRow);
    ports.set(`p-${name}`, {
      _uuid: `p-${name}`,
      name,
      interfaces: [`i-${name}`],
      external_ids: m(),
    } as never);
  };
  for (const [ifaceId, ofport] of hv.ifaces)
    add(`tap-${ifaceId}`, { ofport, external_ids: m({ 'iface-id': ifaceId }) });
  if (hv.tunnel !== null)
    add('vxlan0', { type: 'vxlan', ofport: hv.tunnel, options: m({ remote_ip: 'flow', key: 'flow' }) });
  const bridge = { _uuid: 'b', name: 'br-int', datapath_id: hv.dpid, ports: [...ports.keys()] } as BridgeRow;
  return {
    schema: {} as VswitchState['schema'],
    ovs: undefined,
    bridges: new Map([['b', bridge]]),
    ports,
    interfaces,
    controllers: new Map(),
  };
}

/** The ChassisManager as OvsdbFacts hears it: the connected chassis and their events. */
export class FakeChassisManager extends EventEmitter {
  readonly listed = new Set<string>();
  chassis() {
    return [...this.listed].map((systemId) => ({ systemId }));
  }
  agentOf() {
    return undefined;
  }
}
