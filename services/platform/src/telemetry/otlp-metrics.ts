import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';

const DEFAULT_EXPORT_INTERVAL_MS = 60_000;

/**
 * The OTLP exporter the variables name (OTEL_EXPORTER_OTLP_METRICS_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL:
 * `http/protobuf` by default, `http/json`, `grpc`); each reads its endpoint and headers from the variables
 * itself. Loaded only when asked for: a process that exports nothing does not load the exporters.
 */
async function otlpMetricExporter(env: NodeJS.ProcessEnv): Promise<PushMetricExporter> {
  const protocol = (env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol === 'grpc') return new (await import('@opentelemetry/exporter-metrics-otlp-grpc')).OTLPMetricExporter();
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter();
  return new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter();
}

export interface MetricsPush {
  /** Sends the figures once more, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Pushes metrics over OTLP, when the variables ask for it (OTEL_METRICS_EXPORTER naming `otlp`, or, unset, an
 * OTLP endpoint), every OTEL_METRIC_EXPORT_INTERVAL ms, of the figures `collect` reads: the Prometheus
 * reader's. Not a second reader on the provider: each reader keeps storage of its own, so every measurement
 * (a request's duration, its route's count) would be recorded twice, and the hot path paid for it (a third of
 * what get-session lost with OTLP on in the telemetry bench). Both outlets are cumulative, so one collection
 * serves both.
 */
export async function startMetricsPushFromEnvironment(env: NodeJS.ProcessEnv, collect: () => Promise<ResourceMetrics>): Promise<MetricsPush | null> {
  const exporters = (env.OTEL_METRICS_EXPORTER ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const pushed = exporters.length > 0 ? exporters.includes('otlp') : (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? '').trim() !== '';
  if (!pushed) return null;
  const exporter = await otlpMetricExporter(env);
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  let sending: Promise<void> | null = null;
  const send = (): Promise<void> =>
    (sending ??= collect()
      .then((figures) => new Promise<void>((resolve) => exporter.export(figures, () => resolve())))
      // A collector that is down loses this round's push; the next carries the same cumulative figures.
      .catch(() => {})
      .finally(() => (sending = null)));
  const timer = setInterval(() => void send(), Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_EXPORT_INTERVAL_MS);
  timer.unref();
  return {
    shutdown: async () => {
      clearInterval(timer);
      await sending;
      await send();
      await exporter.shutdown();
    },
  };
}
