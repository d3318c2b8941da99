import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { IntentError, type IntentErrorCode } from '../../../controller/intent/errors.js';
import { IntentService, type IntentServiceOptions } from '../../../controller/intent/service.js';
import { FileStore } from '../../../controller/store/file-store.js';
import {
  type CommitRequest,
  type CommitResult,
  type Store,
  StoreError,
} from '../../../controller/store/store.js';

/** A real embedded store in a temp dir, and an intent service over it. */
export async function openService(opts: IntentServiceOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'weft-intent-'));
  const store = await FileStore.open(dir);
  const svc = await IntentService.open(store, opts);
  return {
    svc,
    store,
    dir,
    close: async () => {
      await svc.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Wraps a store so a test can make its next commits fail (a Redis outage, a disk error). */
export class FaultyStore implements Store {
  failNext = 0;
  failWith: () => Error = () => new Error('injected');
  commits = 0;
  constructor(private readonly inner: Store) {}
  get backend() {
    return this.inner.backend;
  }
  get description() {
    return this.inner.description;
  }
  snapshot = () => this.inner.snapshot();
  currentRevision = () => this.inner.currentRevision();
  readChanges = (from: number, limit?: number) => this.inner.readChanges(from, limit);
  subscribe: Store['subscribe'] = (...a) => this.inner.subscribe(...a);
  healthy = () => this.inner.healthy();
  close = () => this.inner.close();
  /** Runs once before the next commit is forwarded (e.g. another controller's write). */
  beforeNextCommit?: () => Promise<unknown>;
  async commit(req: CommitRequest): Promise<CommitResult> {
    this.commits++;
    const before = this.beforeNextCommit;
    this.beforeNextCommit = undefined;
    if (before) await before();
    if (this.failNext > 0) {
      this.failNext--;
      return Promise.reject(this.failWith());
    }
    return this.inner.commit(req);
  }
}

/** Awaits a rejection and checks it is an IntentError with this code and a message matching. */
export async function rejects(
  p: Promise<unknown> | (() => unknown),
  code: IntentErrorCode,
  message?: RegExp,
) {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  expect(err, 'expected an IntentError').toBeInstanceOf(IntentError);
  const e = err as IntentError;
  expect({ code: e.code, message: e.message }).toEqual({
    code,
    message: message ? expect.stringMatching(message) : e.message,
  });
  return e;
}

type Action = 'forward' | 'reject' | 'forward-then-reject' | ((req: CommitRequest) => Promise<CommitResult>);

/**
 * Holds every commit until the test releases it, then does what the test scripted for it:
 * forward it, reject it without forwarding (an outage), or forward it and still reject (a lost
 * reply). Lets a test put several pipelined batches in flight at once.
 */
export class GatedStore extends FaultyStore {
  readonly held: Array<{ req: CommitRequest; release(action?: Action): void }> = [];
  constructor(private readonly base: Store) {
    super(base);
  }
  override commit(req: CommitRequest): Promise<CommitResult> {
    this.commits++;
    return new Promise((resolve, reject) => {
      this.held.push({
        req,
        release: (action: Action = 'forward') => {
          const outage = () => new StoreError('unavailable', 'injected outage');
          if (typeof action === 'function') action(req).then(resolve, reject);
          else if (action === 'reject') reject(outage());
          else if (action === 'forward') this.base.commit(req).then(resolve, reject);
          else this.base.commit(req).then(() => reject(outage()), reject);
        },
      });
    });
  }
  /** Waits until `n` commits are held. */
  async waitHeld(n: number): Promise<void> {
    for (let i = 0; i < 500 && this.held.length < n; i++) await new Promise((r) => setTimeout(r, 2));
    if (this.held.length < n) throw new Error(`only ${this.held.length} commits arrived, expected ${n}`);
  }
}
