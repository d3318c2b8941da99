import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Histogram, type Registry } from 'prom-client';

export interface MetricsOptions {
  /** The controller's registry; other parts register their gauges on the same one. */
  registry: Registry;
}

/** Returns the metric already on the registry (a second buildApp on one registry) or registers it. */
const once = <T>(registry: Registry, name: string, make: () => T): T =>
  (registry.getSingleMetric(name) as T | undefined) ?? make();

const metricsPlugin: FastifyPluginAsync<MetricsOptions> = async (app, { registry }) => {
  const requests = once(
    registry,
    'weft_http_requests_total',
    () =>
      new Counter({
        name: 'weft_http_requests_total',
        help: 'REST requests answered, by method, route template and status code',
        labelNames: ['method', 'route', 'status'] as const,
        registers: [registry],
      }),
  );
  const duration = once(
    registry,
    'weft_http_request_duration_seconds',
    () =>
      new Histogram({
        name: 'weft_http_request_duration_seconds',
        help: 'REST request latency from arrival to response, by method and route template',
        labelNames: ['method', 'route'] as const,
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
  );

  app.addHook('onResponse', async (req, reply) => {
    // The route template, never the raw URL, keeps label cardinality bounded.
    const route = req.routeOptions.url ?? 'unmatched';
    requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    duration.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });
};

export default fp(metricsPlugin, { name: 'weft-metrics', fastify: '5.x' });
