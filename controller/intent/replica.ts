import type { Logger } from 'pino';
import { type Change, type Store, StoreError, type Subscription } from '../store/store.js';
import { IntentError } from './errors.js';
import type { ChangeAuthor } from './history.js';
import type { AnyObject } from './model.js';
import { type Plan, WritePipeline } from './pipeline.js';
import { IntentState, parseKey } from './state.js';

/**
 * Keeps this controller's copy of the intent in step with the store:
 * - `committed` is the intent at the last revision known to be in the store (reads use it);
 * - `working` is `committed` plus the writes still being committed (validation uses it, so the
 *   30th create of a batch sees the 29 before it). ./pipeline.ts owns that part.
 * Changes from other controllers arrive through the store's change feed and are applied when no
 * write of ours is in flight (one in flight would fail its precondition anyway and catch up).
 */

export interface ChangeOfObject {
  key: string;
  before?: AnyObject;
  after?: AnyObject;
}
export type ChangeListener = (revision: number, changes: ChangeOfObject[]) => void;

export class IntentReplica {
  committed = new IntentState();
  working = new IntentState();
  private feed: Change[] = [];
  private needResync = false;
  private closed = false;
  private syncing = false;
  private subscription?: Subscription;
  private readonly listeners = new Set<ChangeListener>();
  private waiters: Array<{ revision: number; done(): void }> = [];
  private readonly pipeline: WritePipeline;

  constructor(
    readonly store: Store,
    readonly log: Logger,
  ) {
    this.pipeline = new WritePipeline(this);
  }

  async open(): Promise<void> {
    await this.loadSnapshot();
    this.follow();
  }

  submit(plan: Plan, author?: ChangeAuthor): Promise<unknown> {
    if (this.closed) return Promise.reject(new IntentError('unavailable', 'the intent service is closed'));
    return this.pipeline.submit(plan, author);
  }

  onChange(cb: ChangeListener): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Resolves true once `revision` is in `committed`, false after `timeoutMs` or when `signal` aborts. */
  waitRevision(revision: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.committed.revision >= revision) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const w = {
        revision,
        done: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', giveUp);
          resolve(true);
        },
      };
      // Timed out, or the one waiting went away (a long poll whose client closed): let go now.
      const giveUp = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', giveUp);
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve(false);
      };
      const timer = setTimeout(giveUp, timeoutMs);
      signal?.addEventListener('abort', giveUp, { once: true });
      this.waiters.push(w);
    });
  }

  /** A resync from a snapshot is running: no batch may start. */
  get busy(): boolean {
    return this.syncing;
  }

  close(): void {
    this.closed = true;
    this.subscription?.close();
    this.pipeline.close();
  }

  private follow(): void {
    this.subscription?.close();
    this.subscription = this.store.subscribe(
      this.committed.revision,
      (change) => {
        if (change.revision <= this.committed.revision) return;
        this.feed.push(change);
        this.sync();
      },
      (err) => {
        if (err.code === 'compacted') {
          this.needResync = true;
          this.sync();
        } else {
          this.log.warn(
            { store: this.store.description, err: err.message },
            'intent change feed interrupted',
          );
        }
      },
    );
  }

  /**
   * Brings `committed` (and `working`, equal to it when nothing is in flight) up to date with the
   * feed. Called whenever the pipeline is idle and when the feed delivers.
   */
  sync(): void {
    if (this.syncing || this.closed || !this.pipeline.idle) return;
    if (this.needResync) {
      this.syncing = true;
      void this.resync()
        .catch((err: unknown) => {
          this.needResync = true;
          this.log.warn(
            { store: this.store.description, err: (err as Error).message },
            'intent resync failed; retrying',
          );
          setTimeout(() => this.sync(), 500).unref();
        })
        .finally(() => {
          this.syncing = false;
          this.pipeline.kick();
        });
      return;
    }
    for (const change of this.feed.splice(0)) {
      if (change.revision <= this.committed.revision) continue;
      if (change.revision !== this.committed.revision + 1) {
        this.needResync = true;
        this.sync();
        return;
      }
      this.applyCommitted(change, true);
    }
  }

  /** Forgets feed entries for revisions already applied (our own commits echoed back). */
  trimFeed(): void {
    if (this.feed.length > 0 && this.feed[0]!.revision <= this.committed.revision) {
      this.feed = this.feed.filter((c) => c.revision > this.committed.revision);
    }
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

  /** Reads what was committed since our revision (after a failed commit), into both states. */
  async catchUp(): Promise<void> {
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

  applyCommitted(change: Change, alsoWorking: boolean): void {
    const changes: ChangeOfObject[] = [];
    for (const op of change.ops) {
      if (alsoWorking) this.working.apply(op);
      const { before } = this.committed.apply(op);
      if (!parseKey(op.key)) continue; // idempotency and writer records are not intent
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
}

function diffStates(a: IntentState, b: IntentState): ChangeOfObject[] {
  const out: ChangeOfObject[] = [];
  for (const [kind, mapB] of b.objects) {
    const mapA = a.objects.get(kind)!;
    for (const [id, after] of mapB) {
      const before = mapA.get(id);
      if (before !== after && JSON.stringify(before) !== JSON.stringify(after)) {
        out.push({ key: `${kind}/${id}`, before, after });
      }
    }
    for (const [id, before] of mapA) if (!mapB.has(id)) out.push({ key: `${kind}/${id}`, before });
  }
  return out;
}
