import { type Change, type JsonValue, type Op, type Store, StoreError } from '../store/store.js';
import { IntentError, toIntentError } from './errors.js';
import { KINDS, type Kind, TENANT_OWNED } from './model.js';
import { parseKey } from './state.js';

/**
 * The intent's history: who changed what, and when. Every committed write carries one more put,
 * of CHANGE_KEY, with the time, the token and the request. Its value in the store is only ever the
 * last one, but the store's change feed keeps each transaction's ops, so the feed read back gives
 * every change with its author, as far back as the store keeps changes (the embedded store the
 * last 20,000; Redis its feed). Nothing to trim: the feed's own compaction is the retention.
 */

/** Written by every transaction; not an object kind, so replicas (of any version) ignore it. */
export const CHANGE_KEY = 'meta/change';

/** Who asked for a write, as the API saw it. */
export interface ChangeAuthor {
  /** The token's id (`admin-0` for the first `--admin-token`), `restore` for `weft serve --restore`. */
  actor?: string;
  /** The tenant a tenant token writes for. */
  tenant?: string;
  requestId?: string;
}

/**
 * CHANGE_KEY's put for one transaction. `owners`: the tenant of each object key it deletes (a
 * delete carries no value to read it from), so that a tenant's history can show its deletions.
 */
export function changeRecord(author: ChangeAuthor, at: Date, owners?: ReadonlyMap<string, string>): Op {
  const value: Record<string, JsonValue> = { at: at.toISOString() };
  if (author.actor !== undefined) value.by = author.actor;
  if (author.tenant !== undefined) value.tenant = author.tenant;
  if (author.requestId !== undefined) value.requestId = author.requestId;
  if (owners && owners.size > 0) value.owners = Object.fromEntries(owners);
  return { type: 'put', key: CHANGE_KEY, value };
}

/** The tenant an object belongs to (a tenant is its own), or undefined (chassis, admin tokens, ...). */
export function ownerOf(kind: Kind, value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const o = value as { id?: unknown; tenantId?: unknown };
  if (kind === 'tenant') return typeof o.id === 'string' ? o.id : undefined;
  return TENANT_OWNED.has(kind) && typeof o.tenantId === 'string' ? o.tenantId : undefined;
}

export interface ChangedObject {
  op: 'write' | 'delete';
  kind: Kind;
  id: string;
  /** The tenant it belongs to; missing for objects of no tenant, and for deletions recorded before weft kept it. */
  tenant?: string;
}

/** One revision of the intent as GET /v1/changes answers it. */
export interface HistoryEntry {
  revision: number;
  /** Missing for changes written before weft recorded them. */
  at?: string;
  by?: string;
  tenant?: string;
  requestId?: string;
  objects: ChangedObject[];
}

/** The store's feed entry as history: the objects it wrote or deleted (no values), and its author. */
export function historyOf(change: Change): HistoryEntry {
  const entry: HistoryEntry = { revision: change.revision, objects: [] };
  // The record first: it comes after the objects, and names the tenants of those deleted.
  const record = change.ops.find((op) => op.key === CHANGE_KEY && op.type === 'put');
  const v = (record?.type === 'put' ? record.value : {}) as Record<string, unknown>;
  for (const k of ['at', 'by', 'tenant', 'requestId'] as const)
    if (typeof v[k] === 'string') entry[k] = v[k] as string;
  const owners = (v.owners ?? {}) as Record<string, unknown>;
  for (const op of change.ops) {
    const parsed = parseKey(op.key); // the record, idempotency records and meta keys are not objects
    if (!parsed || !KINDS.includes(parsed.kind)) continue;
    const tenant = op.type === 'put' ? ownerOf(parsed.kind, op.value) : owners[op.key];
    entry.objects.push({
      op: op.type === 'put' ? 'write' : 'delete',
      kind: parsed.kind,
      id: parsed.id,
      ...(typeof tenant === 'string' ? { tenant } : {}),
    });
  }
  return entry;
}

/** What readHistory needs of the replica. */
export interface HistorySource {
  readonly store: Pick<Store, 'readChanges'>;
  readonly committed: { revision: number };
  waitRevision(revision: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
}

export interface HistoryQuery {
  /** The changes after this revision. */
  since: number;
  /** At most this many (changes that name the object, with `kind`). */
  limit: number;
  /** An answer that would be empty waits up to this long for the next change (a long poll). */
  waitMs?: number;
  /** Only changes of objects of this kind (and id): "who deleted vm1?". */
  kind?: Kind;
  id?: string;
  /** A tenant token's tenant: only the objects of that tenant (changes without one are left out). */
  tenantId?: string;
  /** Ends a wait early (the client went away): the answer is then empty. */
  signal?: AbortSignal;
}

export interface HistoryAnswer {
  /** The intent's revision when answered. */
  revision: number;
  changes: HistoryEntry[];
  /** Where the next page starts (`since`): the last change read, matching or not. */
  next: number;
}

/** Changes read per store call while looking for one object's. */
const SCAN_PAGE = 1000;

/**
 * The changes after `since`, oldest first. For one object, the store's feed is scanned from
 * `since` until `limit` changes name it or the feed ends, and each change keeps only the objects
 * asked for. `gone` when the store no longer keeps the changes right after `since`.
 */
export async function readHistory(src: HistorySource, q: HistoryQuery): Promise<HistoryAnswer> {
  const deadline = performance.now() + (q.waitMs ?? 0);
  // Filtered: a page may hold none of what is asked for, so the feed is scanned page by page.
  const filtered = q.kind !== undefined || q.tenantId !== undefined;
  const keep = (o: ChangedObject) =>
    (q.kind === undefined || (o.kind === q.kind && (q.id === undefined || o.id === q.id))) &&
    (q.tenantId === undefined || o.tenant === q.tenantId);
  let next = q.since;
  let lastRead = 0;
  for (;;) {
    const wanted: HistoryEntry[] = [];
    for (;;) {
      const page = (await readPage(src, next, filtered ? SCAN_PAGE : q.limit)).map(historyOf);
      for (const entry of page) {
        next = entry.revision;
        lastRead = entry.revision;
        const objects = filtered ? entry.objects.filter(keep) : entry.objects;
        if (objects.length > 0 || !filtered) wanted.push({ ...entry, objects });
        if (wanted.length >= q.limit) break;
      }
      if (!filtered || wanted.length >= q.limit || page.length < SCAN_PAGE) break;
    }
    const left = deadline - performance.now();
    if (wanted.length > 0 || left <= 0 || q.signal?.aborted) {
      return { revision: Math.max(src.committed.revision, lastRead), changes: wanted, next };
    }
    if (!(await src.waitRevision(next + 1, left, q.signal))) {
      return { revision: Math.max(src.committed.revision, lastRead), changes: [], next };
    }
  }
}

async function readPage(src: HistorySource, since: number, limit: number) {
  try {
    return await src.store.readChanges(since, limit);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'compacted') {
      throw new IntentError(
        'gone',
        `since: the store no longer keeps the changes after revision ${since} (${err.message}); list the objects, then follow from the revision of that answer`,
        'since',
      );
    }
    throw toIntentError(err, '(history)');
  }
}
