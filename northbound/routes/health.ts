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
        summary:
          'Readiness: store reachable and leader known (503 otherwise); with ?leader=1 also 503 unless this instance leads (keepalived health check)',
        querystring: Type.Object({
          leader: Type.Optional(
            Type.Union([Type.Literal('1'), Type.Literal('true'), Type.Literal('0'), Type.Literal('false')], {
              description: '1: ready only on the HA leader',
            }),
          ),
        }),
        response: { 200: ReadyBody, 503: ReadyBody },
      },
    },
    async (req, reply) => {
      let checks: Awaited<ReturnType<Readiness>>;
      try {
        checks = await readiness();
      } catch (err) {
        checks = [{ name: 'readiness', ok: false, detail: (err as Error).message }];
      }
      let ready = checks.every((c) => c.ok);
      const wantLeader = req.query.leader === '1' || req.query.leader === 'true';
      if (
        wantLeader &&
        !checks.some((c) => c.name === 'leader' && (c as { leader?: boolean }).leader === true)
      ) {
        ready = false;
        checks = [...checks, { name: 'is-leader', ok: false, detail: 'this instance is not the HA leader' }];
      }
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
