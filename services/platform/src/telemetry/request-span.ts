import type { IncomingHttpHeaders } from 'node:http';
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span } from '@opentelemetry/api';
import type { RequestSampling } from './sampling.ts';
import { traceparentOf } from './telemetry.ts';

const tracer = trace.getTracer('portcullis');

/**
 * Starts the trace of each incoming HTTP request, asking the SDK's own sampler first (handed over by the
 * entry's tracing, see `RequestSampling`). A sampled request's span is made by the SDK as any other, on the
 * trace id the decision was made on, so the SDK decides the same again. A sampled-out request makes no span at
 * all: on get-session, whose whole answer takes a few tens of microseconds, the SDK's span for a dropped trace
 * (its ids, attributes, bookkeeping) cost more than the rest of tracing together.
 */
export class RequestTracer {
  /** Headers any configured propagator reads: a request with none of them has no parent to extract. */
  private readonly propagationHeaders: readonly string[];

  constructor(private readonly sampling: RequestSampling) {
    this.propagationHeaders = propagation.fields();
  }

  start(method: string, route: string | undefined, headers: IncomingHttpHeaders): RequestTrace {
    const parent = this.carriesPropagation(headers) ? propagation.extract(ROOT_CONTEXT, headers) : ROOT_CONTEXT;
    const parentSpan = trace.getSpanContext(parent);
    const continued = parentSpan !== undefined && isSpanContextValid(parentSpan);
    const traceId = continued ? parentSpan.traceId : this.sampling.ids.generateTraceId();
    const template = route ?? 'unmatched';
    const name = `${method} ${template}`;
    if (!this.sampling.keeps(parent, traceId, name)) return new RequestTrace(null, null, traceId, this.sampling);
    const options = { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': template } };
    const span = continued ? tracer.startSpan(name, options, parent) : this.sampling.ids.withTraceId(traceId, () => tracer.startSpan(name, options, parent));
    return new RequestTrace(span, trace.setSpan(parent, span), traceId, this.sampling);
  }

  /** A loop rather than `some`: this runs on every request, and a closure over `headers` is one more allocation. */
  private carriesPropagation(headers: IncomingHttpHeaders): boolean {
    for (const name of this.propagationHeaders) if (headers[name] !== undefined) return true;
    return false;
  }
}

/**
 * The trace of one incoming HTTP request, started before its first hook. The caller's `traceparent` (or any
 * configured propagator's headers) is the parent, and the configured sampler decides.
 *
 * A sampled request's span is made the active one for the rest of the request, so its commands, Postgres
 * queries and Redis calls are its children. A sampled-out request makes nothing active and keeps only its
 * trace id, which its commands and events carry on in a `traceparent` with flags 00: the projector and the
 * mailer then sample it out too instead of starting traces of their own.
 *
 * Only the route's template is recorded, never the path or query: some carry tokens
 * (reset-password/:token, verify-email?token=).
 */
export class RequestTrace {
  private traceparent: string | null = null;

  constructor(
    /** The request's span while its trace records; null when it is sampled out. */
    readonly span: Span | null,
    private readonly active: Context | null,
    private readonly traceId: string,
    private readonly sampling: RequestSampling,
  ) {}

  /** What the request's commands continue when no span of it is active: its sampled-out `traceparent`. */
  sampledOutTraceparent(): string | null {
    if (this.span) return null;
    this.traceparent ??= traceparentOf({ traceId: this.traceId, spanId: this.sampling.ids.generateSpanId(), traceFlags: TraceFlags.NONE });
    return this.traceparent;
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
