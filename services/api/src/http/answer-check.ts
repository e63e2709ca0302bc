import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errorAnswerSchema } from '@portcullis/contracts';

/**
 * Holds every JSON answer of a declared endpoint to its declared schema (200: the answer, 4xx/5xx: the
 * catalogue's error), and turns one that strays into a 500 naming the difference. The suites run the api
 * with it, so each answer any test provokes is checked against the OpenAPI document clients generate from.
 */
export function checkAnswersAgainstDeclarations(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const endpoint = request.routeOptions.config.endpoint;
    const contentType = String(reply.getHeader('content-type') ?? '');
    if (!endpoint || typeof payload !== 'string' || !contentType.includes('json')) return done(null, payload);
    const status = reply.statusCode;
    const schema = status === 200 ? endpoint.answer : (endpoint.otherAnswers?.[status] ?? (status >= 400 ? errorAnswerSchema : undefined));
    if (!schema) return done(null, payload);
    const checked = schema.safeParse(JSON.parse(payload));
    if (checked.success) return done(null, payload);
    const problem = `${request.method} ${endpoint.path} answered ${reply.statusCode} outside its declared schema:\n${z.prettifyError(checked.error)}`;
    request.log.error({ answer: payload.slice(0, 2000) }, problem);
    // An answer that strays is a defect of this server, not of the request.
    done(Object.assign(new Error(problem), { statusCode: 500 }));
  });
}
