import type { FastifyInstance } from 'fastify';
import fastifySwagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { OpenApiPorts } from './ports.ts';

/**
 * The OpenAPI 3.1 document of every route, generated from the schemas the routes declare, and a reference
 * page over it, where better-auth's openAPI plugin serves them: `GET <basePath>/open-api/generate-schema`
 * and `GET <basePath>/reference`. The reference page's script is served from this process (no CDN).
 */
export async function registerOpenApi(app: FastifyInstance, ctx: OpenApiPorts): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Portcullis',
        description: 'Account and organization access: the better-auth 1.7 HTTP API, event-sourced.',
        version: '1.0.0',
      },
      servers: [{ url: ctx.config.baseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'The session token (or its signed form)' },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: `${ctx.config.cookiePrefix}.session_token` },
          serverKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'AUTH_SERVER_API_KEY, for server calls' },
        },
      },
    },
    transform: createJsonSchemaTransform({ skipList: [] }),
    // The schemas routes refer to by id (`ErrorAnswer`, `AuditEvent`), in the document's components.
    transformObject: createJsonSchemaTransformObject({}),
  });
}

/** The document and the reference page, under the auth base path. */
export function openApiRoutes(ctx: OpenApiPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get('/open-api/generate-schema', { schema: { hide: true } }, (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return app.swagger();
    });
    await app.register(swaggerUi, {
      routePrefix: '/reference',
      // The page at `/reference` (no slash) links its assets absolutely, from the prefix it is told.
      indexPrefix: ctx.config.basePath,
      uiConfig: { url: `${ctx.config.basePath}/open-api/generate-schema`, deepLinking: true },
      staticCSP: true,
    });
  };
}
