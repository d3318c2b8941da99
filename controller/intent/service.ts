import { randomUUID } from 'node:crypto';
import { type Logger, pino } from 'pino';
import { type Store, StoreError } from '../store/store.js';
import { checkIfMatch, randomMac, stamp, visible, writable } from './access.js';
import { endpointsAllowedExactly, endpointsAllowing } from './allowed-addresses.js';
import { type ApplyTracker, type PendingSwitch, pendingOf } from './apply-tracker.js';
import { type BatchContext, type BatchOp, type BatchResult, planBatch } from './batch.js';
import { planDelete } from './deletion.js';
import { conflict, invalid, notFound, toIntentError } from './errors.js';
import { type ExportScope, exportOps } from './export.js';
import { type ChangeAuthor, type HistoryAnswer, type HistoryQuery, readHistory } from './history.js';
import { expiredIdempotency, idempotencyKeyOf, sha256, stableStringify } from './idempotency.js';
import { type ListQuery, type ListResult, listPage } from './list.js';
import type { AnyObject, ApiToken, CreateInputOf, Kind, ObjectOf, PatchOf, QuotaKind } from './model.js';
import { DEFAULT_VNI_RANGE, VNI_MAX, VNI_MIN } from './model.js';
import type { Plan } from './pipeline.js';
import { usageOf } from './quotas.js';
import { IntentReplica } from './replica.js';
import { routerOn } from './router-rules.js';
import { buildObject, type RuleEnv } from './rules.js';
import { type IdempotencyRecord, type IntentState, keyOf, parseKey } from './state.js';
import { hashSecret, newSecret, sameHash } from './tokens.js';
import { checkKind, checkShape } from './validate.js';
import { checkCreate, deletable, type PlannedWrite, planCreate, planReplace, replaceWith } from './writes.js';

export type { ApplyTracker, PendingSwitch } from './apply-tracker.js';
export type { BatchContext, BatchOp, BatchOpResult, BatchResult } from './batch.js';
export type { IntentErrorCode } from './errors.js';
export { IntentError } from './errors.js';

/** Who is asking and under which conditions. */
export interface IntentContext {
  /** Set for tenant-scoped tokens: other tenants' objects (and infrastructure kinds) are not_found. */
  tenantScope?: string;
  /** If-Match: the object's current revision must equal this, else precondition_failed. */
  ifMatch?: number;
  /** Idempotency-Key of a create: a replay returns the first result instead of writing again. */
  idempotencyKey?: string;
  /** For logs, and the intent's history (GET /v1/changes). */
  requestId?: string;
  /** Who writes (a token id, `restore`): recorded in the intent's history. */
  actor?: string;
}
export interface DeleteContext extends IntentContext {
  /** Delete dependants (a network's endpoints/ACLs/VLAN bindings/router; a tenant's everything) too. */
  cascade?: boolean;
}

export interface WriteResult<K extends Kind = Kind> {
  object: ObjectOf[K];
  /** Store revision this write produced (or, for a no-op PUT / idempotent replay, the first one). */
  revision: number;
}
export interface DeleteResult<K extends Kind = Kind> extends WriteResult<K> {
  /** Everything removed by this delete, the object itself first (more than one with cascade). */
  deleted: Array<{ kind: Kind; id: string }>;
}

export type { ListQuery, ListResult } from './list.js';

/** One object changed by a committed revision (own writes and other controllers' alike). */
export interface ObjectChange {
  kind: Kind;
  id: string;
  /** Absent for a create. */
  before?: AnyObject;
  /** Absent for a delete. */
  after?: AnyObject;
}
export interface IntentChangeEvent {
  revision: number;
  changes: ObjectChange[];
}

/**
 * The engine plugs this in once it exists: resolves true when every switch affected by the
 * revision has confirmed it (barrier), false on timeout.
 */
export interface IntentServiceOptions {
  /** Inclusive range VNIs are allocated from when a network has none. Default [4096, 16777214]. */
  vniRange?: [number, number];
  /** Admin bearer secrets from config (never stored; compared in constant time). */
  adminTokens?: string[];
  logger?: Logger;
}

export interface CreatedToken {
  /** The bearer secret: shown once, never stored. */
  token: string;
  record: ApiToken;
}

