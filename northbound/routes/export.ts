import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { tenantScope } from '../principal.js';
import { BatchOpSchema } from '../schemas.js';

const description = [
  'The intent as the batch that recreates it, read at one revision (`x-weft-revision`): every object a',
  '`replace` of its id with what PUT takes, in an order `POST /v1/batch` accepts. Posting the answer',
  'to /v1/batch of an empty controller rebuilds the same objects (ids, VNIs, MACs, addresses); posting',
  'it back to this one changes nothing. Tokens are never exported. `?tenant=` (admin): one tenant, its',
  'objects and the VLAN bindings of its networks (not the chassis they name). A tenant token exports',
  'what it may write: its objects, not the tenant itself.',
].join(' ');

/** Not BatchRequest: an intent with nothing in scope exports no op (a batch needs one). */
const ExportResponse = Type.Object(
  { ops: Type.Array(BatchOpSchema) },
  { additionalProperties: false, title: 'Export' },
);

/** GET /v1/export: backups, moving a tenant, GitOps (docs/API.md, "Export"). */
export const exportRoutes: FastifyPluginAsyncTypebox<{ intents: IntentService }> = async (app, opts) => {
  app.get(
    '/export',
    {
      schema: {
        tags: ['batch'],
        summary: 'The intent (or one tenant) as a batch that recreates it',
        description,
        querystring: Type.Object(
          { tenant: Type.Optional(Type.String({ minLength: 1, description: 'one tenant (admin)' })) },
          { additionalProperties: false },
        ),
        response: { 200: ExportResponse, ...errorResponses(400, 401, 404) },
      },
    },
    async (req, reply) => {
      const scope = tenantScope(req.principal);
      const { revision, ops } = opts.intents.export({
        ...(scope === undefined ? {} : { tenantScope: scope }),
        ...(req.query.tenant === undefined ? {} : { tenant: req.query.tenant }),
      });
      req.log.info({ revision, ops: ops.length, tenant: req.query.tenant ?? scope }, 'intent exported');
      reply.header('x-weft-revision', String(revision));
      return { ops };
    },
  );
};
