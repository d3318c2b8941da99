import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiError, errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { requireAdmin } from '../plugins/auth.js';
import {
  ControllerStatus,
  OffloadStatus,
  type Readiness,
  type StatusProvider,
  SwitchStatus,
} from '../status.js';

export interface StatusRouteOptions {
  intents: IntentService;
  status: StatusProvider;
  readiness: Readiness;
}

/** The controller part, with the HA pair's facts when `--ha redis` runs. */
const ControllerWithHa = Type.Object(
  {
    ...ControllerStatus.properties,
    instanceId: Type.Optional(Type.String({ description: 'this instance of the HA pair (--instance-id)' })),
    term: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'our lease term while leading (the OpenFlow generation_id); 0 on the standby',
      }),
    ),
    leaderTerm: Type.Optional(
      Type.Integer({ minimum: 0, description: "the leader's term, as last read from Redis" }),
    ),
    mode: Type.Optional(Type.Union([Type.Literal('roles'), Type.Literal('vip')])),
  },
  { title: 'ControllerStatusHa', additionalProperties: false },
);

const StatusBody = Type.Object(
  { controller: ControllerWithHa, switches: Type.Array(SwitchStatus) },
  { title: 'Status' },
);

/**
 * /v1/status: the controller's role and store health, and every switch's session and applied
 * revision. Admin only (it names chassis); endpoint status is part of each endpoint object.
 */
export const statusRoutes: FastifyPluginAsyncTypebox<StatusRouteOptions> = async (app, opts) => {
  app.get(
    '/status',
    {
      preHandler: requireAdmin,
      schema: {
        tags: ['status'],
        summary:
          'Controller role, store health, and per-switch connection / role / applied revision / counts',
        response: { 200: StatusBody, ...errorResponses(401, 403) },
      },
    },
    async (_req, reply) => {
      const checks = await opts
        .readiness()
        .catch((err: Error) => [{ name: 'store', ok: false, detail: err.message }]);
      const store = checks.find((c) => c.name === 'store');
      const revision = opts.intents.revision();
      reply.header('x-weft-revision', String(revision));
      return {
        controller: {
          ...opts.status.controller(),
          storeHealthy: store?.ok ?? true,
          storeRevision: revision,
          ...(store?.detail === undefined ? {} : { storeDetail: store.detail }),
        },
        switches: opts.status.switches(),
      };
    },
  );

  app.get(
    '/chassis/:id/offload',
    {
      preHandler: requireAdmin,
      schema: {
        tags: ['status'],
        summary: "The chassis's flows that ASAP2 / TC flower would leave in software, and why",
        params: Type.Object({ id: Type.String() }),
        response: { 200: OffloadStatus, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      opts.intents.get('chassis', req.params.id); // 404 naming it when there is no such chassis
      const report = opts.status.offload?.(req.params.id);
      if (!report) {
        throw new ApiError(
          'not_found',
          `chassis '${req.params.id}' has no desired state yet (it is computed once the controller has started and the chassis's facts are known)`,
          undefined,
          { kind: 'chassis', id: req.params.id },
        );
      }
      return report;
    },
  );
};