/**
 * The intent service: the one place the model's rules are enforced, over a Store.
 * - Reads (`get`, `list`) are synchronous, from this controller's in-memory copy at `revision()`.
 * - Writes are validated against the in-memory copy, serialised in-process, batched and committed
 *   with an optimistic precondition (see ./pipeline.ts); each resolves once durable in the store.
 * - A write that changes nothing (a repeated PUT, a PATCH to the same values) commits nothing and
 *   returns the object with its current revision.
 * - References to missing objects (networkId, securityGroupIds, remoteGroupId, chassisId,
 *   tenantId, interfaces[i].networkId) are `invalid` naming the field; to another tenant's
 *   objects likewise.
 * - Tenant-scoped callers see only their tenant (get/list/update of their own tenant object, their
 *   tenant's networks, endpoints, security groups, ACLs and routers); chassis, VLAN bindings and
 *   tokens are admin-only and read as not_found.
 * - `waitApplied(rev, timeout)`: until the engine registers an ApplyTracker, "applied" means the
 *   revision is in this controller's intent (no switch is affected yet): it resolves
 *   `{applied: true}` at once for any revision this controller has, or after it arrives through
 *   the change feed, and `{applied: false}` when `timeoutMs` passes first.
 */
export class IntentService {
  private readonly adminHashes: string[];
  private tracker?: ApplyTracker;
  private readonly vniCursor = { last: 0 };

  private constructor(
    private readonly replica: IntentReplica,
    private readonly opts: IntentServiceOptions,
  ) {
    this.adminHashes = (opts.adminTokens ?? []).map(hashSecret);
  }

