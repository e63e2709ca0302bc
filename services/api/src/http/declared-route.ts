import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { z } from 'zod';
import { errorAnswerSchema, type Endpoint } from '@portcullis/contracts';

type Parsed<S> = S extends z.ZodType ? z.output<S> : unknown;

/**
 * The request of a declared endpoint, typed from its schemas as fastify's zod type provider types it: body,
 * query and params arrive already validated and parsed (transforms and defaults applied).
 */
export type DeclaredRequest<E extends Endpoint> = FastifyRequest<{
  Body: Parsed<E['body']>;
  Querystring: Parsed<E['query']>;
  Params: Parsed<E['params']>;
}>;

export type DeclaredHandler<E extends Endpoint> = (request: DeclaredRequest<E>, reply: FastifyReply) => unknown;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The declaration a route was registered under (answers are checked against it where asked). */
    endpoint?: Endpoint;
  }
}

const SECURITY: Record<Endpoint['auth'], FastifySchema['security']> = {
  session: [{ bearerAuth: [] }, { sessionCookie: [] }],
  optional: [{}, { bearerAuth: [] }, { sessionCookie: [] }],
  server: [{ serverKey: [] }],
  'session-or-server': [{ bearerAuth: [] }, { sessionCookie: [] }, { serverKey: [] }],
  public: [],
};

/** What fastify is told of an endpoint: the schemas it validates with and the OpenAPI document shows. */
export function routeSchemaOf(endpoint: Endpoint): FastifySchema {
  const schema: FastifySchema & Record<string, unknown> = {
    operationId: endpoint.operationId,
    summary: endpoint.summary,
    tags: [endpoint.tag],
    security: SECURITY[endpoint.auth],
    response: {
      ...(endpoint.answer ? { 200: endpoint.answer } : {}),
      ...endpoint.otherAnswers,
      '4XX': errorAnswerSchema,
      '5XX': errorAnswerSchema,
    },
  };
  if (endpoint.body) schema.body = endpoint.body;
  if (endpoint.query) schema.querystring = endpoint.query;
  if (endpoint.params) schema.params = endpoint.params;
  return schema;
}

export interface RouteOptions {
  /**
   * Runs before the request is validated: for a route that must look absent to some callers (a server-only
   * route to a client), whatever they send.
   */
  readonly admit?: (request: FastifyRequest) => void;
}

/** Registers a handler under its declaration: the one way a route is added. */
export function route<E extends Endpoint>(app: FastifyInstance, endpoint: E, handler: DeclaredHandler<E>, options: RouteOptions = {}): void {
  const admit = options.admit;
  app.route({
    ...(admit ? { preValidation: (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
      try {
        admit(request);
        done();
      } catch (error) {
        done(error as Error);
      }
    } } : {}),
    method: typeof endpoint.method === 'string' ? endpoint.method : [...endpoint.method],
    url: endpoint.path,
    schema: routeSchemaOf(endpoint),
    config: { endpoint },
    handler: handler as (request: FastifyRequest, reply: FastifyReply) => unknown,
  });
}
