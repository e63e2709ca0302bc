import { context, metrics, SpanStatusCode, trace, type Attributes, type Context, type Meter, type Span, type SpanContext, type TracerProvider } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { startMetricsPushFromEnvironment } from './otlp-metrics.ts';
import { telemetryAsked } from './telemetry-asked.ts';

export { DataPointType, type ResourceMetrics } from '@opentelemetry/sdk-metrics';

/**
 * Metrics are always on: each process keeps its figures in an OpenTelemetry MeterProvider that a Prometheus
 * reader serialises on our own routes (`GET /metrics`), and the ops overview samples. Pushing them over OTLP
 * and tracing are for when the standard OTEL_* variables ask for them (see `startTracing`); without those,
 * nothing is exported and no span is recorded (`@opentelemetry/api` stays a no-op for traces).
 */
const INSTRUMENTATION_SCOPE = 'portcullis';

// The tracer API hands out a proxy that follows the provider registered later; the metrics API does not, so
// instruments are made on first use after each registration (modules are imported before the SDK starts).
const tracer = trace.getTracer(INSTRUMENTATION_SCOPE);
let meterProviderGeneration = 0;

/** Instruments made from the meter provider registered now, and made again after another is registered. */
export function instruments<T>(create: (meter: Meter) => T): () => T {
  let made: { readonly generation: number; readonly value: T } | undefined;
  return () => {
    if (made?.generation !== meterProviderGeneration) made = { generation: meterProviderGeneration, value: create(metrics.getMeter(INSTRUMENTATION_SCOPE)) };
    return made.value;
  };
}

/** Registers a meter provider globally (the SDK's, or a test's reader), so instruments are made anew on it. */
export function useMeterProvider(provider: Parameters<typeof metrics.setGlobalMeterProvider>[0]): void {
  metrics.disable();
  metrics.setGlobalMeterProvider(provider);
  meterProviderGeneration += 1;
}

export interface Telemetry {
  readonly serviceName: string;
  /** Every instrument's current figures, as Prometheus' text format. */
  prometheusText(): Promise<string>;
  /** Every instrument's current (cumulative) figures, for those who read them in process (the overview). */
  collect(): Promise<ResourceMetrics>;
  shutdown(): Promise<void>;
}

const serializer = new PrometheusSerializer();
let running: Telemetry | null = null;

/**
 * Starts this process' metrics (once; a second call answers the first's): a MeterProvider read by
 * Prometheus on our routes, and pushed over OTLP as well when the OTEL_* variables ask for it.
 */
export async function startTelemetry(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<Telemetry> {
  if (running) return running;
  // Serialised on our own routes: the exporter's server would be one more port to configure and guard.
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? serviceName, 'service.instance.id': `${process.pid}` }),
    readers: [prometheus],
  });
  useMeterProvider(provider);
  const collect = async (): Promise<ResourceMetrics> => {
    const { resourceMetrics, errors } = await prometheus.collect();
    if (errors.length > 0) throw errors[0] instanceof Error ? errors[0] : new Error(String(errors[0]));
    return resourceMetrics;
  };
  const pushed = telemetryAsked(env) ? await startMetricsPushFromEnvironment(env, collect) : null;
  running = {
    serviceName,
    collect,
    prometheusText: async () => serializer.serialize(await collect()),
    shutdown: async () => {
      running = null;
      await pushed?.shutdown().catch(() => {});
      await provider.shutdown().catch(() => {});
      await flushTraces();
    },
  };
  return running;
}

/**
 * Sends the spans still buffered (tracing is set up by the service's entry, in another module instance, so
 * it is reached through the API's global provider).
 */
async function flushTraces(): Promise<void> {
  const global = trace.getTracerProvider() as TracerProvider & { getDelegate?(): TracerProvider };
  const provider = (global.getDelegate?.() ?? global) as TracerProvider & { shutdown?(): Promise<void> };
  await provider.shutdown?.().catch(() => {});
}

/** The telemetry this process started, or null (an api built in a test without a server). */
export function runningTelemetry(): Telemetry | null {
  return running;
}

/**
 * Runs `work` in a span under the active one (or a root), which records its failure and ends either way.
 * Only a span whose trace is sampled is made the active one: a sampled-out span (and every span with tracing
 * off) runs `work` with no context made active, so nothing under it (pg, ioredis, nested spans) pays for a
 * span of its own, and on Node 20 no AsyncLocalStorage is entered for it.
 */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return inSpanUnder(context.active(), name, attributes, work);
}

async function inSpanUnder<T>(parent: Context, name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name, { attributes }, parent);
  if (!span.isRecording()) return work(span);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The active span's W3C `traceparent`, when a span is being recorded (tracing on); otherwise null. */
export function activeTraceparent(): string | null {
  const span = trace.getSpan(context.active());
  return span?.isRecording() ? traceparentOf(span.spanContext()) : null;
}

/** A span context as a W3C `traceparent` (version 00). */
export function traceparentOf({ traceId, spanId, traceFlags }: SpanContext): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span a W3C `traceparent` names, as a remote parent; null for anything else. */
export function spanContextOf(traceparent: string | null | undefined): SpanContext | null {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  return match ? { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true } : null;
}

/**
 * Runs `work` in a span continuing the trace a `traceparent` names (carried in an event's metadata or a mail
 * job), so the projector's and the mailer's work joins the request that caused it, and a trace sampled out
 * stays out in every process. With tracing off, or no usable traceparent, `work` runs in a span of its own
 * (a no-op without tracing).
 */
export async function inSpanContinuing<T>(traceparent: string | null | undefined, name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const active = context.active();
  const remote = spanContextOf(traceparent);
  return inSpanUnder(remote ? trace.setSpanContext(active, remote) : active, name, attributes, work);
}

/**
 * Runs `work` in a span under the active span, or, with none active, continuing the trace `traceparent`
 * names: a request whose trace is sampled out makes no span active and hands its decision on this way.
 */
export async function inSpanOfRequest<T>(traceparent: string | null, name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return trace.getSpan(context.active()) ? inSpan(name, attributes, work) : inSpanContinuing(traceparent, name, attributes, work);
}
