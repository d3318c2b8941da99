import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import {
  type MonitorCondRequest,
  type OvsdbClient,
  type TableUpdates,
  type TableUpdates2,
  ZERO_UUID,
} from './client.js';
import { OvsdbError } from './errors.js';
import { type RowChange, RowStore } from './row-store.js';
import type { DatabaseSchema } from './schema.js';
import type { Row } from './values.js';

export type SyncMode = 'monitor_cond_since' | 'monitor_cond' | 'monitor';

export interface SyncResult {
  mode: SyncMode;
  /** The server could send only what changed since our last transaction id. */
  incremental: boolean;
  changes: number;
}

export interface ReplicaOptions {
  db: string;
  tables: string[];
  /** Columns to replicate per table; a table not listed gets all but `excludeColumns`. */
  columns?: Partial<Record<string, string[]>>;
  /** Columns never replicated (high-churn counters); default statistics-like columns. */
  excludeColumns?: string[];
  logger?: Logger;
}

type ReplicaEvents = {
  added: [table: string, row: Row];
  changed: [table: string, row: Row, old: Row];
  removed: [table: string, row: Row];
  /** After each applied batch (a reply or one update notification), with its changes. */
  batch: [changes: RowChange[]];
  synced: [result: SyncResult];
};

const DEFAULT_EXCLUDED = ['statistics', 'rstp_statistics'];
/** Monitor ids must be unique per session, and several replicas may share one session. */
let monitorSeq = 0;

/**
 * An in-memory copy of some tables of one database, kept current by a monitor. Attach it to each
 * new session (e.g. after a reconnect): it resumes with monitor_cond_since from the last
 * transaction id it saw, falling back to a full snapshot diffed against what it holds, so that
 * listeners see every real change exactly once and nothing twice.
 */
export class Replica<Tables extends object = Record<string, Row>> extends EventEmitter<ReplicaEvents> {
  private store: RowStore | undefined;
  private schema: DatabaseSchema | undefined;
  private lastTxnId = ZERO_UUID;
  private detachCurrent: (() => void) | undefined;
  private readonly log: Logger | undefined;

  constructor(readonly opts: ReplicaOptions) {
    super();
    this.log = opts.logger;
  }

  get txnId(): string {
    return this.lastTxnId;
  }

  get isReady(): boolean {
    return this.store !== undefined;
  }

  /** Rows of a table, keyed by uuid (empty before the first sync). */
  table<T extends keyof Tables & string>(name: T): ReadonlyMap<string, Tables[T]> {
    return (this.store?.rows(name) ?? new Map()) as unknown as ReadonlyMap<string, Tables[T]>;
  }

  /** Starts replicating over `client`; resolves when the replica reflects the server. */
  async attach(client: OvsdbClient): Promise<SyncResult> {
    this.detachCurrent?.();
    const schema = await client.getSchema(this.opts.db);
    const columns = this.monitoredColumns(schema);
    if (!this.store || this.schema?.version !== schema.version) {
      // First sync, or the schema changed under us: start from our rows but the new schema.
      const fresh = new RowStore(schema, columns);
      if (this.store)
        for (const [t, rows] of this.store.tables) for (const [u, r] of rows) fresh.rows(t).set(u, r);
      this.store = fresh;
      this.schema = schema;
    }
    const store = this.store;
    const monitorId = `weft-replica-${++monitorSeq}`;

    // Notifications may arrive before our continuation runs after the reply: queue them.
    let queue: (() => RowChange[])[] | null = [];
    const onUpdates = (apply: () => RowChange[]) => {
      if (queue) queue.push(apply);
      else this.publish(apply());
    };
    const on1 = (id: unknown, u: TableUpdates) => id === monitorId && onUpdates(() => store.applyUpdates(u));
    const on2 = (id: unknown, u: TableUpdates2) =>
      id === monitorId && onUpdates(() => store.applyUpdates2(u));
    const on3 = (id: unknown, txn: string, u: TableUpdates2) =>
      id === monitorId &&
      onUpdates(() => {
        this.lastTxnId = txn;
        return store.applyUpdates2(u);
      });
    client.on('update', on1);
    client.on('update2', on2);
    client.on('update3', on3);
    this.detachCurrent = () => {
      client.off('update', on1);
      client.off('update2', on2);
      client.off('update3', on3);
      if (!client.isClosed) client.monitorCancel(monitorId).catch(() => undefined);
    };

    const requests: Record<string, MonitorCondRequest> = {};
    for (const [t, cols] of columns) requests[t] = { columns: cols };
    let result: SyncResult;
    try {
      result = await this.initial(client, monitorId, requests, store, schema, columns);
    } catch (err) {
      this.detachCurrent();
      throw err;
    }
    const pending = queue;
    queue = null;
    for (const apply of pending) this.publish(apply());
    this.log?.info({ peer: client.peer, ...result }, 'OVSDB replica synced');
    this.emit('synced', result);
    return result;
  }

