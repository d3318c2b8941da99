import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { SgLogBook } from '../controller/sg-log/sg-log-book.js';
import { toApiError } from './error-mapping.js';
import { ApiError, errorBody } from './errors.js';
import { type IntentService, principalOfStoredToken, translateIntentError } from './intents.js';
import authPlugin from './plugins/auth.js';
import metricsPlugin from './plugins/metrics.js';
import { registerOpenApi } from './plugins/openapi.js';
import {
  DEFAULT_TENANT_RATE_LIMITS,
  registerRateLimit,
  type TenantRateLimits,
} from './plugins/rate-limit.js';
import { requestIdOf } from './request-id.js';
import { healthRoutes } from './routes/health.js';
import { v1Routes } from './routes/v1.js';
import { emptyStatus, type Readiness, readinessWithin, type StatusProvider } from './status.js';

export interface AppDeps {
  intents: IntentService;
  logger: Logger;
  /** Admin bearer tokens from config (clear text; hashed on load). */
  adminTokens: readonly string[];
  /** Registry exposed at /metrics; the controller's other parts register their gauges on it. */
  metricsRegistry: Registry;
  /** Switch / endpoint / leadership facts for /v1/status; empty until the engine exists. */
  statusProvider?: StatusProvider;
  /** Checks for /readyz; defaults to the intent store's health. */
  readiness?: Readiness;
  /** How long /readyz and /v1/status wait for the readiness checks (default READINESS_TIMEOUT_MS). */
  readinessTimeoutMs?: number;
  /** Request body limit in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Version shown in the OpenAPI document. */
  version?: string;
  /** Per-minute budgets of tenant tokens for calls that ask every switch (default DEFAULT_TENANT_RATE_LIMITS). */
  tenantRateLimits?: TenantRateLimits;
  /**
   * The security groups' log the controller's PACKET_IN service fills (GET /v1/security-group-log);
   * without it (an API alone, tests) the route answers empty pages.
   */
  securityLog?: SgLogBook;
}

export type WeftApp = FastifyInstance;

/**
 * The REST northbound API as a fastify instance, ready for `inject()` in tests or `listen()` in
 * `weft serve`. Nothing here listens or opens files.
 */
export async function buildApp(deps: AppDeps): Promise<WeftApp> {
  const app = Fastify({
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    // One log line per request, written by our onResponse hook (fastify's default writes two).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: requestIdOf,
    bodyLimit: deps.bodyLimit ?? 1024 * 1024,
    ajv: {
      // Unknown body fields are refused (400 naming them) rather than silently dropped.
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const status = deps.statusProvider ?? emptyStatus;
  const readiness = readinessWithin(
    deps.readiness ?? defaultReadiness(deps.intents, deps.statusProvider),
    deps.readinessTimeoutMs,
  );

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    // Reads come from this controller's copy of the intent (routes add x-weft-revision): say so
    // when that copy may be behind (its store is unreachable), so a client does not take an old
    // answer (e.g. a 404 for an object another controller just created) for the truth.
    if (req.method === 'GET' && req.url.startsWith('/v1/')) {
      const stale = deps.intents.staleness();
      if (stale !== undefined) reply.header('x-weft-stale', stale);
    }
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      {
        method: req.method,
        route: req.routeOptions.url,
        url: req.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        principal: req.principal?.tokenId,
      },
      'request',
    );
  });

  app.setErrorHandler((err, req, reply) => {
    const apiError = toApiError(err, translateIntentError);
    // Bugs are errors; an unreachable store or an unconfirmed ?wait=applied is an operating condition.
    if (apiError.code === 'internal') req.log.error({ err }, 'request failed');
    else if (apiError.status >= 500)
      req.log.warn({ code: apiError.code, msg: apiError.message }, 'request not served');
    return reply.code(apiError.status).send(errorBody(apiError, req.id));
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new ApiError('not_found', `no route ${req.method} ${req.url.split('?')[0]}`);
    return reply.code(404).send(errorBody(e, req.id));
  });

  await app.register(metricsPlugin, { registry: deps.metricsRegistry });
  await registerOpenApi(app, { version: deps.version ?? '0.0.0' });
  await app.register(authPlugin, {
    adminTokens: deps.adminTokens,
    authenticate: async (token) => principalOfStoredToken(deps.intents, token),
    publicPrefixes: ['/docs'],
  });
  await registerRateLimit(app);
  await app.register(healthRoutes, { readiness, registry: deps.metricsRegistry });
  await app.register(v1Routes, {
    prefix: '/v1',
    intents: deps.intents,
    status,
    readiness,
    limits: deps.tenantRateLimits ?? DEFAULT_TENANT_RATE_LIMITS,
    securityLog: deps.securityLog,
  });
  return app;
}

/**
 * Without a readiness dep: the store answers (the service can read its revision) and, when a
 * status provider is wired, the leader is known.
 */
const defaultReadiness =
  (intents: IntentService, status: StatusProvider | undefined): Readiness =>
  async () => {
    const checks = [];
    try {
      checks.push({ name: 'store', ok: true, detail: `revision ${intents.revision()}` });
    } catch (err) {
      checks.push({ name: 'store', ok: false, detail: (err as Error).message });
    }
    if (status) {
      const role = status.controller().role;
      checks.push({ name: 'leader', ok: role !== 'unknown', detail: `this controller is ${role}` });
    }
    return checks;
  };
