import type { Op } from '../store/store.js';
import { planDelete } from './deletion.js';
import { conflict, IntentError, invalid } from './errors.js';
import { expiredIdempotency, idempotencyKeyOf, sha256, stableStringify } from './idempotency.js';
import { type AnyObject, KINDS, type Kind, type ObjectOf } from './model.js';
import type { Plan } from './pipeline.js';
import { checkNextHopsGone } from './router-routes.js';
import type { RuleEnv } from './rules.js';
import { type IntentState, keyOf, parseKey } from './state.js';
import { checkId } from './validate.js';
import { checkCreate, deletable, type PlannedWrite, planCreate, planReplace } from './writes.js';

/**
 * Many intent writes as ONE store transaction: all land or none does.
 *
 * - One revision: the whole batch is a single transaction, so every object it writes carries the
 *   same revision (its ETag) and the change feed delivers the batch as one change. (The store
 *   could give each op its own consecutive revision, but one revision is what "applied" means for
 *   the batch as a whole, and it keeps the engine's work to one recompute.)
 * - Order matters: op N is validated against the intent as it would be after ops 0..N-1, so a
 *   network created at op 0 can be used by an endpoint at op 5, and VNIs, MACs and IPs stay unique
 *   across the batch.
 * - An object the batch leaves as it found it (changed, then changed back) is not written.
 * - A delete without `cascade` is checked at the end of the batch: it is refused only when
 *   something still refers to the object after the last op (an endpoint deleted later in the same
 *   batch does not block its network's delete). With `cascade` its dependants go at that op.
 * - Any failure names the op (`ops[7] (endpoint 'e7'): ips[0]: ...`, field `ops[7].body.ips[0]`)
 *   and nothing is written.
 * - Tenant-scoped callers follow the single-write rules per op (other tenants' objects read as
 *   not found; infrastructure kinds are refused).
 * - Idempotency-Key: a repeat with the same ops replays the first result without writing.
 * - Dry run: everything above runs, nothing is committed.
 */

export const MAX_BATCH_OPS = 10_000;
export const BATCH_OP_TYPES = ['create', 'replace', 'delete'] as const;
export type BatchOpType = (typeof BATCH_OP_TYPES)[number];
/** Tokens have their own route (the secret is shown once); every other kind can be batched. */
export type BatchKind = Exclude<Kind, 'token'>;
export const BATCH_KINDS = KINDS.filter((k): k is BatchKind => k !== 'token');

export interface BatchOp {
  op: BatchOpType;
  kind: BatchKind;
  /** create: optional (the body's id or a fresh UUID); replace and delete: required. */
  id?: string;
  /** The object must be at this revision (replace, delete). */
  ifMatch?: number;
  /** delete: remove dependants too (as DELETE ?cascade=true). */
  cascade?: boolean;
  /** create / replace: the object as POST / PUT of that kind takes it. */
  body?: Record<string, unknown>;
}

export interface BatchContext {
  tenantScope?: string;
  idempotencyKey?: string;
  requestId?: string;
  /** Who writes: recorded in the intent's history (history.ts). */
  actor?: string;
  /** Validate every op against the current intent and report the results; commit nothing. */
  dryRun?: boolean;
  /**
   * At most this many ops (default MAX_BATCH_OPS, what one REST request may hold). In-process
   * callers that must land a whole file as one revision (`weft serve --restore`) lift it.
   */
  maxOps?: number;
}

export interface BatchOpResult {
  index: number;
  op: BatchOpType;
  kind: BatchKind;
  id: string;
  /** The object's revision after the batch (its ETag); for deletes the batch's revision. */
  revision: number;
  /** The object did not exist before this op. */
  created: boolean;
  /** False for a replace with the object's current content (nothing written for it). */
  changed: boolean;
  /** Deletes: every object removed by this op, itself first (more than one with cascade). */
  deleted?: Array<{ kind: Kind; id: string }>;
}

export interface BatchResult {
  /** The batch's revision when it wrote; otherwise the revision the intent is at. */
  revision: number;
  /** Something was written (false for a dry run, a replay and a batch that changed nothing). */
  committed: boolean;
  dryRun: boolean;
  /** An Idempotency-Key repeat: the first result, nothing written now. */
  replayed: boolean;
  results: BatchOpResult[];
}

