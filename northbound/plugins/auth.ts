import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors.js';
import type { Principal } from '../principal.js';

export interface AuthOptions {
  /** Admin tokens from config, in clear; only their SHA-256 digests are kept. */
  adminTokens: readonly string[];
  /** Resolves a tenant-scoped token (the store holds it hashed); undefined when unknown or revoked. */
  authenticate(token: string): Promise<Principal | undefined>;
  /** URL prefixes served without a token besides routes flagged `config.public` (swagger-ui assets). */
  publicPrefixes?: readonly string[];
}

const digest = (token: string): Buffer => createHash('sha256').update(token).digest();

/** Bearer token syntax (RFC 6750 b64token), bounded so a huge header is refused cheaply. */
const bearerPattern = /^Bearer ([A-Za-z0-9\-._~+/]{1,512}=*)$/;

const bearerToken = (req: FastifyRequest): string => {
  const header = req.headers.authorization;
  if (header === undefined || header === '') {
    throw new ApiError('unauthorized', 'missing bearer token (Authorization: Bearer <token>)');
  }
  const match = bearerPattern.exec(header);
  if (!match) throw new ApiError('unauthorized', 'malformed Authorization header, expected "Bearer <token>"');
  return match[1]!;
};

const authPlugin: FastifyPluginAsync<AuthOptions> = async (app, opts) => {
  // Digests compared in constant time: the length is fixed so timingSafeEqual never throws.
  const adminDigests = opts.adminTokens.map((t, i) => ({ digest: digest(t), tokenId: `admin-${i}` }));
  const prefixes = opts.publicPrefixes ?? [];

  app.decorateRequest('principal', null as never);

  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config?.public === true) return;
    if (prefixes.some((p) => req.url === p || req.url.startsWith(`${p}/`))) return;
    const token = bearerToken(req);
    const d = digest(token);
    const admin = adminDigests.find((a) => timingSafeEqual(a.digest, d));
    if (admin) {
      req.principal = { kind: 'admin', tokenId: admin.tokenId };
      return;
    }
    const principal = await opts.authenticate(token);
    if (!principal) throw new ApiError('unauthorized', 'unknown or revoked token');
    req.principal = principal;
  });
};

export default fp(authPlugin, { name: 'weft-auth', fastify: '5.x' });

/** Route guard: admin tokens only (tenant tokens get 403). */
export const requireAdmin = async (req: FastifyRequest): Promise<void> => {
  if (req.principal.kind !== 'admin') {
    throw new ApiError('forbidden', 'this operation needs an admin token');
  }
};
