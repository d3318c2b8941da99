import type { Replica } from '../replica.js';
import type { DatabaseSchema } from '../schema.js';
import type {
  BridgeRow,
  ControllerRow,
  InterfaceRow,
  ManagerRow,
  OpenVSwitchRow,
  PortRow,
  VswitchTables,
} from '../vswitch.js';
import {
  DEFAULT_UNDERLAY_IFACE,
  EXT_ENCAP_IP,
  EXT_HOSTNAME,
  EXT_OWNED,
  EXT_SYSTEM_ID,
  EXT_UNDERLAY_IFACE,
} from './desired.js';

/** A read-only view of one chassis's Open_vSwitch database, as pure functions take it. */
export interface VswitchState {
  schema: DatabaseSchema;
  ovs: OpenVSwitchRow | undefined;
  bridges: ReadonlyMap<string, BridgeRow>;
  ports: ReadonlyMap<string, PortRow>;
  interfaces: ReadonlyMap<string, InterfaceRow>;
  controllers: ReadonlyMap<string, ControllerRow>;
  /** Manager rows (absent: none known). */
  managers?: ReadonlyMap<string, ManagerRow>;
}

export function stateOf(replica: Replica<VswitchTables>, schema: DatabaseSchema): VswitchState {
  return {
    schema,
    ovs: replica.table('Open_vSwitch').values().next().value,
    bridges: replica.table('Bridge'),
    ports: replica.table('Port'),
    interfaces: replica.table('Interface'),
    controllers: replica.table('Controller'),
    managers: replica.table('Manager'),
  };
}

export const isOwned = (row: { external_ids: ReadonlyMap<string, string> }): boolean =>
  row.external_ids.get(EXT_OWNED) === 'true';

export function findByName<R extends { name: string }>(
  rows: ReadonlyMap<string, R>,
  name: string,
): R | undefined {
  for (const r of rows.values()) if (r.name === name) return r;
  return undefined;
}

/** Facts a chassis announces about itself. */
export interface ChassisFacts {
  systemId: string | undefined;
  hostname: string | undefined;
  encapIp: string | undefined;
  datapathTypes: string[];
  ifaceTypes: string[];
  ovsVersion: string | undefined;
  /** MTU of the underlay interface, when the chassis shows it. */
  underlayMtu: number | undefined;
}

export function chassisFacts(state: VswitchState): ChassisFacts {
  const ext = state.ovs?.external_ids ?? new Map<string, string>();
  const underlayName = ext.get(EXT_UNDERLAY_IFACE) ?? DEFAULT_UNDERLAY_IFACE;
  const underlay = findByName(state.interfaces, underlayName);
  return {
    systemId: ext.get(EXT_SYSTEM_ID) || undefined,
    hostname: ext.get(EXT_HOSTNAME) || undefined,
    encapIp: ext.get(EXT_ENCAP_IP) || undefined,
    datapathTypes: [...(state.ovs?.datapath_types ?? [])].sort(),
    ifaceTypes: [...(state.ovs?.iface_types ?? [])].sort(),
    ovsVersion: state.ovs?.ovs_version ?? undefined,
    underlayMtu: underlay?.mtu ?? undefined,
  };
}
