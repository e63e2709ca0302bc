import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import type { z } from 'zod';
import { parseBody, parseParams, parseQuery } from './validation.ts';

/**
 * Routes declare their body, query and response schemas (zod, from `contracts/`) to fastify: the type
 * provider types the handlers from them, the OpenAPI document is generated from them, and fastify
 * validates requests with them here, answering failures from the catalogue as better-auth does
 * (`VALIDATION_ERROR` / `INVALID_QUERY_PARAMETERS` with `[body.email] ...` details).
 */
const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  if (httpPart === 'querystring') {
    return (data) => {
      try {
        return { value: parseQuery(schema, data) };
      } catch (error) {
        return { error: error as Error };
      }
    };
  }
  return (data) => {
    try {
      return { value: httpPart === 'body' ? parseBody(schema, data) : parseParams(schema, data) };
    } catch (error) {
      return { error: error as Error };
    }
  };
};

/**
 * Answers are serialized as they are: the response schemas document them (and specs hold real answers to
 * them), but checking every answer in production would cost every request and turn a harmless extra field
 * into a 500.
 */
const serializerCompiler: FastifySerializerCompiler<z.ZodType> = () => (data) => JSON.stringify(data);

export function useZodRouteSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
}
