import type { TSchema } from '@sinclair/typebox';
import type { BatchKind, BatchOp } from './batch.js';
import { notFound } from './errors.js';
import { type AnyObject, type Kind, SCHEMAS, type SecurityGroup, TENANT_OWNED } from './model.js';
import type { IntentState } from './state.js';

/**
 * The intent as one batch that recreates it: every object a `replace` of its id with what PUT
 * takes (the stored object without its revision, timestamps and read-only parts), in an order `POST /v1/batch`
 * accepts, since op N is checked against the intent ops 0..N-1 leave. Applying it to the
 * controller it came from changes nothing (each replace equals the object); applying it to an
 * empty one rebuilds the same objects (same ids, VNIs, MACs, addresses), only with new revisions.
 * Tokens are never exported: their secrets are not kept, only hashes.
 *
 * Kinds go in an order where each comes after every kind its objects may refer to: networks
 * after tenants, endpoints after their security groups, VLAN bindings after chassis, routers
 * after the endpoints their routes and forwards point at, mirrors after their endpoints. Security
 * groups refer to each other (remote groups): each after those it names; where they name each
 * other in a cycle, the first is written without its rules naming groups not yet written, and
 * once more whole after the last group.
 */
export const EXPORT_ORDER: readonly BatchKind[] = [
  'tenant',
  'chassis',
  'network',
  'securityGroup',
  'networkAcl',
  'endpoint',
  'vlanBinding',
  'router',
  'mirror',
];

/**
 * What to export. `tenantScope`: a tenant token's tenant, which sees and may write only its own
 * objects (not the tenant itself, chassis or VLAN bindings). `tenant`: an admin's choice of one
 * tenant, its objects with the tenant itself and the VLAN bindings of its networks (not the
 * chassis they name, which other tenants share).
 */
export interface ExportScope {
  tenantScope?: string;
  tenant?: string;
}

/** The ops recreating the intent in `scope` (everything without one). */
export function exportOps(state: IntentState, scope: ExportScope = {}): BatchOp[] {
  const tenant = scope.tenantScope ?? scope.tenant;
  if (tenant !== undefined && !state.get('tenant', tenant)) throw notFound('tenant', tenant);
  if (scope.tenantScope !== undefined && scope.tenant !== undefined && scope.tenant !== scope.tenantScope)
    throw notFound('tenant', scope.tenant);
  const included = inScope(state, tenant, scope.tenantScope !== undefined);
  const ops: BatchOp[] = [];
  for (const kind of EXPORT_ORDER) {
    const objects = state
      .sorted(kind)
      .map((id) => state.get(kind, id)!)
      .filter((o) => included(kind, o));
    if (kind === 'securityGroup') ops.push(...securityGroupOps(objects as SecurityGroup[]));
    else for (const o of objects) ops.push(replaceOp(kind, o));
  }
  return ops;
}

/** Whether an object belongs to the export of `tenant` (all when undefined). */
function inScope(
  state: IntentState,
  tenant: string | undefined,
  tenantToken: boolean,
): (kind: Kind, o: AnyObject) => boolean {
  if (tenant === undefined) return () => true;
  return (kind, o) => {
    if (TENANT_OWNED.has(kind)) return (o as { tenantId: string }).tenantId === tenant;
    if (tenantToken) return false; // the rest is an admin's to write
    if (kind === 'tenant') return o.id === tenant;
    if (kind === 'vlanBinding')
      return state.get('network', (o as { networkId: string }).networkId)?.tenantId === tenant;
    return false;
  };
}

/**
 * PUT's body of a stored object: what its create schema takes of it, without its id (the op's).
 * The meta fields go, and so do read-only parts (a router interface's MAC, derived from the VNI).
 */
export function bodyOf(kind: BatchKind, o: AnyObject): Record<string, unknown> {
  const { id: _id, ...body } = fitTo(SCHEMAS[kind].create, o) as Record<string, unknown>;
  return body;
}

/** `value` without what `schema` does not declare (objects' unknown keys), recursively. */
function fitTo(schema: TSchema, value: unknown): unknown {
  if (Array.isArray(value)) return schema.type === 'array' ? value.map((v) => fitTo(schema.items, v)) : value;
  if (value === null || typeof value !== 'object') return value;
  if (schema.anyOf) {
    const object = (schema.anyOf as TSchema[]).find((s) => s.type === 'object');
    return object ? fitTo(object, value) : value;
  }
  if (schema.type !== 'object' || !schema.properties) return value;
  const props = schema.properties as Record<string, TSchema>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const p = props[k];
    if (p) out[k] = fitTo(p, v);
    else if (schema.additionalProperties !== false) out[k] = v;
  }
  return out;
}

const replaceOp = (kind: BatchKind, o: AnyObject, body = bodyOf(kind, o)): BatchOp => ({
  op: 'replace',
  kind,
  id: o.id,
  body,
});

/**
 * Security groups, each after the groups its rules name (depth first, in id order). A group met
 * again while its own references are still being written (a cycle) is written first without the
 * rules naming unwritten groups, and whole once every group is.
 */
function securityGroupOps(groups: readonly SecurityGroup[]): BatchOp[] {
  const byId = new Map(groups.map((g) => [g.id, g]));
  const state = new Map<string, 'visiting' | 'written'>();
  const ops: BatchOp[] = [];
  const again: SecurityGroup[] = [];
  const visit = (g: SecurityGroup): void => {
    state.set(g.id, 'visiting');
    for (const r of g.rules) {
      const to = r.remoteGroupId === undefined ? undefined : byId.get(r.remoteGroupId);
      if (to && !state.has(to.id)) visit(to);
    }
    const unwritten = (id: string | undefined) =>
      id !== undefined && id !== g.id && byId.has(id) && state.get(id) !== 'written';
    if (g.rules.some((r) => unwritten(r.remoteGroupId))) {
      const body = {
        ...bodyOf('securityGroup', g),
        rules: g.rules.filter((r) => !unwritten(r.remoteGroupId)),
      };
      ops.push(replaceOp('securityGroup', g, body));
      again.push(g);
    } else ops.push(replaceOp('securityGroup', g));
    state.set(g.id, 'written');
  };
  for (const g of groups) if (!state.has(g.id)) visit(g);
  for (const g of again) ops.push(replaceOp('securityGroup', g));
  return ops;
}
