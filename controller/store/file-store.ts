import type { FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type Logger, pino } from 'pino';
import { applyChange, load, openJournal, takeLock, writeSnapshot } from './file-journal.js';
import { encodeRecord } from './framing.js';
import {
  type Change,
  type CommitRequest,
  type CommitResult,
  type Entry,
  type Snapshot,
  type Store,
  StoreError,
  type Subscription,
  validateCommit,
} from './store.js';

/**
 * The embedded store (`file:DIR`): all keys in memory, every commit appended to a journal and
 * fdatasync'd before it is acknowledged. Commits that arrive while an fsync is running wait and
 * share the next one (group commit), so throughput grows with concurrency instead of being
 * capped at one write per fsync. Memory (`data`) only ever holds durable state: preconditions of
 * a group are checked against an overlay, and the group is applied after its fsync.
 */

export interface FileStoreOptions {
  /** Write a snapshot and start a new journal after this many changes (default 50,000). */
  snapshotEvery?: number;
  /** Changes kept in memory for readChanges/subscribe from an older revision (default 20,000). */
  retainChanges?: number;
  logger?: Logger;
}

interface Queued {
  req: CommitRequest;
  resolve(r: CommitResult): void;
  reject(e: unknown): void;
}

interface Follower {
  last: number;
  onChange(c: Change): void;
  onError?: (e: StoreError) => void;
  closed: boolean;
}

export class FileStore implements Store {
  readonly backend = 'file';
  private queue: Queued[] = [];
  private flushing = false;
  private idle?: Promise<void>;
  private failed?: StoreError;
  private closed = false;
  private sinceSnapshot = 0;
  private readonly followers = new Set<Follower>();

  private constructor(
    readonly dir: string,
    private data: Map<string, Entry>,
    private rev: number,
    /** retained[i].revision === rev - retained.length + 1 + i */
    private retained: Change[],
    private journal: FileHandle,
    private journalStart: number,
    private readonly unlock: () => Promise<void>,
    private readonly opts: Required<Omit<FileStoreOptions, 'logger'>>,
    private readonly log: Logger,
  ) {}

  get description(): string {
    return `file:${this.dir}`;
  }

  static async open(dir: string, opts: FileStoreOptions = {}): Promise<FileStore> {
    const abs = resolve(dir);
    const log = opts.logger ?? pino({ level: 'silent' });
    const unlock = await takeLock(abs);
    try {
      const loaded = await load(abs, log);
      const journal = await openJournal(abs, loaded.journalStart);
      const store = new FileStore(
        abs,
        loaded.data,
        loaded.revision,
        loaded.changes,
        journal,
        loaded.journalStart,
        unlock,
        { snapshotEvery: opts.snapshotEvery ?? 50_000, retainChanges: opts.retainChanges ?? 20_000 },
        log,
      );
      store.sinceSnapshot = loaded.changes.length;
      log.info({ store: store.description, revision: loaded.revision }, 'embedded store opened');
      return store;
    } catch (err) {
      await unlock();
      throw err;
    }
  }

  async snapshot(): Promise<Snapshot> {
    this.usable();
    return { revision: this.rev, entries: [...this.data.values()] };
  }

  async currentRevision(): Promise<number> {
    this.usable();
    return this.rev;
  }

  async healthy(): Promise<boolean> {
    return !this.closed && !this.failed;
  }

