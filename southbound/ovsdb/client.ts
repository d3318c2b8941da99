import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { OvsdbError } from './errors.js';
import { JsonRpcConnection, type RpcOptions } from './rpc.js';
import { type DatabaseSchema, parseSchema } from './schema.js';
import {
  decodeTransactResults,
  type OperationResult,
  Transaction,
  type WireOperation,
} from './transaction.js';
import { type ActiveTarget, dial, type TlsFiles, targetToString } from './transport.js';

/** RFC 7047 <table-updates> (monitor/update) and ovsdb-server(7) <table-updates2>. */
export type TableUpdates = Record<
  string,
  Record<string, { old?: Record<string, unknown>; new?: Record<string, unknown> }>
>;
export type RowUpdate2 = {
  initial?: Record<string, unknown>;
  insert?: Record<string, unknown>;
  modify?: Record<string, unknown>;
  delete?: null;
};
export type TableUpdates2 = Record<string, Record<string, RowUpdate2>>;

export interface MonitorSelect {
  initial?: boolean;
  insert?: boolean;
  delete?: boolean;
  modify?: boolean;
}
export interface MonitorRequest {
  columns?: string[];
  select?: MonitorSelect;
}
export interface MonitorCondRequest extends MonitorRequest {
  /** Wire conditions ([column, fn, wire value]) or booleans; empty or absent = all rows. */
  where?: unknown[];
}

/** ovsdb-server wants an array of requests per table for conditional monitors. */
const asArrays = <T>(requests: Record<string, T>): Record<string, T[]> =>
  Object.fromEntries(Object.entries(requests).map(([t, r]) => [t, [r]]));

export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

export interface MonitorCondSinceResult {
  found: boolean;
  lastTxnId: string;
  updates: TableUpdates2;
}

type ClientEvents = {
  update: [monitorId: unknown, updates: TableUpdates];
  update2: [monitorId: unknown, updates: TableUpdates2];
  update3: [monitorId: unknown, lastTxnId: string, updates: TableUpdates2];
  locked: [lockId: string];
  stolen: [lockId: string];
  monitorCanceled: [monitorId: unknown];
  close: [error: Error | undefined];
};

export interface ClientOptions extends Omit<RpcOptions, 'peer'> {
  peer?: string;
  tls?: TlsFiles;
}

/**
 * An OVSDB client session (RFC 7047 + ovsdb-server(7) extensions) over one connection, in either
 * direction: dialed by us, or accepted from an ovsdb-server that treats us as its manager.
 */
export class OvsdbClient extends EventEmitter<ClientEvents> {
  readonly rpc: JsonRpcConnection;
  private readonly schemas = new Map<string, DatabaseSchema>();

  constructor(stream: Duplex, opts: ClientOptions & { peer: string }) {
    super();
    this.rpc = new JsonRpcConnection(stream, opts);
    this.rpc.on('notification', (method, params) => this.onNotification(method, params));
    this.rpc.on('close', (err) => this.emit('close', err));
  }

  static async connect(target: string | ActiveTarget, opts: ClientOptions = {}): Promise<OvsdbClient> {
    const name = typeof target === 'string' ? target : targetToString(target);
    const stream = await dial(target, { tls: opts.tls, timeoutMs: opts.requestTimeoutMs });
    return new OvsdbClient(stream, { ...opts, peer: opts.peer ?? name });
  }

  get peer(): string {
    return this.rpc.peer;
  }

  get isClosed(): boolean {
    return this.rpc.isClosed;
  }

  close(): void {
    this.rpc.close();
  }

  async listDbs(): Promise<string[]> {
    return (await this.rpc.request('list_dbs', [])) as string[];
  }

  /** The database's schema, fetched once per session and cached. */
  async getSchema(db: string): Promise<DatabaseSchema> {
    const cached = this.schemas.get(db);
    if (cached) return cached;
    const schema = parseSchema(await this.rpc.request('get_schema', [db]));
    this.schemas.set(db, schema);
    return schema;
  }

  /** A typed, schema-checked transaction builder for `db`. */
  async transaction<Tables extends object = Record<string, Record<string, unknown>>>(db: string) {
    return new Transaction<Tables>(await this.getSchema(db), db);
  }

  /** Sends a built transaction; resolves to per-operation results or throws OvsdbError. */
  async run(txn: Transaction<object>, opts: { timeoutMs?: number } = {}): Promise<OperationResult[]> {
    return txn.decodeResults(await this.rpc.request('transact', [txn.db, ...txn.ops], opts));
  }

