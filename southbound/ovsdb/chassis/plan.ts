import { Transaction } from '../transaction.js';
import type { BridgeRow, InterfaceRow, PortRow, VswitchTables } from '../vswitch.js';
import { type ChassisDesired, EXT_OWNED, EXT_ROLE, VXLAN_OVERHEAD, vniPortName } from './desired.js';
import { controllerSettings, planControllers, planManagers } from './plan-targets.js';
import { chassisFacts, findByName, isOwned, type VswitchState } from './state.js';

export interface ChassisPlan {
  /** The transaction to run; empty (length 0) when the chassis already is as desired. */
  txn: Transaction<VswitchTables>;
  /** Human-readable reasons, one per change, for logs. */
  changes: string[];
  /** Things weft will not touch (e.g. a port of that name that weft did not create). */
  conflicts: string[];
}

interface TunnelSpec {
  name: string;
  options: Map<string, string>;
  ofportRequest: number | undefined;
}

const OWNED = (role: string) =>
  new Map([
    [EXT_OWNED, 'true'],
    [EXT_ROLE, role],
  ]);
const byUuid = (uuid: string): [['_uuid', '==', string]] => [['_uuid', '==', uuid]];

function tunnelSpecs(d: ChassisDesired): TunnelSpec[] {
  if (!d.encapIp) return [];
  // tos=inherit (opt-in, weft serve --tunnel-tos inherit): the VXLAN header carries the DSCP of
  // the packet inside, so the underlay's QoS sees an endpoint's marking (qos.dscp); non-IP inside
  // gets 0, as without it.
  const base = (key: string) =>
    new Map([
      ['remote_ip', 'flow'],
      ['key', key],
      ['local_ip', d.encapIp!],
      ['dst_port', String(d.vxlanPort)],
      ...(d.tunnelTos === 'inherit' ? [['tos', 'inherit'] as [string, string]] : []),
    ]);
  if (d.profile === 'asap2') {
    return [...new Set(d.vnis)].map((vni) => ({
      name: vniPortName(vni),
      options: base(String(vni)),
      ofportRequest: undefined,
    }));
  }
  return [{ name: d.tunnelPortName, options: base('flow'), ofportRequest: d.tunnelOfport }];
}

/** VXLAN's IANA port: what OVS uses when a tunnel's options name none. */
const DEFAULT_VXLAN_PORT = '4789';

/**
 * Whether a tunnel interface carries traffic as `t` wants: VXLAN, the same options (dst_port
 * absent = 4789). Its `tos` is the operator's: without inherit (when weft wants it), only the
 * underlay misses DSCP.
 */
function sameTunnel(iface: { type: string; options: ReadonlyMap<string, string> }, t: TunnelSpec): boolean {
  if (iface.type !== 'vxlan') return false;
  for (const [k, v] of t.options) {
    if (k === 'tos') continue;
    const have = iface.options.get(k) ?? (k === 'dst_port' ? DEFAULT_VXLAN_PORT : undefined);
    if (have !== v) return false;
  }
  return true;
}

const mapsEqual = (a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>) =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

/**
 * Compares what weft wants on a chassis with what its database holds and returns the one
 * transaction that closes the gap. Pure: same inputs, same plan; an empty plan means nothing to do.
 * Rows weft did not create are never removed; their settings are changed only where weft must
 * (the integration bridge's OpenFlow version, fail mode, in-band and datapath type).
 */
