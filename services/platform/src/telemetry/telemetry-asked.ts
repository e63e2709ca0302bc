/**
 * The standard OpenTelemetry variables that ask for export: with none of them set (or OTEL_SDK_DISABLED),
 * no exporter, SDK, instrumentation or span processor is started, so nothing is paid for tracing.
 */
export const SDK_VARIABLES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_TRACES_EXPORTER',
  'OTEL_METRICS_EXPORTER',
] as const;

export function telemetryAsked(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  return SDK_VARIABLES.some((name) => (env[name] ?? '').trim() !== '');
}

/** Whether traces are asked for: an OTLP endpoint, or a traces exporter other than `none`. */
export function tracesAsked(env: NodeJS.ProcessEnv): boolean {
  if (!telemetryAsked(env)) return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (exporters.length > 0) return !exporters.includes('none');
  return (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '').trim() !== '';
}
