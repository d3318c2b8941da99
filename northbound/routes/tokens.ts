import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiToken } from '../../controller/intent/model.js';
import { ApiTokenCreateSchema, ApiTokenSchema } from '../../controller/intent/model.js';
import { errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { requireAdmin } from '../plugins/auth.js';
import { DeletedBody, IdParams, PageQuery, pageOf } from '../schemas.js';
import { WaitQuery } from '../write-options.js';
import { checkWaitQuery, finishWrite } from './crud.js';

/** A token as the API shows it: never the hash, and the secret only in the create answer. */
const TokenOut = Type.Omit(ApiTokenSchema, ['hash'], { title: 'Token' });
const CreatedTokenOut = Type.Object(
  {
    ...TokenOut.properties,
    token: Type.String({ description: 'the bearer secret: shown once, only the hash is stored' }),
  },
  { title: 'CreatedToken' },
);

const withoutHash = ({ hash: _, ...rest }: ApiToken) => rest;

export interface TokenRouteOptions {
  intents: IntentService;
}

/** /v1/tokens: admins mint tenant-scoped (or admin) bearer tokens. Every route is admin only. */
export const tokenRoutes: FastifyPluginAsyncTypebox<TokenRouteOptions> = async (app, { intents }) => {
  app.addHook('preHandler', requireAdmin);

  app.post(
    '/tokens',
    {
      preHandler: checkWaitQuery,
      schema: {
        tags: ['tokens'],
        summary: 'Create a token: tenantId scopes it to one tenant, null makes an admin token',
        querystring: Type.Object(WaitQuery),
        body: { ...ApiTokenCreateSchema, title: 'TokenCreate' },
        response: { 201: CreatedTokenOut, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (req, reply) => {
      const created = await intents.createToken(req.body.tenantId, req.body.name, {
        requestId: req.id,
        actor: req.principal.tokenId,
      });
      reply.code(201).header('location', `/v1/tokens/${encodeURIComponent(created.record.id)}`);
      await finishWrite(intents, req, reply, created.record.revision, created.record.revision);
      return { ...withoutHash(created.record), token: created.token };
    },
  );

  app.get(
    '/tokens',
    {
      schema: {
        tags: ['tokens'],
        summary: 'List tokens (never their secrets)',
        querystring: Type.Object({ ...PageQuery, tenant: Type.Optional(Type.String({ maxLength: 64 })) }),
        response: { 200: pageOf(TokenOut, 'Token page'), ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const q = req.query;
      const page = intents.list('token', {
        limit: q.limit,
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        ...(q.tenant === undefined ? {} : { tenantId: q.tenant }),
      });
      const revision = intents.revision();
      reply.header('x-weft-revision', String(revision));
      return {
        items: page.items.map(withoutHash),
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
        revision,
      };
    },
  );

  app.get(
    '/tokens/:id',
    {
      schema: {
        tags: ['tokens'],
        summary: 'Show one token',
        params: IdParams,
        response: { 200: TokenOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const token = intents.get('token', req.params.id);
      reply.header('etag', `"${token.revision}"`);
      return withoutHash(token);
    },
  );

  app.delete(
    '/tokens/:id',
    {
      preHandler: checkWaitQuery,
      schema: {
        tags: ['tokens'],
        summary: 'Revoke a token (effective immediately)',
        params: IdParams,
        querystring: Type.Object(WaitQuery),
        response: { 200: DeletedBody, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (req, reply) => {
      const result = await intents.delete('token', req.params.id, {
        requestId: req.id,
        actor: req.principal.tokenId,
      });
      await finishWrite(intents, req, reply, result.revision);
      return { id: req.params.id, deleted: true as const, revision: result.revision };
    },
  );
};