export function planChassis(d: ChassisDesired, state: VswitchState): ChassisPlan {
  const txn = new Transaction<VswitchTables>(state.schema, 'Open_vSwitch');
  const changes: string[] = [];
  const conflicts: string[] = [];
  const ovs = state.ovs;
  if (!ovs) return { txn, changes, conflicts: ['no Open_vSwitch row yet'] };

  planManagers(txn, d, ovs, state, changes);

  // Open_vSwitch other_config for hardware offload (asap2): set keys, never remove others.
  if (d.profile === 'asap2') {
    const want = new Map([
      ['hw-offload', 'true'],
      ['max-idle', String(d.maxIdleMs)],
    ]);
    setMapKeys(txn, 'Open_vSwitch', ovs._uuid, 'other_config', ovs.other_config, want, changes);
  }

  const facts = chassisFacts(state);
  const underlayMtu = d.underlayMtu ?? facts.underlayMtu;
  const overlayMtu = underlayMtu ? underlayMtu - VXLAN_OVERHEAD : undefined;
  const bridge = findByName(state.bridges, d.bridge);
  const tunnels = tunnelSpecs(d);

  if (!bridge) {
    // Everything new, in one transaction, tied together by named uuids.
    const ctlNames = d.controllers.map((c, i) => {
      txn.insert(
        'Controller',
        { target: c.target, ...controllerSettings(d), external_ids: new Map([[EXT_OWNED, 'true']]) },
        `ctl${i}`,
      );
      return `ctl${i}`;
    });
    txn.insert(
      'Interface',
      {
        name: d.bridge,
        type: 'internal',
        external_ids: OWNED('integration'),
        mtu_request: overlayMtu ?? null,
      },
      'brif',
    );
    txn.insert(
      'Port',
      { name: d.bridge, interfaces: ['brif'], external_ids: OWNED('integration') },
      'brport',
    );
    const portNames = ['brport', ...tunnels.map((t, i) => insertTunnel(txn, t, i))];
    txn.insert(
      'Bridge',
      {
        name: d.bridge,
        datapath_type: d.datapathType,
        protocols: ['OpenFlow13'],
        fail_mode: 'secure',
        other_config: new Map([['disable-in-band', 'true']]),
        external_ids: new Map([[EXT_OWNED, 'true']]),
        ports: portNames,
        controller: ctlNames,
      },
      'br',
    );
    txn.mutate('Open_vSwitch', byUuid(ovs._uuid), [['bridges', 'insert', ['br']]]);
    changes.push(
      `create bridge ${d.bridge} with ${ctlNames.length} controller(s) and ${tunnels.length} tunnel port(s)`,
    );
    return { txn, changes, conflicts };
  }

  planBridgeSettings(txn, d, bridge, changes);
  planControllers(txn, d, bridge, state, changes);
  // Without a tunnel IP (not published yet, or the API has not said), tunnels stay as they are
  // rather than being torn down.
  if (d.encapIp) planTunnels(txn, tunnels, bridge, state, changes, conflicts);
  else conflicts.push('no tunnel IP known for this chassis: tunnel ports left as they are');
  if (overlayMtu) planMtu(txn, bridge, state, overlayMtu, changes);
  return { txn, changes, conflicts };
}

function insertTunnel(txn: Transaction<VswitchTables>, t: TunnelSpec, i: number): string {
  txn.insert(
    'Interface',
    {
      name: t.name,
      type: 'vxlan',
      options: t.options,
      ofport_request: t.ofportRequest ?? null,
      external_ids: OWNED('tunnel'),
    },
    `tif${i}`,
  );
  txn.insert('Port', { name: t.name, interfaces: [`tif${i}`], external_ids: OWNED('tunnel') }, `tport${i}`);
  return `tport${i}`;
}

function planBridgeSettings(
  txn: Transaction<VswitchTables>,
  d: ChassisDesired,
  br: BridgeRow,
  changes: string[],
): void {
  if (br.datapath_type !== d.datapathType) {
    txn.update('Bridge', byUuid(br._uuid), { datapath_type: d.datapathType });
    changes.push(`bridge ${br.name} datapath_type ${br.datapath_type || '(default)'} -> ${d.datapathType}`);
  }
  if (br.fail_mode !== 'secure') {
    txn.update('Bridge', byUuid(br._uuid), { fail_mode: 'secure' });
    changes.push(`bridge ${br.name} fail_mode -> secure`);
  }
  if (!br.protocols.includes('OpenFlow13')) {
    // Add, not replace: other versions someone enabled keep working.
    txn.mutate('Bridge', byUuid(br._uuid), [['protocols', 'insert', ['OpenFlow13']]]);
    changes.push(`bridge ${br.name} protocols += OpenFlow13`);
  }
  setMapKeys(
    txn,
    'Bridge',
    br._uuid,
    'other_config',
    br.other_config,
    new Map([['disable-in-band', 'true']]),
    changes,
  );
}

