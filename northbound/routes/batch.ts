import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { BatchContext, BatchOp } from '../../controller/intent/batch.js';
import { errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { tenantScope } from '../principal.js';
import { BatchQuery, BatchRequest, BatchResponse } from '../schemas.js';
import { etagOf, parseIdempotencyKey, WaitQuery } from '../write-options.js';
import { checkWaitQuery, finishWrite } from './crud.js';

/** 10,000 ops with room for security groups full of rules; other routes keep the app's limit. */
export const BATCH_BODY_LIMIT = 16 * 1024 * 1024;

const description = [
  'Creates, replaces and deletes objects of any kind in ONE atomic transaction: every op lands, at one',
  'store revision, or none does. Op N is checked against the intent as ops 0..N-1 leave it (a network',
  'created at op 0 can carry endpoints at op 5). A delete without `cascade` is refused only if something',
  "still refers to the object after the last op. Errors name the op: `ops[7] (endpoint 'e7'): ...`, with",
  '`field` like `ops[7].body.ips[0]`; nothing is written then. Tenant tokens may touch only their tenant.',
  '`Idempotency-Key` replays the first result; `?wait=applied` waits for the batch revision;',
  '`?dryRun=1` validates and reports without committing.',
].join(' ');

/** `POST /v1/batch`: many intent writes as one atomic commit (controller/intent/batch.ts). */
export const registerBatch = (app: FastifyInstance, intents: IntentService): void => {
  app.post(
    '/batch',
    {
      bodyLimit: BATCH_BODY_LIMIT,
      preHandler: [checkWaitQuery],
      schema: {
        tags: ['batch'],
        summary: 'Apply many creates/replaces/deletes atomically (one revision)',
        description,
        querystring: Type.Object({ ...WaitQuery, ...BatchQuery.properties }),
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              description: 'a retried batch with the same key and ops returns the first result',
            }),
          ),
        }),
        body: BatchRequest,
        response: {
          200: BatchResponse,
          ...errorResponses(400, 401, 403, 404, 409, 412, 413, 503, 504),
        },
      },
    },
    async (req, reply) => {
      const key = parseIdempotencyKey(req.headers['idempotency-key'] as string | undefined);
      const scope = tenantScope(req.principal);
      const dryRun = ['1', 'true'].includes((req.query as { dryRun?: string }).dryRun ?? '');
      const ctx: BatchContext = {
        requestId: req.id,
        actor: req.principal.tokenId,
        ...(scope === undefined ? {} : { tenantScope: scope }),
        ...(key === undefined ? {} : { idempotencyKey: key }),
        ...(dryRun ? { dryRun } : {}),
      };
      const result = await intents.batch((req.body as { ops: BatchOp[] }).ops, ctx);
      req.log.info(
        { ops: result.results.length, revision: result.revision, committed: result.committed, dryRun },
        'batch',
      );
      if (dryRun) reply.header('x-weft-revision', String(result.revision));
      else await finishWrite(intents, req, reply, result.revision);
      return { ...result, results: result.results.map((r) => ({ ...r, etag: etagOf(r.revision) })) };
    },
  );
};
