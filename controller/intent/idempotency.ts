import { createHash } from 'node:crypto';
import type { Op } from '../store/store.js';
import { invalid } from './errors.js';
import { IDEMPOTENCY_PREFIX, type IntentState } from './state.js';

/**
 * Idempotency-Key handling: a create carrying a key stores its first result (in the same
 * transaction) under a per-tenant key; a repeat with the same body replays it, a different body is
 * a conflict. Records live 24 hours.
 */

/** Idempotency-Keys are kept 24 hours (as Stripe does) and at most this many. */
const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const IDEMPOTENCY_MAX = 100_000;

/** Deletes for a few of the oldest records once they expire, riding along with a new one. */
export function expiredIdempotency(state: IntentState): Op[] {
  const ops: Op[] = [];
  const cutoff = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
  let excess = state.idempotency.size + 1 - IDEMPOTENCY_MAX;
  // Map order is insertion order: the oldest records come first.
  for (const [key, rec] of state.idempotency) {
    if (ops.length >= 4 || (rec.at >= cutoff && excess <= 0)) break;
    ops.push({ type: 'delete', key });
    excess--;
  }
  return ops;
}

export function idempotencyKeyOf(ctx: { idempotencyKey?: string; tenantScope?: string }): string {
  const key = ctx.idempotencyKey!;
  if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
    throw invalid('Idempotency-Key', 'must be 1-255 characters');
  }
  return `${IDEMPOTENCY_PREFIX}${ctx.tenantScope ?? '*'}/${sha256(key)}`;
}

export function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** JSON with sorted keys, for content comparison independent of property order. */
export function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableStringify(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
