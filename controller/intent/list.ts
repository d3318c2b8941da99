import { visible } from './access.js';
import { invalid } from './errors.js';
import type { Kind, ObjectOf } from './model.js';
import { compareIds, type IntentState } from './state.js';

export interface ListQuery {
  tenantId?: string;
  networkId?: string;
  /** Default 100, at most 10000. */
  limit?: number;
  /** Opaque; from a previous page's nextCursor. */
  cursor?: string;
}
export interface ListResult<K extends Kind = Kind> {
  /** Sorted by id. */
  items: Array<ObjectOf[K]>;
  nextCursor?: string;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;

/**
 * One page of a kind, sorted by id, as `scope` (a tenant's token, or none: admin) may see it.
 * The cursor is the last id of the previous page, so a page is found by binary search and
 * writes between pages neither repeat nor skip objects that stay.
 */
export function listPage<K extends Kind>(
  state: IntentState,
  kind: K,
  query: ListQuery,
  scope: string | undefined,
): ListResult<K> {
  const limit = query.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw invalid('limit', `${limit} must be an integer in 1-${MAX_LIMIT}`);
  }
  let after: string | undefined;
  if (query.cursor !== undefined) {
    after = Buffer.from(query.cursor, 'base64url').toString('utf8');
    if (!after || Buffer.from(after, 'utf8').toString('base64url') !== query.cursor) {
      throw invalid('cursor', 'is not a cursor this API returned');
    }
  }
  if (scope && query.tenantId && query.tenantId !== scope) return { items: [] };
  const tenantId = query.tenantId ?? scope;
  let ids: string[];
  if (query.networkId !== undefined) {
    ids = state.sortedReferrerIds('network', query.networkId, kind);
  } else if (tenantId !== undefined && kind !== 'tenant' && kind !== 'chassis' && kind !== 'vlanBinding') {
    // Infrastructure kinds have no tenant: a tenant filter does not apply to them.
    ids = state.sortedReferrerIds('tenant', tenantId, kind);
  } else ids = state.sorted(kind);
  let start = 0;
  if (after !== undefined) {
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareIds(ids[mid]!, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  const items: Array<ObjectOf[K]> = [];
  let i = start;
  for (; i < ids.length && items.length < limit; i++) {
    const o = state.get(kind, ids[i]!)!;
    if (!visible(kind, o, scope)) continue;
    if (tenantId !== undefined && (o as { tenantId?: string | null }).tenantId !== undefined) {
      if ((o as { tenantId?: string | null }).tenantId !== tenantId) continue;
    } else if (tenantId !== undefined && kind === 'tenant' && o.id !== tenantId) continue;
    items.push(o);
  }
  const last = items[items.length - 1];
  return i < ids.length && last
    ? { items, nextCursor: Buffer.from(last.id, 'utf8').toString('base64url') }
    : { items };
}
