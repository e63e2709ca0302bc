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
  const [{ NodeSDK }, { PgInstrumentation }, { IORedisInstrumentation }, fastifyOtel] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@fastify/otel'),
  ]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? serviceName,
    // An empty list: no meter provider of the SDK's (startTelemetry registers the one every process has).
    metricReaders: [],
    logRecordProcessors: [],
    // The request's span is fastify's (@fastify/otel: the incoming traceparent is its parent, the route its
    // name), not the http instrumentation's: that one cost get-session more than half its throughput in the
    // bench (it parses and records every header and URL part), where fastify's costs a few percent. A span
    // per hook would multiply what every request costs, so there is one per request. Probes and scrapes are
    // not requests anyone wants traced.
    instrumentations: [
      new fastifyOtel.FastifyOtelInstrumentation({
        registerOnInitialization: true,
        instrumentHooks: false,
        instrumentHandler: false,
        ignorePaths: (route) => /^\/(metrics|healthz|readyz)$/.test(route.url),
        requestHook: (span, request) => span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched'}`),
      }),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