  commit(req: CommitRequest): Promise<CommitResult> {
    try {
      this.usable();
      validateCommit(req);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ req, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let every commit issued in this tick join the group.
        this.idle = new Promise<void>((done) => setImmediate(() => void this.flushLoop().finally(done)));
      }
    });
  }

  async readChanges(fromRevision: number, limit = 1000): Promise<Change[]> {
    this.usable();
    const first = this.rev - this.retained.length + 1;
    if (fromRevision >= this.rev) return [];
    if (fromRevision + 1 < first) {
      throw new StoreError(
        'compacted',
        `changes after revision ${fromRevision} were compacted (oldest kept: ${first})`,
      );
    }
    const at = fromRevision + 1 - first;
    return this.retained.slice(at, at + limit);
  }

  subscribe(
    fromRevision: number,
    onChange: (c: Change) => void,
    onError?: (e: StoreError) => void,
  ): Subscription {
    const f: Follower = { last: fromRevision, onChange, closed: false };
    if (onError) f.onError = onError;
    this.followers.add(f);
    queueMicrotask(() => this.deliver(f));
    return {
      close: () => {
        f.closed = true;
        this.followers.delete(f);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.idle;
    for (const f of this.followers) f.closed = true;
    this.followers.clear();
    await this.journal.close().catch(() => {});
    await this.unlock();
  }

  private usable(): void {
    if (this.closed) throw new StoreError('closed', `store ${this.description} is closed`);
    if (this.failed) throw this.failed;
  }

  private deliver(f: Follower): void {
    if (f.closed || f.last >= this.rev) return;
    const first = this.rev - this.retained.length + 1;
    if (f.last + 1 < first) {
      f.closed = true;
      this.followers.delete(f);
      f.onError?.(new StoreError('compacted', `changes after revision ${f.last} were compacted`));
      return;
    }
    for (let i = f.last + 1 - first; i < this.retained.length && !f.closed; i++) {
      const c = this.retained[i]!;
      f.last = c.revision;
      try {
        f.onChange(c);
      } catch (err) {
        this.log.error({ err, store: this.description }, 'change feed subscriber threw');
      }
    }
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.failed) {
        await this.flushGroup(this.queue.splice(0));
        if (this.sinceSnapshot >= this.opts.snapshotEvery) await this.compact();
      }
    } finally {
      this.flushing = false;
      for (const q of this.queue.splice(0)) q.reject(this.failed ?? new StoreError('closed', 'store closed'));
    }
  }

  /** Checks each commit's preconditions against durable state + earlier commits of the group. */
  private async flushGroup(group: Queued[]): Promise<void> {
    const overlay = new Map<string, number>(); // key -> revision (0 = deleted) within this group
    const revOfKey = (k: string) => overlay.get(k) ?? this.data.get(k)?.revision ?? 0;
    let rev = this.rev;
    const changes: Change[] = [];
    const accepted: Array<{ q: Queued; result: CommitResult }> = [];
    for (const q of group) {
      const { req } = q;
      if (req.baseRevision !== undefined && req.baseRevision !== rev) {
        q.reject(
          new StoreError('conflict', `base revision ${req.baseRevision} is stale (store is at ${rev})`),
        );
        continue;
      }
      const local = new Map<string, number>();
      const revOfLocal = (k: string) => local.get(k) ?? revOfKey(k);
      let r = rev;
      let failed: StoreError | undefined;
      const mine: Change[] = [];
      for (const tx of req.txs) {
        for (const [key, want] of Object.entries(tx.expect ?? {})) {
          if (revOfLocal(key) !== want) {
            failed = new StoreError(
              'conflict',
              `'${key}' is at revision ${revOfLocal(key)}, expected ${want}`,
              { key },
            );
            break;
          }
        }
        if (failed) break;
        r++;
        for (const op of tx.ops) local.set(op.key, op.type === 'put' ? r : 0);
        mine.push({ revision: r, ops: tx.ops });
      }
      if (failed) {
        q.reject(failed);
        continue;
      }
      for (const [k, v] of local) overlay.set(k, v);
      changes.push(...mine);
      accepted.push({ q, result: { revisions: mine.map((c) => c.revision), revision: r } });
      rev = r;
    }
    if (changes.length === 0) return;
    try {
      const record = encodeRecord(Buffer.from(JSON.stringify({ changes }), 'utf8'));
      await this.journal.write(record);
      await this.journal.datasync();
    } catch (err) {
      // Disk state is unknown now: stop accepting writes rather than risk acking lost ones.
      this.failed = new StoreError(
        'unavailable',
        `journal write failed in ${this.dir}: ${(err as Error).message}`,
      );
      this.log.error({ store: this.description, err }, 'embedded store failed');
      for (const a of accepted) a.q.reject(this.failed);
      return;
    }
    for (const c of changes) applyChange(this.data, c);
    this.rev = rev;
    this.retained.push(...changes);
    if (this.retained.length > this.opts.retainChanges * 1.5) {
      this.retained = this.retained.slice(-this.opts.retainChanges);
    }
    this.sinceSnapshot += changes.length;
    for (const a of accepted) a.q.resolve(a.result);
    for (const f of this.followers) this.deliver(f);
  }

  /** Snapshot at the current revision, new journal, old files removed. */
  private async compact(): Promise<void> {
    const revision = this.rev;
    const entries = [...this.data.values()];
    const next = await openJournal(this.dir, revision + 1);
    await this.journal.close();
    this.journal = next;
    this.journalStart = revision + 1;
    this.sinceSnapshot = 0;
    try {
      await writeSnapshot(this.dir, revision, entries, this.journalStart);
      this.log.info({ store: this.description, revision }, 'snapshot written');
    } catch (err) {
      // The journals are still complete; a failed snapshot only costs replay time at startup.
      this.log.warn({ store: this.description, err }, 'snapshot failed');
    }
  }
}
