import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { parseIp } from '../../controller/intent/net.js';
import { formatIpv4 } from '../../southbound/openflow/codec/values.js';
import { ApiError, errorResponses } from '../errors.js';
import type { IntentService } from '../intents.js';
import { tenantBudget } from '../plugins/rate-limit.js';
import { tenantScope } from '../principal.js';
import { RouterNeighbors, RouterNeighborsFlushed, type StatusProvider } from '../status.js';

export interface NeighborRouteOptions {
  intents: IntentService;
  status: StatusProvider;
  /** A tenant token's neighbour flushes a minute (0: no limit). */
  flushesPerMinute?: number;
}

/**
 * GET /v1/routers/{id}/neighbors: the router's neighbour table, the addresses on its networks that
 * no endpoint holds as its own (hosts and physical routers behind a VLAN binding, VIPs endpoints
 * are allowed) and that it resolved by ARP or neighbour discovery: state, MAC, the binding or endpoint it sits behind,
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
          "A router's neighbour table: addresses behind VLAN bindings and VIPs it resolved by ARP or neighbour discovery, their MAC and place",
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

  /**
   * DELETE /v1/routers/{id}/neighbors[?ip=ADDRESS]: forgets the router's neighbours (only that
   * address's), as `ip neigh flush` does; their learned flows leave the switches at once and the
   * next packet to one resolves it again. Only the leader holds the table: elsewhere 503 naming it.
   */
  app.delete(
    '/routers/:id/neighbors',
    {
      config: tenantBudget(opts.flushesPerMinute ?? 0),
      schema: {
        tags: ['status'],
        summary: "Flush a router's neighbour table (or one address of it): the next packet resolves it again",
        params: Type.Object({ id: Type.String() }),
        // Closed: a misspelt parameter (?addr=) must not turn into a flush of the whole table.
        querystring: Type.Object(
          {
            ip: Type.Optional(
              Type.String({ maxLength: 45, description: 'only this address (IPv4 or IPv6)' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: RouterNeighborsFlushed, ...errorResponses(400, 401, 404, 429, 503) },
      },
    },
    async (req) => {
      const scope = tenantScope(req.principal);
      opts.intents.get('router', req.params.id, scope === undefined ? {} : { tenantScope: scope });
      const given = req.query.ip;
      const ip = given === undefined ? undefined : neighborAddress(given);
      if (given !== undefined && ip === undefined)
        throw new ApiError('invalid', `'${given}' is not an IPv4 or IPv6 address`, 'ip');
      const c = opts.status.controller();
      if (!opts.status.flushNeighbors || c.role !== 'leader') {
        const who = c.leaderId ? ` (the leader is ${c.leaderId})` : '';
        throw new ApiError(
          'unavailable',
          opts.status.flushNeighbors
            ? `this controller is the ${c.role === 'standby' ? 'standby' : 'one unsure whether it leads'}: only the leader keeps the neighbour table${who}; send it to the controllers' VIP`
            : 'the neighbour table is kept by the running controller (weft serve); this instance has none',
        );
      }
      const answer = opts.status.flushNeighbors(req.params.id, ip);
      if (!answer)
        throw new ApiError('not_found', `router '${req.params.id}' not found`, undefined, {
          kind: 'router',
          id: req.params.id,
        });
      return answer;
    },
  );
};

/** The table's key of an address: canonical text; an IPv4-mapped IPv6 address as its IPv4 one. */
function neighborAddress(text: string): string | undefined {
  const a = parseIp(text);
  if (a?.family === 6 && a.value >> 32n === 0xffffn)
    return parseIp(formatIpv4(Number(a.value & 0xffffffffn)))?.text;
  return a?.text;
}