function planTunnels(
  txn: Transaction<VswitchTables>,
  tunnels: TunnelSpec[],
  br: BridgeRow,
  state: VswitchState,
  changes: string[],
  conflicts: string[],
): void {
  const ports = br.ports.map((u) => state.ports.get(u)).filter((p): p is PortRow => p !== undefined);
  const wanted = new Set(tunnels.map((t) => t.name));
  tunnels.forEach((t, i) => {
    const port = ports.find((p) => p.name === t.name);
    if (!port) {
      const name = insertTunnel(txn, t, i);
      txn.mutate('Bridge', byUuid(br._uuid), [['ports', 'insert', [name]]]);
      changes.push(`tunnel port ${t.name} added (${optionsText(t.options)})`);
      return;
    }
    const iface = state.interfaces.get(port.interfaces[0] ?? '');
    if (!iface) return; // the replica is mid-update; the next run sees it
    if (!isOwned(port)) {
      // An operator's own tunnel port that already does the job (the OVS recipe's `remote_ip=flow
      // key=flow` port) is used as it is; one that does not is left alone and reported.
      if (!sameTunnel(iface, t))
        conflicts.push(`port ${t.name} exists but weft did not create it; left as it is`);
      else if (t.options.get('tos') === 'inherit' && iface.options.get('tos') !== 'inherit')
        conflicts.push(
          `port ${t.name} (not weft's) has no options:tos=inherit: an endpoint's DSCP (qos.dscp) does not reach the VXLAN header; left as it is`,
        );
      return;
    }
    if (
      iface.type !== 'vxlan' ||
      !mapsEqual(iface.options, t.options) ||
      (t.ofportRequest ?? null) !== iface.ofport_request
    ) {
      txn.update('Interface', byUuid(iface._uuid), {
        type: 'vxlan',
        options: t.options,
        ofport_request: t.ofportRequest ?? null,
      });
      changes.push(`tunnel port ${t.name} reconfigured (${optionsText(t.options)})`);
    }
  });
  const stale = ports.filter(
    (p) => isOwned(p) && p.external_ids.get(EXT_ROLE) === 'tunnel' && !wanted.has(p.name),
  );
  if (stale.length > 0) {
    txn.mutate('Bridge', byUuid(br._uuid), [['ports', 'delete', stale.map((p) => p._uuid)]]);
    changes.push(`tunnel port(s) ${stale.map((p) => p.name).join(', ')} removed`);
  }
}

/** mtu_request on the interfaces weft owns that carry overlay traffic (the bridge's own port). */
function planMtu(
  txn: Transaction<VswitchTables>,
  br: BridgeRow,
  state: VswitchState,
  mtu: number,
  changes: string[],
): void {
  for (const pu of br.ports) {
    const port = state.ports.get(pu);
    if (!port || !isOwned(port) || port.external_ids.get(EXT_ROLE) !== 'integration') continue;
    for (const iu of port.interfaces) {
      const iface: InterfaceRow | undefined = state.interfaces.get(iu);
      if (iface && isOwned(iface) && iface.mtu_request !== mtu) {
        txn.update('Interface', byUuid(iface._uuid), { mtu_request: mtu });
        changes.push(`interface ${iface.name} mtu_request -> ${mtu}`);
      }
    }
  }
}

function setMapKeys(
  txn: Transaction<VswitchTables>,
  table: 'Open_vSwitch' | 'Bridge',
  uuid: string,
  column: 'other_config',
  have: ReadonlyMap<string, string>,
  want: Map<string, string>,
  changes: string[],
): void {
  const diff = [...want].filter(([k, v]) => have.get(k) !== v);
  if (diff.length === 0) return;
  // Delete the keys first: a map "insert" never overwrites an existing key.
  txn.mutate(table as 'Bridge', byUuid(uuid), [
    [column, 'delete', diff.map(([k]) => k)],
    [column, 'insert', new Map(diff)],
  ]);
  changes.push(`${table} ${column} ${diff.map(([k, v]) => `${k}=${v}`).join(' ')}`);
}

const optionsText = (m: Map<string, string>) => [...m].map(([k, v]) => `${k}=${v}`).join(' ');
