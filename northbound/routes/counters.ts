import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DropsAnswer, ObjectCounters, RouterCounters } from '../counters-schema.js';
import { ApiError, errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { requireAdmin } from '../plugins/auth.js';
import { tenantBudget } from '../plugins/rate-limit.js';
import { tenantScope } from '../principal.js';
import type { StatusProvider } from '../status.js';

export interface CounterRouteOptions {
  intents: IntentService;
  status: StatusProvider;
  /** A tenant token's counter reads a minute, for each of endpoint, ACL and router counters (0: no limit). */
  perMinute?: number;
}

const unavailable = () =>
  new ApiError(
    'unavailable',
    'counters are read from the switches by the running controller (weft serve); this instance has none',
  );

/**
 * Counters of what really crossed the switches, read from OVS when asked (nothing is polled):
 * an endpoint's, a network ACL's or a router's flows across every switch, by cookie (and an
 * endpoint's port and rate-limit meters on its hypervisor), and the packets each switch dropped
 * for lack of a flow. Where `weft trace` says what would happen to a
 * packet, these say what did happen to the real ones. Endpoint, ACL and router counters follow
 * the tenant rules of their object; the drops of the whole fabric are admin only.
 */
export const counterRoutes: FastifyPluginAsyncTypebox<CounterRouteOptions> = async (app, opts) => {
  const params = Type.Object({ id: Type.String() });
  const budget = tenantBudget(opts.perMinute ?? 0);
  const scoped = (req: { principal: Parameters<typeof tenantScope>[0] }) => {
    const scope = tenantScope(req.principal);
    return scope === undefined ? {} : { tenantScope: scope };
  };
  app.get(
    '/endpoints/:id/counters',
    {
      config: budget,
      // No HEAD twin: it would run the same reads with a budget of its own.
      exposeHeadRoute: false,
      schema: {
        tags: ['status'],
        summary:
          "An endpoint's traffic: its VM port's counters, what its rate limits' meters passed and dropped, and its flows' packets on every switch",
        params,
        response: { 200: ObjectCounters, ...errorResponses(401, 404, 429, 503) },
      },
    },
    async (req) => {
      opts.intents.get('endpoint', req.params.id, scoped(req)); // 404 naming it (or another tenant's)
      if (!opts.status.counters) throw unavailable();
      return opts.status.counters.endpoint(req.params.id);
    },
  );
  app.get(
    '/acls/:id/counters',
    {
      config: budget,
      // No HEAD twin: it would run the same reads with a budget of its own.
      exposeHeadRoute: false,
      schema: {
        tags: ['status'],
        summary: 'How many packets a network ACL matched, on every switch',
        params,
        response: { 200: ObjectCounters, ...errorResponses(401, 404, 429, 503) },
      },
    },
    async (req) => {
      opts.intents.get('networkAcl', req.params.id, scoped(req));
      if (!opts.status.counters) throw unavailable();
      return opts.status.counters.acl(req.params.id);
    },
  );
  app.get(
    '/routers/:id/counters',
    {
      config: budget,
      // No HEAD twin: it would run the same reads with a budget of its own.
      exposeHeadRoute: false,
      schema: {
        tags: ['status'],
        summary:
          'What a router did on every switch: packets routed, pings and ARP answered, dropped for no route',
        params,
        response: { 200: RouterCounters, ...errorResponses(401, 404, 429, 503) },
      },
    },
    async (req) => {
      opts.intents.get('router', req.params.id, scoped(req));
      if (!opts.status.counters) throw unavailable();
      return opts.status.counters.router(req.params.id);
    },
  );
  app.get(
    '/drops',
    {
      preHandler: requireAdmin,
      schema: {
        tags: ['status'],
        summary:
          'Packets each switch dropped for lack of a flow, by table and why (port security, default deny, ...)',
        response: { 200: DropsAnswer, ...errorResponses(401, 403, 503) },
      },
    },
    async () => {
      if (!opts.status.counters) throw unavailable();
      return opts.status.counters.drops();
    },
  );
};