/** What a repeated Idempotency-Key finds (the same key space as single creates). */
interface BatchIdempotencyRecord {
  fingerprint: string;
  batch: true;
  revision: number;
  results: BatchOpResult[];
  at: string;
}

const OP_FIELDS: ReadonlySet<string> = new Set(['op', 'kind', 'id', 'ifMatch', 'cascade', 'body']);

/** The batch as the pipeline runs it: validated against `state`, committed as one transaction. */
export function planBatch(input: unknown, ctx: BatchContext, envOf: (state: IntentState) => RuleEnv): Plan {
  return (rev, state) => {
    const ops = checkEnvelope(input, ctx.maxOps ?? MAX_BATCH_OPS);
    const idemKey = !ctx.dryRun && ctx.idempotencyKey !== undefined ? idempotencyKeyOf(ctx) : undefined;
    const fingerprint = idemKey ? sha256(stableStringify({ batch: ops })) : '';
    if (idemKey) {
      const first = state.idempotency.get(idemKey) as unknown as BatchIdempotencyRecord | undefined;
      if (first) {
        if (first.fingerprint !== fingerprint || first.batch !== true) {
          throw conflict('Idempotency-Key', 'was already used for a different request');
        }
        const replay = { ...resultOf(first.revision, first.results), replayed: true };
        return { ops: [], finish: () => replay };
      }
    }
    const { storeOps, results } = runAll(ops, rev, state, envOf(state));
    const anyChange = storeOps.length > 0;
    if (ctx.dryRun) {
      const done = (r: number) => ({
        ...resultOf(r, withRevision(results, rev)),
        committed: false,
        dryRun: true,
      });
      return { ops: [], finish: done };
    }
    if (!anyChange) return { ops: [], finish: (current) => resultOf(current, withRevision(results, rev)) };
    if (idemKey) {
      const record: BatchIdempotencyRecord = {
        fingerprint,
        batch: true,
        revision: rev,
        results: withRevision(results, rev),
        at: new Date().toISOString(),
      };
      storeOps.push({ type: 'put', key: idemKey, value: record as never }, ...expiredIdempotency(state));
    }
    return {
      ops: storeOps,
      finish: (revision) => ({ ...resultOf(revision, withRevision(results, revision)), committed: true }),
    };
  };
}

type Pending = Omit<BatchOpResult, 'revision'> & { revision?: number };

const resultOf = (revision: number, results: BatchOpResult[]): BatchResult => ({
  revision,
  committed: false,
  dryRun: false,
  replayed: false,
  results,
});

/** Changed objects get the batch's revision; unchanged ones keep theirs. */
const withRevision = (results: Pending[], rev: number): BatchOpResult[] =>
  results.map((r) => (r.changed ? { ...r, revision: rev } : (r as BatchOpResult)));

/**
 * Runs every op against `state`, applying each op's writes so the next one sees them, and rolls
 * `state` back before returning (or throwing): the pipeline applies the ops itself once planned.
 */
function runAll(
  ops: BatchOp[],
  rev: number,
  state: IntentState,
  env: RuleEnv,
): { storeOps: Op[]; results: Pending[] } {
  const undo: Array<{ key: string; before: unknown }> = [];
  const storeOps: Op[] = [];
  const results: Pending[] = [];
  /** Deletes without cascade (op index, object deleted), checked once every op ran. */
  const deferred: Array<[number, AnyObject]> = [];
  /** Store key -> index of the last op that wrote it. */
  const lastPut = new Map<string, number>();
  try {
    for (const [i, op] of ops.entries()) {
      let planned: { ops: Op[]; result: Pending; deferred?: AnyObject };
      try {
        planned = runOp(op, i, rev, state, env);
      } catch (err) {
        throw atOp(err, i, op);
      }
      for (const o of planned.ops) {
        undo.push(state.apply(o));
        storeOps.push(o);
        if (o.type === 'put') lastPut.set(o.key, i);
      }
      if (planned.deferred) deferred.push([i, planned.deferred]);
      results.push(planned.result);
    }
    for (const [i, gone] of deferred) checkNothingRefers(ops[i]!, i, gone, state, lastPut);
    const asFound = leftAsFound(undo, storeOps, state);
    if (asFound.size > 0) {
      const kept = storeOps.filter((o) => !asFound.has(o.key));
      storeOps.splice(0, storeOps.length, ...kept);
      for (const r of results) {
        const before = asFound.get(keyOf(r.kind, r.id));
        if (before && r.op !== 'delete') Object.assign(r, { changed: false, revision: before.revision });
      }
    }
  } finally {
    for (const { key, before } of undo.reverse()) {
      state.apply(
        before === undefined ? { type: 'delete', key } : { type: 'put', key, value: before as never },
      );
    }
  }
  return { storeOps, results };
}

