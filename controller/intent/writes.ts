import { randomUUID } from 'node:crypto';
import type { Op } from '../store/store.js';
import { checkIfMatch, stamp, visible, writable } from './access.js';
import { conflict, invalid, notFound } from './errors.js';
import { stableStringify } from './idempotency.js';
import type { AnyObject, Kind } from './model.js';
import { checkQuota } from './quotas.js';
import { buildObject, type RuleEnv } from './rules.js';
import { keyOf } from './state.js';
import { checkId, checkKind, checkShape } from './validate.js';

/**
 * One object's create / replace / delete, planned against a state: the checks and store ops a
 * single REST write and one operation of a batch (./batch.ts) share. Pure apart from the id and
 * MAC generators in `env`; nothing here touches the store.
 */

export interface PlannedWrite {
  object: AnyObject;
  /** Empty when a replace changes nothing. */
  ops: Op[];
  /** The object did not exist before. */
  created: boolean;
}

const TOKENS_ELSEWHERE = 'tokens are created with createToken (POST /v1/tokens)';

/** The shape and access checks every create runs before anything else (idempotency replays after). */
export function checkCreate(kind: Kind, input: unknown, scope: string | undefined): void {
  checkKind(kind);
  if (kind === 'token') throw invalid(undefined, TOKENS_ELSEWHERE);
  writable(kind, scope);
  checkShape(kind, 'create', input);
}

/** A create: the id is the body's or a fresh UUID; an existing id is a conflict. */
export function planCreate(kind: Kind, input: object, rev: number, env: RuleEnv): PlannedWrite {
  const id = (input as { id?: string }).id ?? randomUUID();
  if (env.state.get(kind, id)) throw conflict('id', `${kind} '${id}' already exists`);
  const fields = buildObject(kind, env, { ...input, id });
  checkQuota(env.state, kind, fields.tenantId as string | undefined);
  const object = stamp(fields, rev, undefined);
  return { object, ops: [{ type: 'put', key: keyOf(kind, id), value: object as never }], created: true };
}

/** A PUT: create the object with this id or replace it whole (If-Match checked when given). */
export function planReplace(
  kind: Kind,
  id: string,
  input: object,
  rev: number,
  env: RuleEnv,
  ifMatch: number | undefined,
): PlannedWrite {
  checkKind(kind);
  checkId(id);
  writable(kind, env.tenantScope);
  checkShape(kind, 'create', input);
  const bodyId = (input as { id?: string }).id;
  if (bodyId !== undefined && bodyId !== id)
    throw invalid('id', `'${bodyId}' differs from the id in the path '${id}'`);
  const existing = env.state.get(kind, id);
  if (existing && !visible(kind, existing, env.tenantScope)) throw notFound(kind, id);
  checkIfMatch(kind, id, existing, ifMatch);
  if (kind === 'token' && !existing) throw invalid(undefined, TOKENS_ELSEWHERE);
  const fields = buildObject(kind, env, { ...input, id }, existing);
  if (!existing) checkQuota(env.state, kind, fields.tenantId as string | undefined);
  return replaceWith(kind, fields, existing, rev);
}

/** Stores `fields` as the object's new version, or nothing when they equal the current one. */
export function replaceWith(
  kind: Kind,
  fields: Record<string, unknown>,
  existing: AnyObject | undefined,
  rev: number,
): PlannedWrite {
  if (existing) {
    const { revision: _r, createdAt: _c, updatedAt: _u, ...current } = existing as AnyObject;
    if (stableStringify(current) === stableStringify(fields)) {
      return { object: existing, ops: [], created: false };
    }
  }
  const object = stamp(fields, rev, existing);
  return {
    object,
    ops: [{ type: 'put', key: keyOf(kind, object.id), value: object as never }],
    created: existing === undefined,
  };
}

/** The object a delete removes, after the visibility and If-Match checks (dependants: ./deletion.ts). */
export function deletable(kind: Kind, id: string, env: RuleEnv, ifMatch: number | undefined): AnyObject {
  checkKind(kind);
  const scope = env.tenantScope;
  const existing = env.state.get(kind, id);
  if (!existing || !visible(kind, existing, scope) || (scope && kind === 'tenant')) throw notFound(kind, id);
  checkIfMatch(kind, id, existing, ifMatch);
  return existing;
}
