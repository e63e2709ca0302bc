import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestTrace, RequestTracer } from '@portcullis/platform/telemetry/request-span';

/** Probes and scrapes are not requests anyone wants traced. */
const UNTRACED_ROUTES = new Set(['/metrics', '/healthz', '/readyz']);

const kRequestTrace = Symbol('portcullis.requestTrace');

type Traced = FastifyRequest & { [kRequestTrace]: RequestTrace | null };

/**
 * Gives every request a trace (see `RequestTrace`) from the first hook on: registered on the root instance
 * before any other hook or route, and only when tracing is on (`tracer` comes from the entry's tracing), so an
 * api without the OTEL_* variables pays nothing for it. The trace is a request decoration rather than a WeakMap entry: a weak map keyed by every
 * request costs the garbage collector more than the trace itself costs get-session.
 */
export function traceRequests(app: FastifyInstance, tracer: RequestTracer): void {
  app.decorateRequest(kRequestTrace, null);
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (route !== undefined && UNTRACED_ROUTES.has(route)) {
      done();
      return;
    }
    const requestTrace = tracer.start(request.method, route, request.headers);
    (request as Traced)[kRequestTrace] = requestTrace;
    requestTrace.enter(done);
  });
  app.addHook('onError', (request, _reply, error, done) => {
    (request as Traced)[kRequestTrace]?.failed(error);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    (request as Traced)[kRequestTrace]?.answered(reply.statusCode);
    done();
  });
}

/**
 * The `traceparent` a request's commands continue: a sampled-out request's own (flags 00), so its events
 * keep the decision; null when tracing is off or the request's span is active (commands find it themselves).
 */
export function requestTraceparent(request: FastifyRequest): string | null {
  return (request as Partial<Traced>)[kRequestTrace]?.sampledOutTraceparent() ?? null;
}
