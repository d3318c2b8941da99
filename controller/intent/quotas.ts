import { conflict, IntentError } from './errors.js';
import { stableStringify } from './idempotency.js';
import type { Kind } from './model.js';
import { QUOTA_KINDS, type QuotaKind, type Quotas } from './model-quotas.js';
import type { RuleEnv } from './rule-env.js';
import type { IntentState } from './state.js';

/** The kind of object each quota counts. */
const KIND_OF: Record<QuotaKind, Kind> = {
  networks: 'network',
  endpoints: 'endpoint',
  securityGroups: 'securityGroup',
  networkAcls: 'networkAcl',
  routers: 'router',
  mirrors: 'mirror',
};
/** The quota that counts objects of a kind (the kinds a tenant owns). */
const QUOTA_OF = Object.fromEntries(Object.entries(KIND_OF).map(([q, k]) => [k, q])) as Partial<
  Record<Kind, QuotaKind>
>;

/** What each quota of a tenant counts now (GET /v1/tenants/{id}: `status.usage`). */
export function usageOf(state: IntentState, tenantId: string): Record<QuotaKind, number> {
  return Object.fromEntries(QUOTA_KINDS.map((q) => [q, state.ownedCount(tenantId, KIND_OF[q])])) as Record<
    QuotaKind,
    number
  >;
}

/**
 * A new object of `kind` for `tenantId` must fit the tenant's quota for its kind. Counted in the
 * intent as the write (or the batch's earlier ops) left it, so a batch cannot pass a quota by
 * creating many at once. Only creations count: a replace of an existing object adds nothing.
 */
export function checkQuota(state: IntentState, kind: Kind, tenantId: string | undefined): void {
  const quota = QUOTA_OF[kind];
  if (!quota || tenantId === undefined) return;
  const limit = state.get('tenant', tenantId)?.quotas?.[quota];
  if (limit === undefined) return;
  const count = state.ownedCount(tenantId, kind);
  if (count < limit) return;
  throw conflict(
    undefined,
    `tenant '${tenantId}' holds ${count} of its quota of ${limit} ${quota} (quotas.${quota}): delete one, or an admin raises the quota`,
    { tenantId, quota, limit, count },
  );
}

/**
 * A tenant's quotas as stored: `{}` is none at all. They are the operator's: a tenant token may
 * rename its tenant keeping them, never change them (it would lift its own limits).
 */
export function quotasToStore(
  env: RuleEnv,
  given: Quotas | undefined,
  had: Quotas | undefined,
): Quotas | undefined {
  const quotas = given && Object.keys(given).length > 0 ? given : undefined;
  if (env.tenantScope && stableStringify(quotas ?? null) !== stableStringify(had ?? null))
    throw new IntentError(
      'forbidden',
      'quotas: are set by an admin token; a tenant token may keep them, not change them',
      'quotas',
    );
  return quotas;
}
