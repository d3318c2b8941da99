import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiError, errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { tenantScope } from '../principal.js';
import { RouterNeighbors, type StatusProvider } from '../status.js';

export interface NeighborRouteOptions {
  intents: IntentService;
  status: StatusProvider;
}

/**
 * GET /v1/routers/{id}/neighbors: the router's neighbour table, the addresses on its networks that
 * no endpoint holds as its own (hosts and physical routers behind a VLAN binding, VIPs endpoints
 * are allowed) and that it resolved by ARP: state, MAC, the binding or endpoint it sits behind,
 * the hypervisors holding its flows. Read from the
 * leader's memory; a standby answers with an empty list and says so (`role`). Follows the tenant
 * rules of the router: a tenant token reads its own routers, another tenant's is 404.
 */
export const neighborRoutes: FastifyPluginAsyncTypebox<NeighborRouteOptions> = async (app, opts) => {
  app.get(
    '/routers/:id/neighbors',
    {
      schema: {
        tags: ['status'],
        summary:
          "A router's neighbour table: addresses behind VLAN bindings and VIPs it resolved by ARP, their MAC and place",
        params: Type.Object({ id: Type.String() }),
        response: { 200: RouterNeighbors, ...errorResponses(401, 404, 503) },
      },
    },
    async (req) => {
      const scope = tenantScope(req.principal);
      // 404 naming it when there is no such router (or it is another tenant's).
      opts.intents.get('router', req.params.id, scope === undefined ? {} : { tenantScope: scope });
      if (!opts.status.neighbors) {
        throw new ApiError(
          'unavailable',
          'the neighbour table is kept by the running controller (weft serve); this instance has none',
        );
      }
      const answer = opts.status.neighbors(req.params.id);
      if (!answer) {
        // Deleted in between.
        throw new ApiError('not_found', `router '${req.params.id}' not found`, undefined, {
          kind: 'router',
          id: req.params.id,
        });
      }
      return answer;
    },
  );
};
