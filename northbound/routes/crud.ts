import { type TObject, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AnyObject, CreateInputOf, Kind, PatchOf } from '../../controller/intent/model.js';
import type { DeleteResult, IntentContext, WriteResult } from '../../controller/intent/service.js';
import { ApiError, errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { sendPage } from '../list-serializer.js';
import { requireAdmin } from '../plugins/auth.js';
import { tenantScope } from '../principal.js';
import { DeletedBody, IdParams, PageQuery, pageOf } from '../schemas.js';
import { etagOf, parseIdempotencyKey, parseIfMatch, parseTimeout, WaitQuery } from '../write-options.js';

export type ListFilter = 'tenant' | 'network';

/** One REST resource over one intent kind: the five routes share this description. */
export interface ResourceDef {
  kind: Exclude<Kind, 'token'>;
  /** URL segment under /v1, e.g. `security-groups`. */
  path: string;
  /** OpenAPI tag and human noun. */
  tag: string;
  noun: string;
  /** Chassis and VLAN bindings are infrastructure: tenant tokens get 403 on every route. */
  adminOnly: boolean;
  /** Tenants: tenant tokens may read their own but not create, replace or delete. */
  adminWrites: boolean;
  filters: ListFilter[];
  /** `object` is what the API shows; `stored` the intent object alone (list items are cached by it). */
  schemas: { object: TObject; stored: TObject; create: TObject; patch: TObject };
  /** Read-only status shown as the object's `status` member (endpoints). */
  status?: { schema: TObject; of(obj: AnyObject): Record<string, unknown> };
}

const filterQuery: Record<ListFilter, ReturnType<typeof Type.String>> = {
  tenant: Type.String({ minLength: 1, maxLength: 64, description: 'only objects of this tenant' }),
  network: Type.String({ minLength: 1, maxLength: 64, description: 'only objects on this network' }),
};

const WriteHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'ETag (revision) the client last saw; 412 if stale' }),
  ),
});
const CreateHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'a retried POST with the same key returns the first result, writes once' }),
  ),
});

const contextOf = (req: FastifyRequest, extra: Partial<IntentContext> = {}): IntentContext => {
  const scope = tenantScope(req.principal);
  return {
    requestId: req.id,
    actor: req.principal.tokenId,
    ...(scope === undefined ? {} : { tenantScope: scope }),
    ...extra,
  };
};

interface WaitParams {
  wait?: 'applied';
  timeout?: string;
}

/** Refuses a bad `timeout` before anything is written (a 400 must mean "nothing happened"). */
export const checkWaitQuery = async (req: FastifyRequest): Promise<void> => {
  const q = req.query as WaitParams;
  if (q.wait === 'applied' || q.timeout !== undefined) parseTimeout(q.timeout);
};

/**
 * Sets the revision headers, then honours `?wait=applied`: 504 `timeout` (the write stands;
 * details.revision names it) when the affected switches did not confirm within the timeout.
 */
export const finishWrite = async (
  intents: IntentService,
  req: FastifyRequest,
  reply: FastifyReply,
  revision: number,
  etagRevision?: number,
): Promise<void> => {
  reply.header('x-weft-revision', String(revision));
  if (etagRevision !== undefined) reply.header('etag', etagOf(etagRevision));
  const q = req.query as WaitParams;
  if (q.wait !== 'applied') return;
  const timeoutMs = parseTimeout(q.timeout);
  const result = await intents.waitApplied(revision, timeoutMs);
  if (!result.applied) {
    // Name who holds the answer up (and why, when its syncs fail): the first thing an operator asks.
    const first = result.pending?.[0];
    const waitingOn = first
      ? `; waiting on ${result.pendingCount} switch(es), e.g. ${first.datapathId}${first.chassis ? ` (${first.chassis})` : ''} at revision ${first.appliedRevision}${first.lastError ? `: ${first.lastError}` : ''}`
      : '';
    throw new ApiError(
      'timeout',
      `revision ${revision} is committed but not confirmed by every affected switch within ${timeoutMs} ms${waitingOn}`,
      undefined,
      {
        revision,
        appliedRevision: result.revision,
        timeoutMs,
        ...(result.pending ? { pending: result.pending, pendingCount: result.pendingCount } : {}),
      },
    );
  }
};

