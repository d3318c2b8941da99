import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { errorCatalogue } from '../errors.js';

export interface OpenApiOptions {
  version: string;
}

const description = [
  'Intent API of the weft SDN controller. Every request but the health probes and these docs needs',
  '`Authorization: Bearer <token>`. Errors share one shape `{error:{code,message,field?,details?,requestId}}`;',
  'the codes:',
  '',
  ...Object.entries(errorCatalogue).map(([code, e]) => `- \`${code}\` (${e.status}): ${e.meaning}`),
].join('\n');

/**
 * OpenAPI 3 document at /openapi.json (built from the route schemas) and swagger-ui at /docs.
 * Registered before the routes so @fastify/swagger sees every one of them.
 */
export const registerOpenApi = async (app: FastifyInstance, opts: OpenApiOptions): Promise<void> => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'weft', version: opts.version, description },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
      tags: [
        { name: 'health' },
        { name: 'tenants' },
        { name: 'networks' },
        { name: 'endpoints' },
        { name: 'security-groups' },
        { name: 'acls' },
        { name: 'chassis' },
        { name: 'vlan-bindings' },
        { name: 'routers' },
        { name: 'mirrors' },
        { name: 'batch' },
        { name: 'tokens' },
        { name: 'status' },
      ],
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP: true,
  });
  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async (_req, reply) =>
    reply.type('application/json').send(app.swagger()),
  );
};
