import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

/**
 * Per-minute budgets of a tenant (all its tokens together) for the API calls that make the controller ask every switch
 * something: reading counters (a FLOW stats request to each switch holding the object's flows),
 * flushing a router's neighbours (a delete on every switch) and an endpoint's connections. One tenant looping on them would load
 * the switches and the controller every other tenant shares; the operator's admin tokens are not
 * limited. 0 turns a budget off.
 */
export interface TenantRateLimits {
  /** Endpoint, ACL and router counters, each route its own budget. */
  counters: number;
  /** Flushes of a router's neighbour table, and of an endpoint's connections, each route its own budget. */
  flushes: number;
}

export const DEFAULT_TENANT_RATE_LIMITS: TenantRateLimits = { counters: 120, flushes: 12 };

const MINUTE_MS = 60_000;

/** Registers the limiter; routes opt in with `tenantBudget`. Keyed by tenant, checked after authentication. */
export async function registerRateLimit(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    hook: 'preHandler',
    // Per tenant, not per token: a tenant given several tokens shares one budget.
    keyGenerator: (req) => (req.principal?.kind === 'tenant' ? `tenant:${req.principal.tenantId}` : req.ip),
    allowList: (req) => req.principal?.kind === 'admin',
    errorResponseBuilder: (req: FastifyRequest, ctx) =>
      new ApiError(
        'rate_limited',
        `this tenant may make at most ${ctx.max} ${what(req)} a minute; try again in ${Math.max(1, Math.ceil(ctx.ttl / 1000))} s`,
        undefined,
        { limit: ctx.max, retryAfterSeconds: Math.max(1, Math.ceil(ctx.ttl / 1000)) },
      ),
  });
}

/** What the budget a request used covers, for the message. */
const what = (req: FastifyRequest): string =>
  req.routeOptions.url?.endsWith('/neighbors')
    ? 'neighbour flushes'
    : req.routeOptions.url?.endsWith('/connections')
      ? 'connection flushes'
      : 'counter reads';

/** A route's per-minute budget for each tenant token, or none when it is 0. */
export function tenantBudget(perMinute: number): { rateLimit?: { max: number; timeWindow: number } } {
  return perMinute > 0 ? { rateLimit: { max: perMinute, timeWindow: MINUTE_MS } } : {};
}
