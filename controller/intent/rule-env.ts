import { invalid } from './errors.js';
import type { AnyObject, Kind, ObjectOf } from './model.js';
import { type Cidr, parseCidr } from './net.js';
import type { IntentState } from './state.js';

/**
 * What every domain rule works with (./rules.ts and the per-kind rule files beside it): the
 * intent, the caller's scope and the generators, plus the small checks the kinds share
 * (references, tenants, immutable fields, a network's parsed subnets).
 */

export interface RuleEnv {
  state: IntentState;
  /** Tenant of a tenant-scoped caller: references to other tenants read as "does not exist". */
  tenantScope?: string;
  vniRange: [number, number];
  newId(): string;
  randomMac(): string;
  /** Next-fit cursor of the VNI allocator (the last VNI handed out). */
  vniCursor: { last: number };
}

export type Fields<K extends Kind> = Omit<ObjectOf[K], 'revision' | 'createdAt' | 'updatedAt'>;
export type Draft = Record<string, unknown> & { id: string };

/** Looks up a referenced object of the same tenant, or throws `invalid` naming the field. */
export function mustRef<K extends Kind>(
  env: RuleEnv,
  kind: K,
  id: string,
  field: string,
  tenantId?: string,
): ObjectOf[K] {
  const o = env.state.get(kind, id);
  const owner = o && 'tenantId' in o ? o.tenantId : undefined;
  if (!o || (env.tenantScope && owner && owner !== env.tenantScope)) {
    throw invalid(field, `${kind} '${id}' does not exist`);
  }
  if (tenantId && owner && owner !== tenantId) {
    throw invalid(field, `${kind} '${id}' belongs to tenant '${owner}', not '${tenantId}'`);
  }
  return o;
}

export function tenantOf(env: RuleEnv, d: Draft, existing: AnyObject | undefined): string {
  const given = d.tenantId as string | undefined;
  const tenantId = given ?? (existing as { tenantId?: string } | undefined)?.tenantId ?? env.tenantScope;
  if (!tenantId) throw invalid('tenantId', 'is required');
  if (env.tenantScope && tenantId !== env.tenantScope)
    throw invalid('tenantId', `tenant '${tenantId}' does not exist`);
  mustRef(env, 'tenant', tenantId, 'tenantId');
  return tenantId;
}

export function immutable(d: Draft, existing: AnyObject | undefined, field: string): void {
  if (!existing) return;
  const before = (existing as Record<string, unknown>)[field];
  if (d[field] !== undefined && d[field] !== before) {
    throw invalid(field, `cannot change from '${String(before)}' to '${String(d[field])}'`);
  }
}

/** Parsed subnets per network object (objects are immutable, so the cache never goes stale). */
const parsedSubnets = new WeakMap<ObjectOf['network'], Cidr[]>();
export function subnetsOf(net: ObjectOf['network']): Cidr[] {
  let cidrs = parsedSubnets.get(net);
  if (!cidrs) {
    cidrs = net.subnets.map((s) => parseCidr(s) as Cidr);
    parsedSubnets.set(net, cidrs);
  }
  return cidrs;
}
