import { SG_DENIED_PRIORITY } from '../../apps/acl/sg-log.js';
import type {
  DropsAnswer,
  FlowCounter,
  ObjectCounters,
  PortCounters,
  QosCounters,
} from '../../northbound/counters-schema.js';
import type { FlowStats, PortStats } from '../../southbound/openflow/codec/index.js';
import { APP, appOf, fnv1a32, OWNER_MASK, OWNER_VALUE } from '../pipeline/cookies.js';
import { PIPELINE, TABLE, tableDecl, tableName } from '../pipeline/tables.js';

/**
 * Counters of what really crossed the switches, read back from OVS by cookie: the flows an
 * intent object owns (controller/pipeline/cookies.ts: the low 32 bits hash the object), and the
 * table-miss flows that drop. Pure: these functions only sum and name what the switches said.
 */

/** Cookie and mask selecting every flow of one object, whatever the app (FLOW stats request). */
export function objectSelector(objectKey: string): { cookie: bigint; cookieMask: bigint } {
  return { cookie: OWNER_VALUE | BigInt(fnv1a32(objectKey)), cookieMask: OWNER_MASK | 0xffffffffn };
}

/** Cookie and mask selecting every flow of one app (the owner tag and the app byte). */
const appSelector = (app: keyof typeof APP) => ({
  cookie: OWNER_VALUE | (BigInt(APP[app]) << 48n),
  cookieMask: 0xffff000000000000n,
});

/** Every flow of the pipeline app: the table misses. */
export const TABLE_MISS_SELECTOR = appSelector('pipeline');

/**
 * The security-group tables' flows of the acl app, where the denials a security group logs are
 * (apps/acl/sg-log.ts): those flows drop what the table's miss would have, with a copy to the
 * controller, so they count as that table's drops.
 */
export const SG_DENIED_SELECTORS = [TABLE.EGRESS_SG_CT, TABLE.INGRESS_SG_CT].map((tableId) => ({
  ...appSelector('acl'),
  tableId,
}));

const isDrop = (f: FlowStats): boolean =>
  (DROPPING.has(f.tableId) && f.priority === 0 && appOf(f.cookie) === 'pipeline') ||
  ((f.tableId === TABLE.EGRESS_SG_CT || f.tableId === TABLE.INGRESS_SG_CT) &&
    f.priority === SG_DENIED_PRIORITY &&
    appOf(f.cookie) === 'acl');

/** Why a table drops what nothing matched (the pipeline declaration says), by table id. */
const dropReason = (id: number): string => {
  const miss = tableDecl(id)?.miss;
  return miss && miss.kind !== 'goto' ? miss.why : 'no flow matches';
};

/**
 * Tables whose miss forwards nothing (the rest go on to another table): it drops, or sends the
 * packet up for the controller to answer its sender (which does not deliver it either).
 */
const DROPPING = new Set<number>(PIPELINE.filter((t) => t.miss.kind !== 'goto').map((t) => t.id));

export interface SwitchFlows {
  datapathId: string;
  chassis?: string;
  flows: readonly FlowStats[];
}

export interface Unreachable {
  datapathId: string;
  chassis?: string;
  error: string;
}

const n = (x: bigint) => Number(x);

/**
 * One object's flows on every switch that answered, busiest first, with their sum; for an
 * endpoint also its port's and its meters' counters.
 */
export function objectCounters(
  kind: ObjectCounters['kind'],
  id: string,
  answered: readonly SwitchFlows[],
  unreachable: readonly Unreachable[],
  port?: PortCounters,
  qos?: QosCounters,
): ObjectCounters {
  const flows: FlowCounter[] = [];
  for (const sw of answered) {
    for (const f of sw.flows) {
      flows.push({
        datapathId: sw.datapathId,
        ...(sw.chassis ? { chassis: sw.chassis } : {}),
        table: f.tableId,
        tableName: tableName(f.tableId),
        app: appOf(f.cookie) ?? 'unknown',
        priority: f.priority,
        packets: n(f.packetCount),
        bytes: n(f.byteCount),
      });
    }
  }
  flows.sort(
    (a, b) => b.packets - a.packets || a.datapathId.localeCompare(b.datapathId) || a.table - b.table,
  );
  const sum = (k: 'packets' | 'bytes') => flows.reduce((s, f) => s + f[k], 0);
  return {
    kind,
    id,
    packets: sum('packets'),
    bytes: sum('bytes'),
    flows,
    ...(port ? { port } : {}),
    ...(qos ? { qos } : {}),
    unreachable: [...unreachable],
  };
}

/** The packets each switch dropped for lack of a flow (its table-miss drops), by table and in all. */
export function dropCounters(
  answered: readonly SwitchFlows[],
  unreachable: readonly Unreachable[],
): DropsAnswer {
  const totals = new Map<number, { packets: number; bytes: number }>();
  const switches = answered.map((sw) => {
    const byTable = new Map<number, { packets: number; bytes: number }>();
    for (const f of sw.flows) {
      if (!isDrop(f)) continue;
      const t = byTable.get(f.tableId) ?? { packets: 0, bytes: 0 };
      t.packets += n(f.packetCount);
      t.bytes += n(f.byteCount);
      byTable.set(f.tableId, t);
    }
    const tables = [...byTable]
      .map(([table, c]) => ({ table, tableName: tableName(table), reason: dropReason(table), ...c }))
      .sort((a, b) => b.packets - a.packets || a.table - b.table);
    for (const t of tables) {
      const tot = totals.get(t.table) ?? { packets: 0, bytes: 0 };
      tot.packets += t.packets;
      tot.bytes += t.bytes;
      totals.set(t.table, tot);
    }
    return {
      datapathId: sw.datapathId,
      ...(sw.chassis ? { chassis: sw.chassis } : {}),
      packets: tables.reduce((s, t) => s + t.packets, 0),
      bytes: tables.reduce((s, t) => s + t.bytes, 0),
      tables,
    };
  });
  const tables = [...totals]
    .map(([table, c]) => ({
      table,
      tableName: tableName(table),
      reason: dropReason(table),
      ...c,
    }))
    .sort((a, b) => b.packets - a.packets || a.table - b.table);
  return {
    packets: tables.reduce((s, t) => s + t.packets, 0),
    bytes: tables.reduce((s, t) => s + t.bytes, 0),
    tables,
    switches: switches.sort((a, b) => b.packets - a.packets || a.datapathId.localeCompare(b.datapathId)),
    unreachable: [...unreachable],
  };
}

/** A VM port's OVS counters from the VM's side: what OVS received on it is what the VM sent. */
export function portCounters(datapathId: string, chassis: string, s: PortStats): PortCounters {
  return {
    datapathId,
    chassis,
    ofport: s.portNo,
    fromVm: { packets: n(s.rxPackets), bytes: n(s.rxBytes), dropped: n(s.rxDropped), errors: n(s.rxErrors) },
    toVm: { packets: n(s.txPackets), bytes: n(s.txBytes), dropped: n(s.txDropped), errors: n(s.txErrors) },
  };
}
