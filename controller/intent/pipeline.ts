import { randomUUID } from 'node:crypto';
import { type CommitResult, type Op, StoreError, type Transaction } from '../store/store.js';
import { IntentError, toIntentError } from './errors.js';
import { type ChangeAuthor, changeRecord, ownerOf } from './history.js';
import type { IntentReplica } from './replica.js';
import { type IntentState, parseKey } from './state.js';

/**
 * Turns validated writes into batched, pipelined, optimistic commits.
 *
 * Writes queue up; each batch is validated against `working` (committed + batches in flight),
 * applied to it, and sent as ONE store commit (one fsync / one Redis round trip) in which each
 * write keeps its own revision. Up to MAX_IN_FLIGHT batches are in flight at once, so a new batch
 * forms while the previous one is being fsync'd instead of after.
 *
 * Safety: every commit carries baseRevision (the revision `working` was at), so a commit on a
 * state another controller changed is refused. A batch formed on top of an in-flight one also
 * requires this controller's writer key to be at the revision the previous batch ends with, so
 * it can never commit if the previous batch did not (even if someone else's writes happened to
 * bring the store to the same revision number). When a batch fails, the rest of the pipeline
 * drains, `working` is rolled back, we catch up from the store, and the writes are retried
 * (conflict, up to MAX_ATTEMPTS) or failed (unavailable).
 */

export interface Planned {
  ops: Op[];
  /** Result for the caller once committed; `revision` is the write's own (or current) revision. */
  finish(revision: number): unknown;
}
/** Runs against `working`; `revision` is the revision this write will get if it has ops. */
export type Plan = (revision: number, working: IntentState) => Planned;

interface Request {
  plan: Plan;
  author: ChangeAuthor;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  attempts: number;
}
type Outcome = { error: unknown } | { tx: number; finish: Planned['finish'] };
interface Batch {
  requests: Request[];
  outcomes: Outcome[];
  txs: Transaction[];
  undo: Array<{ key: string; before: unknown }>;
  result?: { revisions: number[] } | { error: unknown };
  settled?: Promise<void>;
}

const MAX_BATCH = 1000;
const MAX_IN_FLIGHT = 4;
const MAX_ATTEMPTS = 8;

export class WritePipeline {
  private queue: Request[] = [];
  private inflight: Batch[] = [];
  private failed?: Batch[];
  private recovering = false;
  private scheduled = false;
  private closed = false;
  /** Written by every commit of this controller: the chain between pipelined batches. */
  private readonly writerKey = `meta/writer/${randomUUID()}`;

  constructor(private readonly replica: IntentReplica) {}

  get idle(): boolean {
    return this.inflight.length === 0 && !this.failed && !this.recovering;
  }

