import { register } from 'node:module';
import { tracesAsked } from './telemetry-asked.ts';

export interface Tracing {
  shutdown(): Promise<void>;
}

const notTracing: Tracing = { shutdown: async () => {} };

/**
 * Starts tracing when the OTEL_* variables ask for it, before the service's own modules are imported
 * (each service's entry calls this, then imports its program): Node's ESM loader hook must be in place
 * before `pg`, `ioredis` and `fastify` load for their instrumentations to wrap them. Without the variables
 * nothing is loaded or hooked, and the API's tracer stays a no-op.
 *
 * The SDK is configured from the standard variables (exporter, protocol, endpoint, headers, sampler,
 * propagators); metrics are left to `startTelemetry`, which serves them and pushes them over OTLP itself.
 */
export async function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  if (!tracesAsked(env)) return notTracing;
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [{ NodeSDK }, { PgInstrumentation }, { IORedisInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? serviceName,
    // An empty list: no meter provider of the SDK's (startTelemetry registers the one every process has).
    metricReaders: [],
    logRecordProcessors: [],
    // The request's span is the api's own (services/api/src/http/request-trace.ts), not an instrumentation's:
    // the http instrumentation cost get-session more than half its throughput in the bench, and @fastify/otel
    // a fifth even with its trace sampled out (it makes every request's span active and hooks every route).
    instrumentations: [
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
