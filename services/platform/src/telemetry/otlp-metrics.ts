import { PeriodicExportingMetricReader, type MetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';

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

/**
 * A reader pushing metrics over OTLP, when the variables ask for it: OTEL_METRICS_EXPORTER naming `otlp`, or
 * (unset) an OTLP endpoint. `prometheus` needs nothing more: every process serves `/metrics` anyway.
 */
export async function otlpMetricReaderFromEnvironment(env: NodeJS.ProcessEnv): Promise<MetricReader | null> {
  const exporters = (env.OTEL_METRICS_EXPORTER ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const pushed = exporters.length > 0 ? exporters.includes('otlp') : (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? '').trim() !== '';
  if (!pushed) return null;
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return new PeriodicExportingMetricReader({
    exporter: await otlpMetricExporter(env),
    exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_EXPORT_INTERVAL_MS,
  });
}
