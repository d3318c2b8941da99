import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Registry } from 'prom-client';
import type { Readiness } from '../status.js';

export interface HealthOptions {
  readiness: Readiness;
  registry: Registry;
}

const ReadyBody = Type.Object({
  ready: Type.Boolean(),
  checks: Type.Array(
    Type.Object({ name: Type.String(), ok: Type.Boolean(), detail: Type.Optional(Type.String()) }),
  ),
});

/** Unauthenticated probes: liveness, readiness and the Prometheus scrape. */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (
  app,
  { readiness, registry },
) => {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        tags: ['health'],
        security: [],
        summary: 'Liveness: the process answers',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        tags: ['health'],
        security: [],
        summary: 'Readiness: store reachable and leader known (503 otherwise)',
        response: { 200: ReadyBody, 503: ReadyBody },
      },
    },
    async (_req, reply) => {
      let checks: Awaited<ReturnType<Readiness>>;
      try {
        checks = await readiness();
      } catch (err) {
        checks = [{ name: 'readiness', ok: false, detail: (err as Error).message }];
      }
      const ready = checks.every((c) => c.ok);
      return reply.code(ready ? 200 : 503).send({ ready, checks });
    },
  );

  app.get(
    '/metrics',
    {
      config: { public: true },
      schema: {
        tags: ['health'],
        security: [],
        summary: 'Prometheus metrics (text exposition format)',
        produces: ['text/plain'],
        response: { 200: Type.String() },
      },
    },
    async (_req, reply) => {
      const text = await registry.metrics();
      return reply.type(registry.contentType).send(text);
    },
  );
};
