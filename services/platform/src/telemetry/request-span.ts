import type { IncomingHttpHeaders } from 'node:http';
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import { traceparentOf } from './telemetry.ts';

const tracer = trace.getTracer('portcullis');

/**
 * The trace of one incoming HTTP request, started before its first hook. The caller's `traceparent` (or any
 * configured propagator's headers) is the parent, and the configured sampler decides.
 *
 * A sampled request's span is made the active one for the rest of the request, so its commands, Postgres
 * queries and Redis calls are its children. A sampled-out request makes nothing active and keeps only its
 * `traceparent` (flags 00), which its commands and events carry on: the projector and the mailer then sample
 * it out too instead of starting traces of their own. That is what lets a 1% sample cost next to nothing on
 * get-session, whose whole answer takes a few tens of microseconds.
 *
 * Only the route's template is recorded, never the path or query: some carry tokens
 * (reset-password/:token, verify-email?token=).
 */
export class RequestTrace {
  private constructor(
    /** The request's span while its trace records; null when it is sampled out. */
    readonly span: Span | null,
    private readonly active: Context | null,
    private readonly sampledOut: SpanContext | null,
  ) {}

  static start(method: string, route: string | undefined, headers: IncomingHttpHeaders): RequestTrace {
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const template = route ?? 'unmatched';
    const span = tracer.startSpan(`${method} ${template}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': template } }, parent);
    return span.isRecording() ? new RequestTrace(span, trace.setSpan(parent, span), null) : new RequestTrace(null, null, span.spanContext());
  }

  /** What the request's commands continue when no span of it is active: its sampled-out `traceparent`. */
  sampledOutTraceparent(): string | null {
    return this.sampledOut && isSpanContextValid(this.sampledOut) ? traceparentOf(this.sampledOut) : null;
  }

  /** Runs the rest of the request (`next`) with the request's span active, when it records. */
  enter(next: () => void): void {
    if (this.active) context.with(this.active, next);
    else next();
  }

  failed(error: unknown): void {
    if (!this.span) return;
    this.span.recordException(error instanceof Error ? error : String(error));
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }

  answered(status: number): void {
    if (!this.span) return;
    this.span.setAttribute('http.response.status_code', status);
    // A 4xx is the caller's mistake, not the server's (OpenTelemetry's HTTP server conventions).
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}
