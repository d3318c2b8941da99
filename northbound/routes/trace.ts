import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import { ApiError, errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { requireAdmin } from '../plugins/auth.js';
import type { StatusProvider } from '../status.js';
import { BindingTraceQuery, TraceAnswer, TraceQuery } from '../trace-schema.js';

export interface TraceRouteOptions {
  intents: IntentService;
  status: StatusProvider;
}

/** The probe's fields both traces take from their query (the protocol is each one's own). */
function probeOf(q: Static<typeof TraceQuery>) {
  return {
    to: q.to,
    ...(q.port === undefined ? {} : { port: q.port }),
    ...(q.srcPort === undefined ? {} : { srcPort: q.srcPort }),
    ...(q.dstMac === undefined ? {} : { dstMac: q.dstMac }),
    ...(q.ttl === undefined ? {} : { ttl: q.ttl }),
    established: q.state === 'established',
  };
}

/**
 * GET /v1/endpoints/{id}/trace: a probe from an endpoint followed through the flows weft puts on
 * the switches, hypervisor to hypervisor, with a verdict that names where and why it stops (what
 * `ovn-trace` is to OVN). Computed from the desired state: nothing is sent. Admin only: the
 * answer names chassis and other endpoints' flows.
 */
export const traceRoutes: FastifyPluginAsyncTypebox<TraceRouteOptions> = async (app, opts) => {
  app.get(
    '/endpoints/:id/trace',
    {
      preHandler: requireAdmin,
      schema: {
        tags: ['status'],
        summary:
          "Follow a packet from an endpoint through weft's flows across hypervisors: delivered, or dropped where and why",
        params: Type.Object({ id: Type.String() }),
        querystring: TraceQuery,
        response: { 200: TraceAnswer, ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req) => {
      opts.intents.get('endpoint', req.params.id); // 404 naming it when there is no such endpoint
      if (!opts.status.trace) {
        throw new ApiError(
          'unavailable',
          'tracing needs the running engine (weft serve); this instance has none',
        );
      }
      const q = req.query;
      return opts.status.trace(req.params.id, { ...probeOf(q), protocol: q.protocol ?? 'icmp' });
    },
  );
  app.get(
    '/vlan-bindings/:id/trace',
    {
      preHandler: requireAdmin,
      schema: {
        tags: ['status'],
        summary:
          "Follow a packet from a host behind a VLAN binding (a physical server, the upstream router) through weft's flows: to an endpoint, a floating IP, a port forward or through a router; or its ARP request: who answers it",
        params: Type.Object({ id: Type.String() }),
        querystring: BindingTraceQuery,
        response: { 200: TraceAnswer, ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req) => {
      opts.intents.get('vlanBinding', req.params.id); // 404 naming it when there is no such binding
      if (!opts.status.traceFromBinding) {
        throw new ApiError(
          'unavailable',
          'tracing needs the running engine (weft serve); this instance has none',
        );
      }
      const q = req.query;
      return opts.status.traceFromBinding(req.params.id, {
        ...probeOf(q),
        protocol: q.protocol ?? 'icmp',
        from: q.from,
        ...(q.fromMac === undefined ? {} : { fromMac: q.fromMac }),
      });
    },
  );
};