export const registerCrud = (app: FastifyInstance, def: ResourceDef, intents: IntentService): void => {
  const { kind, path, tag, noun } = def;
  const status = def.status;
  const out = (obj: AnyObject): AnyObject =>
    status ? ({ ...obj, status: status.of(obj) } as unknown as AnyObject) : obj;
  const guards = def.adminOnly ? [requireAdmin] : [];
  const writeGuards = def.adminOnly || def.adminWrites ? [requireAdmin, checkWaitQuery] : [checkWaitQuery];
  const objectResponse = def.schemas.object;
  const listQuery = Type.Object({
    ...PageQuery,
    ...Object.fromEntries(def.filters.map((f) => [f, Type.Optional(filterQuery[f])])),
  });
  const writeQuery = Type.Object(WaitQuery);

  app.get(
    `/${path}`,
    {
      preHandler: guards,
      schema: {
        tags: [tag],
        summary: `List ${noun}s (sorted by id; paginated)`,
        querystring: listQuery,
        response: { 200: pageOf(objectResponse, `${noun} page`), ...errorResponses(400, 401, 403, 503) },
      },
    },
    async (req, reply) => {
      const q = req.query as { limit: number; cursor?: string; tenant?: string; network?: string };
      const page = intents.list(
        kind,
        {
          limit: q.limit,
          ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
          ...(q.tenant === undefined ? {} : { tenantId: q.tenant }),
          ...(q.network === undefined ? {} : { networkId: q.network }),
        },
        contextOf(req),
      );
      const revision = intents.revision();
      reply.header('x-weft-revision', String(revision));
      const statusJson =
        status &&
        memoMember('status', reply.compileSerializationSchema(status.schema) as (o: object) => string);
      return sendPage(reply, def.schemas.stored, {
        items: page.items,
        revision,
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
        ...(status && statusJson ? { extra: (o: object) => statusJson(status.of(o as AnyObject)) } : {}),
      });
    },
  );

  app.get(
    `/${path}/:id`,
    {
      preHandler: guards,
      schema: {
        tags: [tag],
        summary: `Show one ${noun} (ETag = its revision)`,
        params: IdParams,
        response: { 200: objectResponse, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const obj = intents.get(kind, id, contextOf(req));
      reply.header('etag', etagOf(obj.revision)).header('x-weft-revision', String(intents.revision()));
      return out(obj);
    },
  );

  app.post(
    `/${path}`,
    {
      preHandler: writeGuards,
      schema: {
        tags: [tag],
        summary: `Create a ${noun} (Idempotency-Key makes retries safe)`,
        querystring: writeQuery,
        headers: CreateHeaders,
        body: def.schemas.create,
        response: { 201: objectResponse, ...errorResponses(400, 401, 403, 404, 409, 503, 504) },
      },
    },
    async (req, reply) => {
      const key = parseIdempotencyKey(req.headers['idempotency-key'] as string | undefined);
      const ctx = contextOf(req, key === undefined ? {} : { idempotencyKey: key });
      const result: WriteResult = await intents.create(kind, req.body as CreateInputOf[typeof kind], ctx);
      reply.code(201).header('location', `/v1/${path}/${encodeURIComponent(result.object.id)}`);
      await finishWrite(intents, req, reply, result.revision, result.object.revision);
      return out(result.object);
    },
  );

  app.put(
    `/${path}/:id`,
    {
      preHandler: writeGuards,
      schema: {
        tags: [tag],
        summary: `Create or replace the ${noun} with this client-chosen id (idempotent)`,
        params: IdParams,
        querystring: writeQuery,
        headers: WriteHeaders,
        body: def.schemas.create,
        response: {
          200: objectResponse,
          201: objectResponse,
          ...errorResponses(400, 401, 403, 404, 409, 412, 503, 504),
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const body = req.body as CreateInputOf[typeof kind] & { id?: string };
      if (body.id !== undefined && body.id !== id) {
        throw new ApiError('invalid', `body 'id' (${body.id}) differs from the id in the path (${id})`, 'id');
      }
      const ifMatch = parseIfMatch(req.headers['if-match'] as string | undefined);
      const ctx = contextOf(req, ifMatch === undefined ? {} : { ifMatch });
      const existed = exists(intents, kind, id, ctx);
      if (!existed && req.headers['if-match'] !== undefined) {
        throw new ApiError('precondition_failed', `If-Match given but ${noun} '${id}' does not exist`);
      }
      const result: WriteResult = await intents.put(kind, id, body, ctx);
      reply.code(existed ? 200 : 201);
      if (!existed) reply.header('location', `/v1/${path}/${encodeURIComponent(id)}`);
      await finishWrite(intents, req, reply, result.revision, result.object.revision);
      return out(result.object);
    },
  );

  app.patch(
    `/${path}/:id`,
    {
      preHandler: def.adminOnly ? [requireAdmin, checkWaitQuery] : [checkWaitQuery],
      schema: {
        tags: [tag],
        summary: `Change some fields of a ${noun} (If-Match for optimistic concurrency)`,
        params: IdParams,
        querystring: writeQuery,
        headers: WriteHeaders,
        body: def.schemas.patch,
        response: { 200: objectResponse, ...errorResponses(400, 401, 403, 404, 409, 412, 503, 504) },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const ifMatch = parseIfMatch(req.headers['if-match'] as string | undefined);
      const ctx = contextOf(req, ifMatch === undefined ? {} : { ifMatch });
      const result: WriteResult = await intents.update(kind, id, req.body as PatchOf[typeof kind], ctx);
      await finishWrite(intents, req, reply, result.revision, result.object.revision);
      return out(result.object);
    },
  );

  app.delete(
    `/${path}/:id`,
    {
      preHandler: writeGuards,
      schema: {
        tags: [tag],
        summary: `Delete a ${noun} (?cascade=true also deletes what depends on it)`,
        params: IdParams,
        querystring: Type.Object({
          ...WaitQuery,
          cascade: Type.Optional(
            Type.Boolean({ description: 'delete dependants too; else 409 while any exist' }),
          ),
        }),
        headers: WriteHeaders,
        response: {
          200: Type.Object({
            ...DeletedBody.properties,
            cascaded: Type.Array(Type.Object({ kind: Type.String(), id: Type.String() }), {
              description: 'every object removed, this one first',
            }),
          }),
          ...errorResponses(400, 401, 403, 404, 409, 412, 503, 504),
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const q = req.query as { cascade?: boolean };
      const ifMatch = parseIfMatch(req.headers['if-match'] as string | undefined);
      const ctx = contextOf(req, {
        ...(ifMatch === undefined ? {} : { ifMatch }),
        ...(q.cascade === true ? { cascade: true } : {}),
      });
      const result: DeleteResult = await intents.delete(kind, id, ctx);
      await finishWrite(intents, req, reply, result.revision);
      return { id, deleted: true as const, revision: result.revision, cascaded: result.deleted };
    },
  );
};

/**
 * `"name":{...}` per value object, memoised: providers hand out shared objects (e.g. "unbound"),
 * so a 10,000-item page serialises and allocates the member once, not 10,000 times.
 */
const memoMember = (name: string, serialize: (o: object) => string) => {
  const memo = new WeakMap<object, string>();
  return (o: object): string => {
    let member = memo.get(o);
    if (member === undefined) {
      member = `${JSON.stringify(name)}:${serialize(o)}`;
      memo.set(o, member);
    }
    return member;
  };
};

/** Does the object exist for this caller? (not_found from the scope counts as absent.) */
const exists = (intents: IntentService, kind: Kind, id: string, ctx: IntentContext): boolean => {
  try {
    intents.get(kind, id, { ...(ctx.tenantScope === undefined ? {} : { tenantScope: ctx.tenantScope }) });
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'not_found') return false;
    throw err;
  }
};
