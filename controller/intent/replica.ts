import type { Logger } from 'pino';
import {
  type Change,
  type Op,
  type Store,
  StoreError,
  type Subscription,
  type Transaction,
} from '../store/store.js';
import { IntentError } from './errors.js';
import type { AnyObject } from './model.js';
import { IntentState, parseKey } from './state.js';

/**
 * Keeps this controller's copy of the intent in step with the store, and turns validated writes
 * into batched, optimistic commits:
 * - `committed` is the intent at the last revision known to be in the store (reads use it);
 * - `working` is `committed` plus the writes of the batch in flight (validation uses it, so the
 *   30th create of a batch sees the 29 before it).
 * Writes queue up while a batch is being committed and go together in the next one: one store
 * commit (one fsync / one Redis round trip) per batch, each write keeping its own revision. Every
 * commit carries baseRevision = our revision; if another controller wrote first, we catch up from
 * the change feed and re-validate the batch (up to MAX_ATTEMPTS times).
 */

export interface Planned {
  ops: Op[];
  /** Result for the caller once committed; `revision` is the write's own (or current) revision. */
  finish(revision: number): unknown;
}
/** Runs against `working`; `revision` is the revision this write will get if it has ops. */
export type Plan = (revision: number, working: IntentState) => Planned;

export interface ChangeOfObject {
  key: string;
  before?: AnyObject;
  after?: AnyObject;
}
export type ChangeListener = (revision: number, changes: ChangeOfObject[]) => void;

interface Request {
  plan: Plan;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

const MAX_BATCH = 1000;
const MAX_ATTEMPTS = 8;

export class IntentReplica {
  committed = new IntentState();
  working = new IntentState();
  private queue: Request[] = [];
  private feed: Change[] = [];
  private pumping = false;
  private needResync = false;
  private closed = false;
  private subscription?: Subscription;
  private readonly listeners = new Set<ChangeListener>();
  private waiters: Array<{ revision: number; done(): void }> = [];

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  async open(): Promise<void> {
    await this.loadSnapshot();
    this.follow();
  }

  private follow(): void {
    this.subscription?.close();
    this.subscription = this.store.subscribe(
      this.committed.revision,
      (change) => {
        if (change.revision <= this.committed.revision) return;
        this.feed.push(change);
        this.kick();
      },
      (err) => {
        if (err.code === 'compacted') {
          this.needResync = true;
          this.kick();
        } else
          this.log.warn(
            { store: this.store.description, err: err.message },
            'intent change feed interrupted',
          );
      },
    );
  }

  private async loadSnapshot(): Promise<ChangeOfObject[]> {
    const snap = await this.store.snapshot();
    const fresh = new IntentState();
    const working = new IntentState();
    for (const e of snap.entries) {
      fresh.apply({ type: 'put', key: e.key, value: e.value });
      working.apply({ type: 'put', key: e.key, value: e.value });
    }
    fresh.revision = working.revision = snap.revision;
    const old = this.committed;
    this.committed = fresh;
    this.working = working;
    return diffStates(old, fresh);
  }

  onChange(cb: ChangeListener): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  submit(plan: Plan): Promise<unknown> {
    if (this.closed) return Promise.reject(new IntentError('unavailable', 'the intent service is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ plan, resolve, reject });
      this.kick();
    });
  }

  /** Resolves true once `revision` is in `committed`, false after `timeoutMs`. */
  waitRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.committed.revision >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = {
        revision,
        done: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  close(): void {
    this.closed = true;
    this.subscription?.close();
    for (const r of this.queue.splice(0))
      r.reject(new IntentError('unavailable', 'the intent service is closed'));
  }

  private kick(): void {
    if (this.pumping) return;
    this.pumping = true;
    // A microtask later, so every write issued in the same tick joins the first batch.
    queueMicrotask(() => void this.pump());
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        if (this.closed) break;
        if (this.needResync) await this.resync();
        this.drainFeed();
        if (this.queue.length === 0 || this.closed) break;
        await this.runBatch(this.queue.splice(0, MAX_BATCH));
      }
    } catch (err) {
      // Only resync can throw here (the store is unreachable): try again shortly.
      this.needResync = true;
      this.log.warn(
        { store: this.store.description, err: (err as Error).message },
        'intent resync failed; retrying',
      );
      setTimeout(() => this.kick(), 500).unref();
    } finally {
      this.pumping = false;
    }
  }

  /** Applies other controllers' changes (and late copies of our own, which are skipped). */
  private drainFeed(): void {
    for (const change of this.feed.splice(0)) {
      if (change.revision <= this.committed.revision) continue;
      if (change.revision !== this.committed.revision + 1) {
        this.needResync = true;
        return;
      }
      this.applyCommitted(change, true);
    }
  }

  private async resync(): Promise<void> {
    this.needResync = false;
    this.feed = [];
    const changes = await this.loadSnapshot();
    this.log.info(
      { store: this.store.description, revision: this.committed.revision },
      'intent resynced from snapshot',
    );
    this.follow();
    this.emit(this.committed.revision, changes);
  }