/**
 * Objects the batch wrote and then left as it found them (an export's security groups in a
 * cycle: one written without a rule, then whole again), by store key with their content before
 * the batch: nothing to write for them, as for a replace with the current content. Objects an
 * op deleted are not among them (the delete is what the batch asked for).
 */
function leftAsFound(
  undo: ReadonlyArray<{ key: string; before: unknown }>,
  storeOps: readonly Op[],
  state: IntentState,
): Map<string, AnyObject> {
  const deleted = new Set(storeOps.filter((o) => o.type === 'delete').map((o) => o.key));
  const first = new Map<string, AnyObject>();
  for (const { key, before } of undo) if (!first.has(key)) first.set(key, before as AnyObject);
  const out = new Map<string, AnyObject>();
  for (const [key, before] of first) {
    const parsed = parseKey(key);
    if (before === undefined || deleted.has(key) || !parsed) continue;
    const now = state.get(parsed.kind, parsed.id);
    if (now && stableStringify(content(now)) === stableStringify(content(before))) out.set(key, before);
  }
  return out;
}

const content = ({ revision: _r, createdAt: _c, updatedAt: _u, ...rest }: AnyObject) => rest;

function runOp(
  op: BatchOp,
  index: number,
  rev: number,
  state: IntentState,
  env: RuleEnv,
): { ops: Op[]; result: Pending; deferred?: AnyObject } {
  const { kind } = op;
  const base = { index, op: op.op, kind };
  if (op.op === 'delete') {
    const id = requiredId(op);
    const existing = deletable(kind, id, env, op.ifMatch);
    const keys = op.cascade ? planDelete(state, kind, id, true) : [keyOf(kind, id)];
    return {
      ops: keys.map((key) => ({ type: 'delete', key })),
      result: {
        ...base,
        id: existing.id,
        created: false,
        changed: true,
        deleted: keys.map((k) => parseKey(k)!),
      },
      ...(op.cascade ? {} : { deferred: existing }),
    };
  }
  const body = op.body!;
  if (op.id !== undefined) checkId(op.id);
  if (op.id !== undefined && body.id !== undefined && body.id !== op.id) {
    throw invalid('id', `the body's id '${String(body.id)}' differs from the op's id '${op.id}'`);
  }
  let w: PlannedWrite;
  if (op.op === 'create') {
    const input = op.id === undefined ? body : { ...body, id: op.id };
    checkCreate(kind, input, env.tenantScope);
    w = planCreate(kind, input, rev, env);
  } else {
    w = planReplace(kind, requiredId(op), body, rev, env, op.ifMatch);
  }
  return {
    ops: w.ops,
    result: {
      ...base,
      id: w.object.id,
      created: w.created,
      changed: w.ops.length > 0,
      revision: w.object.revision,
    },
  };
}

function requiredId(op: BatchOp): string {
  const id = op.id ?? (op.body?.id as string | undefined);
  if (id === undefined) throw invalid('id', `is required for ${op.op}`);
  checkId(id);
  return id;
}

/**
 * After the last op: nothing may still refer to an object a non-cascade delete removed, except
 * objects rewritten after that delete (they were validated against what the delete left). A
 * deleted endpoint's addresses that routes use as next hop must be held again by then.
 */