  static async open(store: Store, opts: IntentServiceOptions = {}): Promise<IntentService> {
    const range = opts.vniRange ?? DEFAULT_VNI_RANGE;
    const [lo, hi] = range;
    if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= VNI_MIN && hi <= VNI_MAX && lo <= hi)) {
      throw invalid('vniRange', `[${lo}, ${hi}] must be integers within ${VNI_MIN}-${VNI_MAX}, low <= high`);
    }
    const log = opts.logger ?? pino({ level: 'silent' });
    const replica = new IntentReplica(store, log);
    try {
      await replica.open();
    } catch (err) {
      throw toIntentError(err, store.description);
    }
    return new IntentService(replica, { ...opts, vniRange: range });
  }

  /**
   * Why reads may be out of date (undefined when they are not): this controller's copy follows a
   * remote store it cannot reach now, so another controller's writes may be missing from it.
   */
  staleness(): string | undefined {
    const store = this.replica.store;
    if (store.connected === undefined || store.connected()) return undefined;
    return `the intent store (${store.description}) is unreachable: this copy is at revision ${this.revision()} and may miss writes made through another controller`;
  }

  revision(): number {
    return this.replica.committed.revision;
  }

  /** The engine registers itself here so `waitApplied` means "every affected switch confirmed". */
  setApplyTracker(tracker: ApplyTracker | undefined): void {
    this.tracker = tracker;
  }

  async waitApplied(
    revision: number,
    timeoutMs: number,
  ): Promise<{ applied: boolean; revision: number; pending?: PendingSwitch[]; pendingCount?: number }> {
    const started = Date.now();
    let applied = await this.replica.waitRevision(revision, timeoutMs);
    if (applied && this.tracker) {
      applied = await this.tracker.waitApplied(revision, Math.max(0, timeoutMs - (Date.now() - started)));
      if (!applied && this.tracker.pending)
        return { applied, revision: this.revision(), ...pendingOf(this.tracker, revision) };
    }
    return { applied, revision: this.revision() };
  }

  onChange(cb: (ev: IntentChangeEvent) => void): () => void {
    return this.replica.onChange((revision, changes) => {
      cb({
        revision,
        changes: changes.map((c) => {
          const { kind, id } = parseKey(c.key)!;
          const out: ObjectChange = { kind, id };
          if (c.before) out.before = c.before;
          if (c.after) out.after = c.after;
          return out;
        }),
      });
    });
  }

  get<K extends Kind>(kind: K, id: string, ctx: IntentContext = {}): ObjectOf[K] {
    checkKind(kind);
    const o = this.replica.committed.get(kind, id);
    if (!o || !visible(kind, o, ctx.tenantScope)) throw notFound(kind, id);
    return o;
  }

  /** The object, if it exists (no tenant scope: for the controller's own parts, not requests). */
  find<K extends Kind>(kind: K, id: string): ObjectOf[K] | undefined {
    return this.replica.committed.get(kind, id);
  }

  /** The endpoint whose port is this iface-id (iface-ids are unique), if any. */
  endpointOfIface(ifaceId: string): ObjectOf['endpoint'] | undefined {
    const state = this.replica.committed;
    const id = state.ifaceIds.get(ifaceId);
    return id === undefined ? undefined : state.get('endpoint', id);
  }

  /** The endpoint of a network that holds this address (unique per network), if any. */
  endpointByIp(networkId: string, ip: string): ObjectOf['endpoint'] | undefined {
    const state = this.replica.committed;
    const id = state.ips.get(networkId)?.get(ip);
    return id === undefined ? undefined : state.get('endpoint', id);
  }

  /** The endpoints of a network allowed to send from this address (a VIP, a prefix; `exactly`: as a VIP), by id. */
  endpointsAllowing(networkId: string, ip: string, exactly = false): string[] {
    return (exactly ? endpointsAllowedExactly : endpointsAllowing)(this.replica.committed, networkId, ip);
  }

  /** The endpoint of a network with this MAC (unique per network; lower case), if any. */
  endpointByMac(networkId: string, mac: string): ObjectOf['endpoint'] | undefined {
    const state = this.replica.committed;
    const id = state.macs.get(networkId)?.get(mac);
    return id === undefined ? undefined : state.get('endpoint', id);
  }

  /** The network with this VNI, if any. */
  networkByVni(vni: number): ObjectOf['network'] | undefined {
    const state = this.replica.committed;
    const id = state.vnis.get(vni);
    return id === undefined ? undefined : state.get('network', id);
  }

  /** The chassis whose tunnel (underlay) address this is, if any. */
  chassisOfTunnelIp(ip: string): ObjectOf['chassis'] | undefined {
    const state = this.replica.committed;
    const id = state.tunnelIps.get(ip);
    return id === undefined ? undefined : state.get('chassis', id);
  }

  /** The router with an interface on this network (a network is on at most one) and that interface. */
  routerOnNetwork(networkId: string): ReturnType<typeof routerOn> {
    return routerOn(this.replica.committed, networkId);
  }

  /** Ids of the `ofKind` objects that reference kind/id (a network's endpoints or ACLs), ascending. */
  referrerIds(kind: Kind, id: string, ofKind: Kind): string[] {
    return this.replica.committed.sortedReferrerIds(kind, id, ofKind);
  }

  list<K extends Kind>(kind: K, query: ListQuery = {}, ctx: IntentContext = {}): ListResult<K> {
    checkKind(kind);
    return listPage(this.replica.committed, kind, query, ctx.tenantScope);
  }

  /** How many objects of each kind a quota counts the tenant holds (quotas.ts). */
  usage(tenantId: string): Record<QuotaKind, number> {
    return usageOf(this.replica.committed, tenantId);
  }

  /** The intent (or one tenant's) as the batch that recreates it, at one revision (export.ts). */
  export(scope: ExportScope = {}): { revision: number; ops: BatchOp[] } {
    const state = this.replica.committed;
    return { revision: state.revision, ops: exportOps(state, scope) };
  }

  create<K extends Kind>(kind: K, input: CreateInputOf[K], ctx: IntentContext = {}): Promise<WriteResult<K>> {
    return this.write(ctx, (rev, state) => {
      checkCreate(kind, input, ctx.tenantScope);
      const idemKey = ctx.idempotencyKey === undefined ? undefined : idempotencyKeyOf(ctx);
      const fingerprint = idemKey ? sha256(stableStringify({ kind, input })) : '';
      if (idemKey) {
        const first = state.idempotency.get(idemKey);
        if (first) {
          if (first.fingerprint !== fingerprint || first.kind !== kind) {
            throw conflict('Idempotency-Key', 'was already used for a different request');
          }
          return { ops: [], finish: () => ({ object: first.object, revision: first.revision }) };
        }
      }
      const { object, ops } = planCreate(kind, input as object, rev, this.env(ctx, state));
      if (idemKey) {
        const record: IdempotencyRecord = { fingerprint, kind, revision: rev, object, at: object.createdAt };
        ops.push({ type: 'put', key: idemKey, value: record as never }, ...expiredIdempotency(state));
      }
      return { ops, finish: () => ({ object, revision: rev }) };
    }) as Promise<WriteResult<K>>;
  }

  put<K extends Kind>(
    kind: K,
    id: string,
    input: CreateInputOf[K],
    ctx: IntentContext = {},
  ): Promise<WriteResult<K>> {
    return this.write(ctx, (rev, state) => {
      const w = planReplace(kind, id, input as object, rev, this.env(ctx, state), ctx.ifMatch);
      return this.written(w);
    }) as Promise<WriteResult<K>>;
  }

  update<K extends Kind>(
    kind: K,
    id: string,
    patch: PatchOf[K],
    ctx: IntentContext = {},
  ): Promise<WriteResult<K>> {
    return this.write(ctx, (rev, state) => {
      checkKind(kind);
      const existing = state.get(kind, id);
      if (!existing || !visible(kind, existing, ctx.tenantScope)) throw notFound(kind, id);
      checkIfMatch(kind, id, existing, ctx.ifMatch);
      checkShape(kind, 'patch', patch);
      const { revision: _r, createdAt: _c, updatedAt: _u, ...current } = existing as AnyObject;
      const fields = buildObject(
        kind,
        this.env(ctx, state),
        { ...current, ...(patch as object), id },
        existing,
      );
      return this.written(replaceWith(kind, fields, existing, rev));
    }) as Promise<WriteResult<K>>;
  }

  delete<K extends Kind>(kind: K, id: string, ctx: DeleteContext = {}): Promise<DeleteResult<K>> {
    return this.write(ctx, (_rev, state) => {
      const existing = deletable(kind, id, this.env(ctx, state), ctx.ifMatch);
      const keys = planDelete(state, kind, id, ctx.cascade === true);
      const deleted = keys.map((k) => parseKey(k)!);
      return {
        ops: keys.map((key) => ({ type: 'delete' as const, key })),
        finish: (revision) => ({ object: existing, revision, deleted }),
      };
    }) as Promise<DeleteResult<K>>;
  }

  /**
   * Many creates / replaces / deletes as one atomic transaction with one revision (./batch.ts);
   * `ops` is checked again at run time, so any caller gets the same errors as the REST API.
   */
  batch(ops: readonly BatchOp[], ctx: BatchContext = {}): Promise<BatchResult> {
    return this.write(
      ctx,
      planBatch(ops, ctx, (state) => this.env(ctx, state)),
    ) as Promise<BatchResult>;
  }

  /** The intent's changes, with their authors (history.ts, readHistory). */
  history(query: HistoryQuery): Promise<HistoryAnswer> {
    return readHistory(this.replica, query);
  }

  /** Makes a bearer token; the secret is returned once and only its sha256 is stored. */
  async createToken(tenantId: string | null, name: string, ctx: IntentContext = {}): Promise<CreatedToken> {
    const secret = newSecret();
    const object = (await this.write(ctx, (rev, state) => {
      writable('token', ctx.tenantScope);
      checkShape('token', 'create', { tenantId, name });
      if (tenantId !== null && !state.get('tenant', tenantId))
        throw invalid('tenantId', `tenant '${tenantId}' does not exist`);
      const object = stamp({ id: randomUUID(), tenantId, name, hash: hashSecret(secret) }, rev, undefined);
      return {
        ops: [{ type: 'put', key: keyOf('token', object.id), value: object as never }],
        finish: () => object,
      };
    })) as ApiToken;
    return { token: secret, record: object };
  }

  /** The token a bearer secret belongs to (config admin tokens included), compared in constant time. */
  authenticate(secret: string): ApiToken | undefined {
    if (typeof secret !== 'string' || secret.length === 0 || secret.length > 512) return undefined;
    const hash = hashSecret(secret);
    let admin = -1;
    this.adminHashes.forEach((h, i) => {
      if (sameHash(h, hash)) admin = i;
    });
    if (admin >= 0) {
      const epoch = new Date(0).toISOString();
      return {
        id: `config-admin-${admin}`,
        tenantId: null,
        name: 'admin token from config',
        hash,
        revision: 1,
        createdAt: epoch,
        updatedAt: epoch,
      };
    }
    const state = this.replica.committed;
    const id = state.tokenHashes.get(hash);
    const record = id === undefined ? undefined : state.get('token', id);
    return record && sameHash(record.hash, hash) ? record : undefined;
  }

  /** Stops following the store (the store itself belongs to the caller). */
  async close(): Promise<void> {
    this.replica.close();
  }

  private write(ctx: IntentContext, plan: Plan): Promise<unknown> {
    // Store failures become IntentErrors; anything else is a bug and stays what it is (a 500).
    const author: ChangeAuthor = {
      ...(ctx.actor === undefined ? {} : { actor: ctx.actor }),
      ...(ctx.tenantScope === undefined ? {} : { tenant: ctx.tenantScope }),
      ...(ctx.requestId === undefined ? {} : { requestId: ctx.requestId }),
    };
    return this.replica.submit(plan, author).catch((err) => {
      throw err instanceof StoreError ? toIntentError(err, `(request ${ctx.requestId ?? '-'})`) : err;
    });
  }

  private env(ctx: IntentContext, state: IntentState): RuleEnv {
    const env: RuleEnv = {
      state,
      vniRange: this.opts.vniRange ?? DEFAULT_VNI_RANGE,
      newId: randomUUID,
      randomMac,
      vniCursor: this.vniCursor,
    };
    if (ctx.tenantScope) env.tenantScope = ctx.tenantScope;
    return env;
  }

  /** A planned single write as the pipeline takes it (no ops: unchanged, current revision). */
  private written({ object, ops }: PlannedWrite) {
    return {
      ops,
      finish: (revision: number) => ({ object, revision: ops.length > 0 ? revision : object.revision }),
    };
  }
}
