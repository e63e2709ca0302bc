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

/**
 * What fastify is told of an endpoint: the schemas it validates with and the OpenAPI document shows. An
 * endpoint served on two methods is two operations, each with an id of its own (OpenAPI requires it): the
 * first method's is the declared one, the others' end in their method (`getSessionPost`).
 */
function routeSchemaOf(endpoint: Endpoint, method: string = methodsOf(endpoint)[0]!): FastifySchema {
  const first = methodsOf(endpoint)[0];
  const operationId = method === first ? endpoint.operationId : `${endpoint.operationId}${method.charAt(0)}${method.slice(1).toLowerCase()}`;
  const schema: FastifySchema & Record<string, unknown> = {
    operationId,
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
  // A GET has no body to validate (fastify refuses the schema): an endpoint on both methods has it on POST only.
  if (endpoint.body && method !== 'GET') schema.body = endpoint.body;
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
  for (const method of methodsOf(endpoint)) {
    app.route({
      ...(admit ? { preValidation: (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
        try {
          admit(request);
          done();
        } catch (error) {
          done(error as Error);
        }
      } } : {}),
      method,
      url: endpoint.path,
      schema: routeSchemaOf(endpoint, method),
      config: { endpoint },
      handler: handler as (request: FastifyRequest, reply: FastifyReply) => unknown,
    });
  }
}

function methodsOf(endpoint: Endpoint): readonly string[] {
  return typeof endpoint.method === 'string' ? [endpoint.method] : endpoint.method;
}
