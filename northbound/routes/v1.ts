import type { FastifyPluginAsync } from 'fastify';
import type { SgLogBook } from '../../controller/sg-log/sg-log-book.js';
import type { IntentService } from '../intents.js';
import type { TenantRateLimits } from '../plugins/rate-limit.js';
import type { Readiness, StatusProvider } from '../status.js';
import { registerBatch } from './batch.js';
import { changeRoutes } from './changes.js';
import { connectionRoutes } from './connections.js';
import { counterRoutes } from './counters.js';
import { registerCrud } from './crud.js';
import { exportRoutes } from './export.js';
import { neighborRoutes } from './neighbors.js';
import { resourceDefs } from './resources.js';
import { sgLogRoutes } from './sg-log.js';
import { statusRoutes } from './status.js';
import { tokenRoutes } from './tokens.js';
import { traceRoutes } from './trace.js';

export interface V1Options {
  intents: IntentService;
  status: StatusProvider;
  readiness: Readiness;
  limits: TenantRateLimits;
  /** The security groups' log (GET /v1/security-group-log); absent: empty pages. */
  securityLog?: SgLogBook | undefined;
}

/**
 * Everything under /v1: the intent resources, batches of them, its export and history, tokens, status, traces, counters,
 * routers' neighbour tables, endpoints' connections and the security groups' log.
 */
export const v1Routes: FastifyPluginAsync<V1Options> = async (
  app,
  { intents, status, readiness, limits, securityLog },
) => {
  for (const def of resourceDefs(status, intents)) registerCrud(app, def, intents);
  registerBatch(app, intents);
  await app.register(exportRoutes, { intents });
  await app.register(changeRoutes, { intents });
  await app.register(tokenRoutes, { intents });
  await app.register(statusRoutes, { intents, status, readiness });
  await app.register(traceRoutes, { intents, status });
  await app.register(counterRoutes, { intents, status, perMinute: limits.counters });
  await app.register(neighborRoutes, { intents, status, flushesPerMinute: limits.flushes });
  await app.register(connectionRoutes, { intents, status, flushesPerMinute: limits.flushes });
  await app.register(sgLogRoutes, { book: securityLog });
};