function checkNothingRefers(
  op: BatchOp,
  index: number,
  gone: AnyObject,
  state: IntentState,
  lastPut: Map<string, number>,
) {
  if (op.kind === 'endpoint') {
    try {
      checkNextHopsGone(state, gone as ObjectOf['endpoint'], new Set());
    } catch (err) {
      throw atOp(err, index, op);
    }
  }
  const id = requiredId(op);
  const left = state.referrersOf(op.kind, id).filter((k) => (lastPut.get(k) ?? -1) < index);
  if (left.length === 0) return;
  const sample = left.slice(0, 3).join(', ') + (left.length > 3 ? `, ... (${left.length} in all)` : '');
  throw atOp(
    conflict(
      undefined,
      `${op.kind} '${id}' is still used by ${sample} after the batch; delete those in the same batch or use cascade`,
      { referrers: left.slice(0, 100) },
    ),
    index,
    op,
  );
}

/**
 * The op's index, kind and id in front of an error from the single-object rules; its field
 * becomes a path in the request (`ops[7].body.ips[0]`, `ops[7].ifMatch`).
 */
function atOp(err: unknown, index: number, op: Partial<BatchOp>, envelope = false): unknown {
  if (!(err instanceof IntentError)) return err;
  const rawId = op.id ?? op.body?.id;
  const id = typeof rawId === 'string' ? rawId : undefined;
  const label = `ops[${index}] (${typeof op.kind === 'string' ? op.kind : '?'}${id === undefined ? '' : ` '${id}'`})`;
  const f = err.field;
  const inner =
    f === undefined
      ? undefined
      : f === 'If-Match'
        ? 'ifMatch'
        : envelope || f === 'id' || f === 'kind'
          ? f
          : `body.${f}`;
  return new IntentError(
    err.code,
    `${label}: ${err.message}`,
    inner === undefined ? `ops[${index}]` : `ops[${index}].${inner}`,
    {
      ...err.details,
      op: index,
      ...(typeof op.kind === 'string' ? { kind: op.kind } : {}),
      ...(id === undefined ? {} : { id }),
    },
  );
}

/** The list and each op's envelope (types, known fields), before any op runs. */
function checkEnvelope(input: unknown, maxOps: number): BatchOp[] {
  if (!Array.isArray(input)) throw invalid('ops', 'must be a list of operations');
  if (input.length === 0) throw invalid('ops', 'is empty; a batch needs at least one operation');
  if (input.length > maxOps) {
    throw invalid(
      'ops',
      `has ${input.length} operations; a batch holds at most ${maxOps} (split it into several)`,
    );
  }
  for (const [i, raw] of input.entries()) {
    const fail = (field: string | undefined, message: string) => {
      throw atOp(invalid(field, message), i, (raw ?? {}) as Partial<BatchOp>, true);
    };
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(undefined, 'must be an object');
    const op = raw as Record<string, unknown>;
    for (const k of Object.keys(op)) if (!OP_FIELDS.has(k)) fail(k, 'is not a known field');
    if (!BATCH_OP_TYPES.includes(op.op as BatchOpType)) {
      fail('op', `'${String(op.op)}' must be one of ${BATCH_OP_TYPES.join(', ')}`);
    }
    if (!BATCH_KINDS.includes(op.kind as BatchKind)) {
      fail(
        'kind',
        op.kind === 'token'
          ? 'tokens cannot be batched (POST /v1/tokens shows the secret once)'
          : `unknown kind '${String(op.kind)}' (one of ${BATCH_KINDS.join(', ')})`,
      );
    }
    if (op.id !== undefined && typeof op.id !== 'string') fail('id', 'must be a string');
    if (op.ifMatch !== undefined && !(Number.isInteger(op.ifMatch) && (op.ifMatch as number) >= 1)) {
      fail('If-Match', 'must be a revision (a positive integer)');
    }
    if (op.ifMatch !== undefined && op.op === 'create') fail('If-Match', 'does not apply to create');
    if (op.cascade !== undefined && (op.op !== 'delete' || typeof op.cascade !== 'boolean')) {
      fail('cascade', 'is a boolean of delete operations only');
    }
    if (op.op === 'delete') {
      if (op.body !== undefined) fail('body', 'a delete takes no body');
    } else if (typeof op.body !== 'object' || op.body === null || Array.isArray(op.body)) {
      fail('body', `is required for ${String(op.op)}: the ${String(op.kind)} as a JSON object`);
    }
  }
  return input as BatchOp[];
}
