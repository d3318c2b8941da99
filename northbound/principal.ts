/** Who is calling: an operator with an admin token, or a tenant-scoped token. */
export type Principal =
  | { kind: 'admin'; tokenId: string }
  | { kind: 'tenant'; tenantId: string; tokenId: string };

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth plugin on every non-public route; never undefined inside a handler. */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Routes reachable without a token (health, metrics, OpenAPI). */
    public?: boolean;
  }
}

/** The tenant a principal is confined to, or undefined for admins (who see all tenants). */
export const tenantScope = (p: Principal): string | undefined =>
  p.kind === 'tenant' ? p.tenantId : undefined;