  /**
   * Starts a transaction and tells its request id, so it can be `cancel`led (useful for `wait`
   * operations that block on the server).
   */
  start(
    txn: Transaction<object>,
    opts: { timeoutMs?: number } = {},
  ): { id: number; result: Promise<OperationResult[]> } {
    const id = this.rpc.peekNextId();
    const result = this.run(txn, opts);
    return { id, result };
  }

  /** Sends wire operations as they are, with no schema check (raw access, errors come from OVSDB). */
  async transactRaw(db: string, ops: WireOperation[]): Promise<OperationResult[]> {
    const raw = await this.rpc.request('transact', [db, ...ops]);
    return decodeTransactResults(raw, ops.length, (_t, _u, w) => w as never);
  }

  /**
   * Asks the server to abandon an outstanding request (RFC 7047 4.1.4) and fails it here with
   * "canceled": ovsdb-server 3.1 drops a cancelled transaction without replying at all.
   */
  cancel(requestId: number): void {
    this.rpc.notify('cancel', [requestId]);
    this.rpc.abandon(
      requestId,
      new OvsdbError('transact', 'canceled', `request ${requestId} cancelled by the client`),
    );
  }

  async monitor(
    db: string,
    monitorId: unknown,
    requests: Record<string, MonitorRequest>,
  ): Promise<TableUpdates> {
    return (await this.rpc.request('monitor', [db, monitorId, requests])) as TableUpdates;
  }

  async monitorCond(
    db: string,
    monitorId: unknown,
    requests: Record<string, MonitorCondRequest>,
  ): Promise<TableUpdates2> {
    return (await this.rpc.request('monitor_cond', [db, monitorId, asArrays(requests)])) as TableUpdates2;
  }

  /** Replaces the conditions of a monitor_cond(_since) monitor; later updates carry `newId`. */
  async monitorCondChange(
    oldId: unknown,
    newId: unknown,
    requests: Record<string, { where?: unknown[] }>,
  ): Promise<void> {
    await this.rpc.request('monitor_cond_change', [oldId, newId, asArrays(requests)]);
  }

  async monitorCondSince(
    db: string,
    monitorId: unknown,
    requests: Record<string, MonitorCondRequest>,
    lastTxnId: string = ZERO_UUID,
  ): Promise<MonitorCondSinceResult> {
    const r = await this.rpc.request('monitor_cond_since', [db, monitorId, asArrays(requests), lastTxnId]);
    if (!Array.isArray(r) || r.length !== 3) {
      throw new OvsdbError('monitor_cond_since', 'bad reply', JSON.stringify(r).slice(0, 200));
    }
    return { found: r[0] === true, lastTxnId: String(r[1]), updates: (r[2] ?? {}) as TableUpdates2 };
  }

  async monitorCancel(monitorId: unknown): Promise<void> {
    await this.rpc.request('monitor_cancel', [monitorId]);
  }

  /** Resolves true if the lock is ours now; otherwise a `locked` event follows when it is. */
  async lock(lockId: string): Promise<boolean> {
    return ((await this.rpc.request('lock', [lockId])) as { locked?: boolean }).locked === true;
  }

  async steal(lockId: string): Promise<boolean> {
    return ((await this.rpc.request('steal', [lockId])) as { locked?: boolean }).locked === true;
  }

  async unlock(lockId: string): Promise<void> {
    await this.rpc.request('unlock', [lockId]);
  }

  async echo(payload: unknown[] = []): Promise<unknown> {
    return this.rpc.request('echo', payload);
  }

  private onNotification(method: string, params: unknown): void {
    const p = Array.isArray(params) ? params : [];
    switch (method) {
      case 'update':
        this.emit('update', p[0], (p[1] ?? {}) as TableUpdates);
        break;
      case 'update2':
        this.emit('update2', p[0], (p[1] ?? {}) as TableUpdates2);
        break;
      case 'update3':
        this.emit('update3', p[0], String(p[1]), (p[2] ?? {}) as TableUpdates2);
        break;
      case 'locked':
        this.emit('locked', String(p[0]));
        break;
      case 'stolen':
        this.emit('stolen', String(p[0]));
        break;
      case 'monitor_canceled':
        this.emit('monitorCanceled', p[0]);
        break;
    }
  }
}
