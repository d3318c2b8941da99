/**
 * The durable, revisioned key/value store that holds intent. Two backends implement it (embedded
 * file journal, Redis); one conformance suite tests both. The store knows nothing about the intent
 * model: keys are strings ("network/n1"), values are JSON.
 *
 * Revisions: every committed transaction gets the next integer revision (1, 2, 3, ...). A commit
 * carries one or more transactions, committed atomically (all or none) with consecutive
 * revisions; that lets a writer batch many small writes into one fsync / one Redis round trip while
 * each write keeps its own revision.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

export type Op = { type: 'put'; key: string; value: JsonValue } | { type: 'delete'; key: string };

export interface Transaction {
  ops: Op[];
  /**
   * Per-key preconditions: the key's current revision must equal the number (0 = must not exist).
   * Checked after the earlier transactions of the same commit are applied.
   */
  expect?: Record<string, number>;
}

export interface CommitRequest {
  txs: Transaction[];
  /** When set, the store's revision must equal this before the commit, or it is refused (conflict). */
  baseRevision?: number;
}

export interface CommitResult {
  /** Revision of each transaction, in order (consecutive). */
  revisions: number[];
  /** The store revision after the commit (= last of `revisions`). */
  revision: number;
}

export interface Entry {
  key: string;
  value: JsonValue;
  /** Revision of the key's last write. */
  revision: number;
}

/** A consistent view of every key at one revision. */
export interface Snapshot {
  revision: number;
  entries: Entry[];
}

/** One committed transaction, as the change feed delivers it. */
export interface Change {
  revision: number;
  ops: Op[];
}

export interface Subscription {
  close(): void;
}

export interface Store {
  /** 'file' or 'redis'; also the scheme of the store URL. */
  readonly backend: string;
  /** Human description for logs and /readyz (path or Redis address, never a password). */
  readonly description: string;
  snapshot(): Promise<Snapshot>;
  commit(req: CommitRequest): Promise<CommitResult>;
  /** The latest committed revision. */
  currentRevision(): Promise<number>;
  /**
   * Committed changes with revision > `fromRevision`, oldest first, at most `limit`.
   * Throws StoreError 'compacted' when the store no longer has all of them (take a snapshot).
   */
  readChanges(fromRevision: number, limit?: number): Promise<Change[]>;
  /**
   * Calls `onChange` for every change with revision > `fromRevision`, in order, without gaps,
   * including this process's own commits. `onError` gets 'compacted' (the follower fell too far
   * behind: re-snapshot) or repeated 'unavailable' reports while the backend is down (the
   * subscription keeps retrying by itself).
   */
  subscribe(
    fromRevision: number,
    onChange: (change: Change) => void,
    onError?: (err: StoreError) => void,
  ): Subscription;
  /** Is the backend reachable right now (for /readyz)? */
  healthy(): Promise<boolean>;
  /**
   * Whether the connection to the backend is up, without a round trip (a remote backend only):
   * while it is down, this controller's copy of the intent may miss others' writes.
   */
  connected?(): boolean;
  close(): Promise<void>;
}

export type StoreErrorCode = 'conflict' | 'unavailable' | 'compacted' | 'closed' | 'invalid' | 'corrupt';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Shared checks of a commit request, so both backends refuse the same bad input the same way. */
export function validateCommit(req: CommitRequest): void {
  if (!Array.isArray(req.txs) || req.txs.length === 0)
    throw new StoreError('invalid', 'commit: no transactions');
  for (const [i, tx] of req.txs.entries()) {
    if (!Array.isArray(tx.ops) || tx.ops.length === 0) {
      throw new StoreError('invalid', `commit: transaction ${i} has no operations`);
    }
    for (const op of tx.ops) {
      if (typeof op.key !== 'string' || op.key.length === 0 || op.key.length > 512) {
        throw new StoreError('invalid', `commit: transaction ${i}: key must be a string of 1-512 characters`);
      }
      if (op.type === 'put' && op.value === undefined) {
        throw new StoreError('invalid', `commit: transaction ${i}: put of '${op.key}' has no value`);
      }
      if (op.type !== 'put' && op.type !== 'delete') {
        throw new StoreError('invalid', `commit: transaction ${i}: unknown op type`);
      }
    }
  }
  if (req.baseRevision !== undefined && !(Number.isInteger(req.baseRevision) && req.baseRevision >= 0)) {
    throw new StoreError('invalid', 'commit: baseRevision must be a non-negative integer');
  }
}