  /** Stops following the current session (rows stay as they are until the next attach). */
  detach(): void {
    this.detachCurrent?.();
    this.detachCurrent = undefined;
  }

  private async initial(
    client: OvsdbClient,
    monitorId: string,
    requests: Record<string, MonitorCondRequest>,
    store: RowStore,
    schema: DatabaseSchema,
    columns: Map<string, string[]>,
  ): Promise<SyncResult> {
    const db = this.opts.db;
    const full = (apply: (s: RowStore) => void): RowChange[] => {
      const snapshot = new RowStore(schema, columns);
      apply(snapshot);
      return store.replaceAll(snapshot);
    };
    try {
      const r = await client.monitorCondSince(db, monitorId, requests, this.lastTxnId);
      const changes = r.found ? store.applyUpdates2(r.updates) : full((s) => s.applyUpdates2(r.updates));
      this.lastTxnId = r.lastTxnId;
      this.publish(changes);
      return { mode: 'monitor_cond_since', incremental: r.found, changes: changes.length };
    } catch (err) {
      if (!isUnknownMethod(err)) throw err;
    }
    try {
      const u = await client.monitorCond(db, monitorId, requests);
      const changes = full((s) => s.applyUpdates2(u));
      this.publish(changes);
      return { mode: 'monitor_cond', incremental: false, changes: changes.length };
    } catch (err) {
      if (!isUnknownMethod(err)) throw err;
    }
    const u = await client.monitor(db, monitorId, requests);
    const changes = full((s) => s.applyUpdates(u));
    this.publish(changes);
    return { mode: 'monitor', incremental: false, changes: changes.length };
  }

  private monitoredColumns(schema: DatabaseSchema): Map<string, string[]> {
    const excluded = new Set(this.opts.excludeColumns ?? DEFAULT_EXCLUDED);
    const out = new Map<string, string[]>();
    for (const t of this.opts.tables) {
      const ts = schema.tables.get(t);
      if (!ts) throw new OvsdbError('monitor', 'unknown table', `${this.opts.db} has no table ${t}`);
      const listed = this.opts.columns?.[t];
      if (listed) {
        // Only what this server's schema has (an older OVS may lack a newer column).
        out.set(
          t,
          listed.filter((c) => ts.columns.has(c)),
        );
        continue;
      }
      out.set(
        t,
        [...ts.columns.keys()].filter((c) => c !== '_uuid' && c !== '_version' && !excluded.has(c)),
      );
    }
    return out;
  }

  private publish(changes: RowChange[]): void {
    if (changes.length === 0) return;
    for (const c of changes) {
      if (c.kind === 'added') this.emit('added', c.table, c.row);
      else if (c.kind === 'changed') this.emit('changed', c.table, c.row, c.old);
      else this.emit('removed', c.table, c.row);
    }
    this.emit('batch', changes);
  }
}

function isUnknownMethod(err: unknown): boolean {
  return err instanceof OvsdbError && /unknown method/i.test(`${err.error} ${err.details ?? ''}`);
}
