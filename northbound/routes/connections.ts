import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiError, errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { tenantBudget } from '../plugins/rate-limit.js';
import { tenantScope } from '../principal.js';
import { EndpointConnectionsFlushed, type StatusProvider } from '../status.js';

export interface ConnectionRouteOptions {
  intents: IntentService;
  status: StatusProvider;
  /** A tenant's flushes a minute (0: no limit). */
  flushesPerMinute?: number;
}

/**
 * DELETE /v1/endpoints/{id}/connections: the endpoint's hypervisor forgets its connections, as
 * `conntrack -D` would. Security-group rule edits keep established connections (docs/API.md);
 * this is how an operator or tenant ends them now, after tightening a rule. Only the leader talks
 * to the switches: elsewhere 503 naming it.
 */
export const connectionRoutes: FastifyPluginAsyncTypebox<ConnectionRouteOptions> = async (app, opts) => {
  app.delete(
    '/endpoints/:id/connections',
    {
      config: tenantBudget(opts.flushesPerMinute ?? 0),
      schema: {
        tags: ['status'],
        summary:
          "Forget an endpoint's connections (its conntrack zone): established ones meet its security groups' rules again as new",
        params: Type.Object({ id: Type.String() }),
        // Closed: nothing to ask for, and a parameter meant for something else must not pass silently.
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: EndpointConnectionsFlushed, ...errorResponses(400, 401, 404, 409, 429, 503) },
      },
    },
    async (req) => {
      const scope = tenantScope(req.principal);
      opts.intents.get('endpoint', req.params.id, scope === undefined ? {} : { tenantScope: scope });
      const c = opts.status.controller();
      if (!opts.status.flushConnections || c.role !== 'leader') {
        const who = c.leaderId ? ` (the leader is ${c.leaderId})` : '';
        throw new ApiError(
          'unavailable',
          opts.status.flushConnections
            ? `this controller is the ${c.role === 'standby' ? 'standby' : 'one unsure whether it leads'}: only the leader talks to the switches${who}; send it to the controllers' VIP`
            : 'connections are flushed on the switches by the running controller (weft serve); this instance has none',
        );
      }
      const answer = await opts.status.flushConnections(req.params.id);
      // An action on the network, not only a read: logged with the request id.
      req.log.info(
        {
          endpointId: answer.endpointId,
          chassis: answer.chassis,
          zone: answer.zone,
          dpids: answer.datapathIds,
        },
        "endpoint's connections flushed",
      );
      return answer;
    },
  );
};
