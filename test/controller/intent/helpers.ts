import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { IntentError, type IntentErrorCode } from '../../../controller/intent/errors.js';
import { IntentService, type IntentServiceOptions } from '../../../controller/intent/service.js';
import { FileStore } from '../../../controller/store/file-store.js';
import type { CommitRequest, CommitResult, Store } from '../../../controller/store/store.js';

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