  /** Reads what others committed since our revision (after a conflict). */
  private async catchUp(): Promise<void> {
    try {
      for (;;) {
        const changes = await this.store.readChanges(this.committed.revision, 1000);
        if (changes.length === 0) return;
        for (const c of changes) if (c.revision === this.committed.revision + 1) this.applyCommitted(c, true);
      }
    } catch (err) {
      if (err instanceof StoreError && err.code === 'compacted') await this.resync();
      else throw err;
    }
  }

  private applyCommitted(change: Change, alsoWorking: boolean): void {
    const changes: ChangeOfObject[] = [];
    for (const op of change.ops) {
      if (alsoWorking) this.working.apply(op);
      const { before } = this.committed.apply(op);
      if (!parseKey(op.key)) continue; // idempotency records are not intent
      const after = op.type === 'put' ? (op.value as unknown as AnyObject) : undefined;
      changes.push({ key: op.key, before: before as AnyObject | undefined, after });
    }
    this.committed.revision = change.revision;
    if (alsoWorking) this.working.revision = change.revision;
    this.emit(change.revision, changes);
  }

  private emit(revision: number, changes: ChangeOfObject[]): void {
    for (const cb of this.listeners) {
      try {
        cb(revision, changes);
      } catch (err) {
        this.log.error({ err, revision }, 'intent change listener threw');
      }
    }
    if (this.waiters.length > 0) {
      const ready = this.waiters.filter((w) => w.revision <= revision);
      this.waiters = this.waiters.filter((w) => w.revision > revision);
      for (const w of ready) w.done();
    }
  }

  private async runBatch(batch: Request[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const base = this.working.revision;
      const undo: Array<{ key: string; before: unknown }> = [];
      const txs: Transaction[] = [];
      const outcomes: Array<{ error: unknown } | { tx: number; finish: Planned['finish'] }> = [];
      for (const req of batch) {
        try {
          const planned = req.plan(base + txs.length + 1, this.working);
          if (planned.ops.length === 0) {
            outcomes.push({ tx: -1, finish: planned.finish });
            continue;
          }
          for (const op of planned.ops) undo.push(this.working.apply(op));
          this.working.revision++;
          txs.push({ ops: planned.ops });
          outcomes.push({ tx: txs.length - 1, finish: planned.finish });
        } catch (error) {
          outcomes.push({ error });
        }
      }
      let revisions: number[] = [];
      if (txs.length > 0) {
        try {
          revisions = (await this.store.commit({ txs, baseRevision: base })).revisions;
        } catch (commitErr) {
          this.rollback(undo, base);
          let err = commitErr;
          if (err instanceof StoreError && err.code === 'conflict' && attempt < MAX_ATTEMPTS) {
            try {
              await this.catchUp();
              continue;
            } catch (e) {
              err = e;
            }
          }
          const mapped = toIntentError(err, this.store.description);
          this.log.warn(
            { store: this.store.description, err: mapped.message, writes: txs.length },
            'commit failed',
          );
          for (const [i, req] of batch.entries()) {
            const o = outcomes[i]!;
            req.reject('error' in o ? o.error : mapped);
          }
          return;
        }
        for (const [i, tx] of txs.entries())
          this.applyCommitted({ revision: revisions[i]!, ops: tx.ops }, false);
      }
      batch.forEach((req, i) => {
        const o = outcomes[i]!;
        if ('error' in o) req.reject(o.error);
        else
          try {
            req.resolve(o.finish(o.tx >= 0 ? revisions[o.tx]! : this.committed.revision));
          } catch (e) {
            req.reject(e);
          }
      });
      return;
    }
  }

  private rollback(undo: Array<{ key: string; before: unknown }>, base: number): void {
    for (const { key, before } of undo.reverse()) {
      if (before === undefined) this.working.apply({ type: 'delete', key });
      else this.working.apply({ type: 'put', key, value: before as never });
    }
    this.working.revision = base;
  }
}

export function toIntentError(err: unknown, where: string): IntentError {
  if (err instanceof IntentError) return err;
  if (err instanceof StoreError) {
    if (err.code === 'conflict') {
      return new IntentError(
        'conflict',
        'the store kept changing under this write (another controller?); retry',
      );
    }
    return new IntentError('unavailable', `intent store ${where} unavailable: ${err.message}`);
  }
  return new IntentError(
    'unavailable',
    `intent store ${where} failed: ${(err as Error)?.message ?? String(err)}`,
  );
}

function diffStates(a: IntentState, b: IntentState): ChangeOfObject[] {
  const out: ChangeOfObject[] = [];
  for (const [kind, mapB] of b.objects) {
    const mapA = a.objects.get(kind)!;
    for (const [id, after] of mapB) {
      const before = mapA.get(id);
      if (before !== after && JSON.stringify(before) !== JSON.stringify(after))
        out.push({ key: `${kind}/${id}`, before, after });
    }
    for (const [id, before] of mapA) if (!mapB.has(id)) out.push({ key: `${kind}/${id}`, before });
  }
  return out;
}
