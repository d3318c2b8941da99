import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { KINDS, type Kind } from '../../controller/intent/model.js';
import { ApiError, errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { whileOpen } from '../long-poll.js';
import { tenantScope } from '../principal.js';
import { parseLongPoll } from '../write-options.js';

const description = [
  'What changed in the intent after revision `since`, oldest first: each revision with when, by which',
  'token (`by`: its id; `admin-0` for the first --admin-token; `ovsdb` for a hypervisor that registered',
  'itself; `restore` for weft serve --restore), the tenant a tenant token wrote for, the request id',
  '(x-request-id, which finds it in the logs) and the objects it wrote or deleted (GET one for its',
  'content now). As far back as the store keeps changes; before that `410 gone`. With `wait`, an',
  'answer that would be empty waits up to that long for the next change: follow the intent by asking',
  "again with `since` set to the answer's `next`. `kind` (and `id`): only the changes of those objects,",
  'scanning the feed from `since` ("who deleted vm1?"). Admin tokens see every change; a tenant token',
  "the changes of its tenant's objects (each change with those objects only; deletions recorded before",
  'weft noted their tenant are not shown to it).',
].join(' ');

const Change = Type.Object(
  {
    revision: Type.Integer(),
    at: Type.Optional(
      Type.String({ description: 'commit time (ISO 8601); missing before weft recorded it' }),
    ),
    by: Type.Optional(Type.String({ description: 'the token id, ovsdb or restore' })),
    tenant: Type.Optional(Type.String({ description: 'the tenant of a tenant token' })),
    requestId: Type.Optional(Type.String()),
    objects: Type.Array(
      Type.Object(
        {
          op: Type.Union([Type.Literal('write'), Type.Literal('delete')]),
          kind: Type.String({ description: `the object's kind: ${KINDS.join(', ')}` }),
          id: Type.String(),
          tenant: Type.Optional(
            Type.String({
              description:
                'the tenant it belongs to (missing: no tenant, or a deletion from before weft noted it)',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'Change' },
);

/** GET /v1/changes: the intent's history and a way to follow it (docs/API.md, "Changes"). */
export const changeRoutes: FastifyPluginAsyncTypebox<{ intents: IntentService }> = async (app, opts) => {
  app.get(
    '/changes',
    {
      schema: {
        tags: ['batch'],
        summary: 'What changed in the intent, when and by whom; long-poll to follow it',
        description,
        querystring: Type.Object(
          {
            since: Type.Integer({ minimum: 0, default: 0, description: 'changes after this revision' }),
            limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
            wait: Type.Optional(
              Type.String({ description: 'wait this long for a change: 500ms, 30s (max 60s)' }),
            ),
            kind: Type.Optional(
              Type.String({ description: `only changes of this kind's objects: ${KINDS.join(', ')}` }),
            ),
            id: Type.Optional(
              Type.String({ minLength: 1, description: 'with kind: only changes of this object' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              revision: Type.Integer({ description: "the intent's revision when answered" }),
              changes: Type.Array(Change),
              next: Type.Integer({ description: 'ask again with since=next for what follows' }),
            },
            { additionalProperties: false },
          ),
          ...errorResponses(400, 401, 410, 503),
        },
      },
    },
    async (req, reply) => {
      const { since, limit, kind, id } = req.query;
      if (kind !== undefined && !(KINDS as readonly string[]).includes(kind))
        throw new ApiError('invalid', `query parameter 'kind' must be one of ${KINDS.join(', ')}`, 'kind');
      if (id !== undefined && kind === undefined)
        throw new ApiError('invalid', `query parameter 'id' needs 'kind' (e.g. kind=endpoint&id=vm1)`, 'id');
      const waitMs = parseLongPoll(req.query.wait);
      const tenantId = tenantScope(req.principal);
      const answer = await whileOpen(reply.raw, (signal) =>
        opts.intents.history({
          since,
          limit,
          waitMs,
          signal,
          ...(kind === undefined ? {} : { kind: kind as Kind }),
          ...(id === undefined ? {} : { id }),
          ...(tenantId === undefined ? {} : { tenantId }),
        }),
      );
      req.log.debug({ since, kind, id, changes: answer.changes.length, next: answer.next }, 'changes read');
      return answer;
    },
  );
};
