/**
 * Typed rows of the Open_vSwitch database (vswitch.ovsschema 8.x), as the replica holds them:
 * maps are Map, sets are arrays, optional (0..1) columns are value-or-null, uuids are strings.
 * Only the tables weft replicates are typed; columns weft does not read are still present at
 * runtime under their schema names.
 */
export type StrMap = ReadonlyMap<string, string>;

export interface RowBase {
  _uuid: string;
}

export interface OpenVSwitchRow extends RowBase {
  bridges: string[];
  manager_options: string[];
  other_config: StrMap;
  external_ids: StrMap;
  next_cfg: number;
  cur_cfg: number;
  ovs_version: string | null;
  db_version: string | null;
  system_type: string | null;
  system_version: string | null;
  datapath_types: string[];
  iface_types: string[];
  dpdk_initialized: boolean;
}

export interface BridgeRow extends RowBase {
  name: string;
  datapath_type: string;
  datapath_id: string | null;
  ports: string[];
  controller: string[];
  protocols: string[];
  fail_mode: string | null;
  status: StrMap;
  other_config: StrMap;
  external_ids: StrMap;
}

export interface PortRow extends RowBase {
  name: string;
  interfaces: string[];
  tag: number | null;
  trunks: number[];
  other_config: StrMap;
  external_ids: StrMap;
}

export interface InterfaceRow extends RowBase {
  name: string;
  type: string;
  options: StrMap;
  mac_in_use: string | null;
  mac: string | null;
  ifindex: number | null;
  external_ids: StrMap;
  ofport: number | null;
  ofport_request: number | null;
  other_config: StrMap;
  status: StrMap;
  admin_state: string | null;
  link_state: string | null;
  mtu: number | null;
  mtu_request: number | null;
  error: string | null;
}

export interface ControllerRow extends RowBase {
  target: string;
  max_backoff: number | null;
  inactivity_probe: number | null;
  controller_rate_limit: number | null;
  controller_burst_limit: number | null;
  connection_mode: string | null;
  other_config: StrMap;
  external_ids: StrMap;
  is_connected: boolean;
  role: string | null;
  status: StrMap;
}

export interface ManagerRow extends RowBase {
  target: string;
  max_backoff: number | null;
  inactivity_probe: number | null;
  connection_mode: string | null;
  other_config: StrMap;
  external_ids: StrMap;
  is_connected: boolean;
  status: StrMap;
}

/** Table name -> row type, for the typed replica and the typed transaction builder. */
export interface VswitchTables {
  Open_vSwitch: OpenVSwitchRow;
  Bridge: BridgeRow;
  Port: PortRow;
  Interface: InterfaceRow;
  Controller: ControllerRow;
  Manager: ManagerRow;
}

export type VswitchTable = keyof VswitchTables;
export const VSWITCH_TABLES: VswitchTable[] = [
  'Open_vSwitch',
  'Bridge',
  'Port',
  'Interface',
  'Controller',
  'Manager',
];
export const VSWITCH_DB = 'Open_vSwitch';

/**
 * The columns the typed rows above declare: what weft replicates by default. Volatile columns
 * weft does not read (statistics, CFM/BFD/LACP status...) stay on the server, which keeps a
 * 10k-interface initial sync small.
 */
export const VSWITCH_COLUMNS: Record<VswitchTable, string[]> = {
  Open_vSwitch: [
    'bridges',
    'manager_options',
    'other_config',
    'external_ids',
    'next_cfg',
    'cur_cfg',
    'ovs_version',
    'db_version',
    'system_type',
    'system_version',
    'datapath_types',
    'iface_types',
    'dpdk_initialized',
  ],
  Bridge: [
    'name',
    'datapath_type',
    'datapath_id',
    'ports',
    'controller',
    'protocols',
    'fail_mode',
    'status',
    'other_config',
    'external_ids',
  ],
  Port: ['name', 'interfaces', 'tag', 'trunks', 'other_config', 'external_ids'],
  Interface: [
    'name',
    'type',
    'options',
    'mac_in_use',
    'mac',
    'ifindex',
    'external_ids',
    'ofport',
    'ofport_request',
    'other_config',
    'status',
    'admin_state',
    'link_state',
    'mtu',
    'mtu_request',
    'error',
  ],
  Controller: [
    'target',
    'max_backoff',
    'inactivity_probe',
    'controller_rate_limit',
    'controller_burst_limit',
    'connection_mode',
    'other_config',
    'external_ids',
    'is_connected',
    'role',
    'status',
  ],
  Manager: [
    'target',
    'max_backoff',
    'inactivity_probe',
    'connection_mode',
    'other_config',
    'external_ids',
    'is_connected',
    'status',
  ],
};
