import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { DomainError, errorCatalogue, wireCode, type ErrorCode } from '@portcullis/contracts';

function render(code: ErrorCode, details?: string): { code: string; message: string; details?: string } {
  return { code: wireCode(code), message: errorCatalogue[code].message, ...(details ? { details } : {}) };
}

/**
 * The one place errors become answers: `{ code, message }` from the catalogue, as better-auth answers them.
 * Anything unexpected is logged with its stack and answered as a plain 500, without internals.
 */
function answerError(error: FastifyError | DomainError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof DomainError) {
    if (error.retryAfterSeconds !== undefined) {
      const seconds = String(error.retryAfterSeconds);
      reply.header('x-retry-after', seconds).header('retry-after', seconds);
    }
    return reply.status(error.status).send(render(error.code, error.details));
  }
  const fastifyCode = (error).code;
  switch (fastifyCode) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return reply.status(400).send(render('BAD_REQUEST'));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply.status(413).send(render('BODY_TOO_LARGE'));
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return reply.status(415).send(render('UNSUPPORTED_MEDIA_TYPE'));
    default:
      break;
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    request.log.info({ err: error }, 'rejected request');
    return reply.status(400).send(render('VALIDATION_ERROR'));
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply.status(500).send(render('INTERNAL_SERVER_ERROR'));
}

/**
 * fastify's `frameworkErrors`: what its router refuses before any route or hook runs (a path parameter
 * that is not valid percent-encoding, or longer than maxParamLength, 100) would otherwise get fastify's own
 * JSON, which is in no catalogue.
 */
export const answerFrameworkError: NonNullable<FastifyServerOptions['frameworkErrors']> = (error, request, reply) => {
  answerError(error, request, reply);
};

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(answerError);
  app.setNotFoundHandler((_request, reply) => reply.status(404).send(render('NOT_FOUND')));
}
