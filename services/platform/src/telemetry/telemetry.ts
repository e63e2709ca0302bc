import { metrics, SpanStatusCode, trace, type Attributes, type Meter, type Span } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';

/**
 * Spans and metrics go through `@opentelemetry/api`, which is a no-op until an SDK is registered: a
 * deployment that sets no OTEL_* variable pays for nothing. One that does gets the SDK configured entirely
 * from the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER=
 * prometheus, OTEL_SERVICE_NAME, …), so no Portcullis setting duplicates one of theirs.
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

const SDK_VARIABLES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_TRACES_EXPORTER',
  'OTEL_METRICS_EXPORTER',
] as const;

export interface Telemetry {
  shutdown(): Promise<void>;
}

/** Starts the OpenTelemetry SDK when the environment asks for it; otherwise does nothing. */
export function startTelemetry(serviceName: string, env: NodeJS.ProcessEnv = process.env): Telemetry {
  const asked = SDK_VARIABLES.some((name) => (env[name] ?? '').trim() !== '');
  if (!asked || env.OTEL_SDK_DISABLED === 'true') return { shutdown: async () => {} };
  const sdk = new NodeSDK({ serviceName: env.OTEL_SERVICE_NAME ?? serviceName });
  sdk.start();
  meterProviderGeneration += 1;
  return { shutdown: () => sdk.shutdown() };
}

/** Runs `work` in a span that records its failure; the span ends either way. */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
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
