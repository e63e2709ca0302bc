import { register } from 'node:module';
import { handOverRequestSampling, PooledIdGenerator, requestSampling, samplerFromEnvironment } from './sampling.ts';
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
  const [{ NodeSDK, tracing }, { PgInstrumentation }, { IORedisInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  // The SDK's sampler and id generator are ours to make, so the api's requests can ask the same ones before
  // making a span (services/platform/src/telemetry/request-span.ts).
  const sampler = samplerFromEnvironment(env, tracing, (message) => process.emitWarning(message, 'TelemetryWarning'));
  const ids = new PooledIdGenerator();
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? serviceName,
    sampler,
    idGenerator: ids,
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
  handOverRequestSampling(requestSampling(sampler, ids, tracing.SamplingDecision.NOT_RECORD));
  const { trace, ProxyTracerProvider } = await import('@opentelemetry/api');
  silenceLibraryTracers(trace.getTracerProvider() as InstanceType<typeof ProxyTracerProvider>, new ProxyTracerProvider());
  return { shutdown: () => sdk.shutdown() };
}

/**
 * Libraries that trace themselves through the global API, whose spans nobody asked for: slonik makes one per
 * connection taken from its pool and several per query (one per interceptor phase) on top of pg's
 * instrumentation's one, and, outside a request, each of its queries (every projector poll, every
 * heartbeat) would start a trace of its own.
 */
const SILENCED_TRACERS = new Set(['slonik.interceptors', 'pg-slonik-connection-pool']);

/**
 * Hands the silenced libraries a tracer that records nothing. Their tracers are the API's proxies, which ask
 * the registered provider for the real one on first use, after the SDK has started. `unregistered` is a
 * proxy provider never given a delegate, whose tracers are no-ops.
 */
function silenceLibraryTracers(global: { getDelegate(): TracerProviderLike }, unregistered: TracerProviderLike): void {
  const provider = global.getDelegate();
  const getTracer = provider.getTracer.bind(provider);
  const silent = unregistered.getTracer('silenced');
  provider.getTracer = (name, ...rest) => (SILENCED_TRACERS.has(name) ? silent : getTracer(name, ...rest));
}

interface TracerProviderLike {
  getTracer(name: string, ...rest: unknown[]): unknown;
}