  submit(plan: Plan, author: ChangeAuthor = {}): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queue.push({ plan, author, resolve, reject, attempts: 0 });
      this.kick();
    });
  }

  /** A microtask later, so every write issued in the same tick joins one batch. */
  kick(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  close(): void {
    this.closed = true;
    const err = new IntentError('unavailable', 'the intent service is closed');
    for (const r of this.queue.splice(0)) r.reject(err);
  }

  private pump(): void {
    if (this.closed || this.failed || this.recovering) return;
    if (this.idle) this.replica.sync();
    if (this.replica.busy) return; // a resync is running; it kicks us when done
    while (this.queue.length > 0 && this.inflight.length < MAX_IN_FLIGHT) {
      this.start(this.queue.splice(0, MAX_BATCH));
    }
  }

  private start(requests: Request[]): void {
    const working = this.replica.working;
    const base = working.revision;
    const chained = this.inflight.some((b) => b.txs.length > 0);
    const now = new Date();
    const batch: Batch = { requests, outcomes: [], txs: [], undo: [] };
    for (const req of requests) {
      try {
        const planned = req.plan(base + batch.txs.length + 1, working);
        if (planned.ops.length === 0) {
          batch.outcomes.push({ tx: -1, finish: planned.finish });
          continue;
        }
        let owners: Map<string, string> | undefined;
        for (const op of planned.ops) {
          const undo = working.apply(op);
          batch.undo.push(undo);
          if (op.type === 'delete') owners = ownerOfDeleted(op.key, undo.before, owners);
        }
        working.revision++;
        // Who and when, kept by the store's change feed (history.ts); not applied to `working`.
        batch.txs.push({ ops: [...planned.ops, changeRecord(req.author, now, owners)] });
        batch.outcomes.push({ tx: batch.txs.length - 1, finish: planned.finish });
      } catch (error) {
        batch.outcomes.push({ error });
      }
    }
    let commit: Promise<CommitResult | undefined> = Promise.resolve(undefined);
    if (batch.txs.length > 0) {
      const last = batch.txs[batch.txs.length - 1]!;
      last.ops = [...last.ops, { type: 'put', key: this.writerKey, value: working.revision }];
      if (chained) batch.txs[0]!.expect = { [this.writerKey]: base };
      commit = this.replica.store.commit({ txs: batch.txs, baseRevision: base });
    }
    const previous = this.inflight[this.inflight.length - 1]?.settled ?? Promise.resolve();
    this.inflight.push(batch);
    batch.settled = commit
      .then(
        (r) => {
          batch.result = { revisions: r?.revisions ?? [] };
        },
        (error: unknown) => {
          batch.result = { error };
        },
      )
      .then(() => previous)
      .then(() => this.finish(batch));
  }

  /** Runs for each batch in order, once its commit and every earlier batch have settled. */
  private finish(batch: Batch): void {
    this.inflight.shift();
    const r = batch.result!;
    if (!this.failed && 'revisions' in r) {
      for (const [i, tx] of batch.txs.entries()) {
        this.replica.applyCommitted({ revision: r.revisions[i]!, ops: tx.ops }, false);
      }
      this.replica.trimFeed();
      this.settle(batch, r.revisions);
    } else {
      this.failed ??= [];
      this.failed.push(batch);
    }
    if (this.failed && this.inflight.length === 0) void this.recover();
    else this.kick();
  }

  private settle(batch: Batch, revisions: number[]): void {
    for (const [i, req] of batch.requests.entries()) {
      const o = batch.outcomes[i]!;
      if ('error' in o) {
        req.reject(o.error);
        continue;
      }
      try {
        req.resolve(o.finish(o.tx >= 0 ? revisions[o.tx]! : this.replica.committed.revision));
      } catch (e) {
        req.reject(e);
      }
    }
  }

  private async recover(): Promise<void> {
    this.recovering = true;
    const group = this.failed!;
    this.failed = undefined;
    const { working, committed } = this.replica;
    for (const b of [...group].reverse()) {
      for (const { key, before } of b.undo.reverse()) {
        if (before === undefined) working.apply({ type: 'delete', key });
        else working.apply({ type: 'put', key, value: before as never });
      }
    }
    working.revision = committed.revision;
    let catchUpError: unknown;
    try {
      // Whatever did commit (ours with a lost reply, later batches, other controllers) comes in here.
      await this.replica.catchUp();
    } catch (err) {
      catchUpError = err;
    }
    const retry: Request[] = [];
    for (const b of group) {
      const r = b.result!;
      if ('revisions' in r) {
        this.settle(b, r.revisions);
        continue;
      }
      const conflicted = r.error instanceof StoreError && r.error.code === 'conflict';
      const where = this.replica.store.description;
      if (conflicted && catchUpError === undefined) {
        for (const req of b.requests) {
          if (++req.attempts < MAX_ATTEMPTS) retry.push(req);
          else req.reject(toIntentError(r.error, where));
        }
        continue;
      }
      // Report the commit's own failure; the catch-up's only when it is why a conflict cannot retry.
      const mapped = toIntentError(conflicted ? catchUpError : r.error, where);
      if (!conflicted)
        this.replica.log.warn({ store: where, err: mapped.message, writes: b.txs.length }, 'commit failed');
      b.requests.forEach((req, i) => {
        const o = b.outcomes[i]!;
        req.reject('error' in o ? o.error : mapped);
      });
    }
    this.queue.unshift(...retry);
    this.recovering = false;
    this.kick();
  }
}

/** Notes the tenant of an object a transaction deletes (history.ts: its value is gone from the feed). */
function ownerOfDeleted(
  key: string,
  before: unknown,
  owners: Map<string, string> | undefined,
): Map<string, string> | undefined {
  const parsed = parseKey(key);
  const tenant = parsed ? ownerOf(parsed.kind, before) : undefined;
  if (tenant === undefined) return owners;
  return (owners ?? new Map()).set(key, tenant);
}
