import { randomFillSync } from 'node:crypto';
import { SpanKind, type Context, type Link } from '@opentelemetry/api';
import type { Sampler, SamplingDecision } from '@opentelemetry/sdk-trace-base';

type Samplers = Pick<typeof import('@opentelemetry/sdk-trace-base'), 'AlwaysOnSampler' | 'AlwaysOffSampler' | 'ParentBasedSampler' | 'TraceIdRatioBasedSampler'>;

/**
 * The sampler the standard variables name (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), as the SDK reads
 * them: made here rather than by the SDK so the api's requests can ask the very sampler the SDK asks (see
 * `RequestTracer`). An unknown name or an unusable ratio falls back as the SDK's own reading does.
 */
export function samplerFromEnvironment(env: NodeJS.ProcessEnv, samplers: Samplers, warn: (message: string) => void): Sampler {
  const { AlwaysOnSampler, AlwaysOffSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = samplers;
  const ratio = (): number => {
    const argument = env.OTEL_TRACES_SAMPLER_ARG?.trim() ?? '';
    const value = Number(argument);
    if (argument === '' || !Number.isFinite(value) || value < 0 || value > 1) {
      warn(`OTEL_TRACES_SAMPLER_ARG=${JSON.stringify(argument)} is not a ratio in [0, 1]; every trace is kept`);
      return 1;
    }
    return value;
  };
  const name = env.OTEL_TRACES_SAMPLER?.trim() ?? '';
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    case '':
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    default:
      warn(`OTEL_TRACES_SAMPLER=${JSON.stringify(name)} is not a sampler this service knows; parentbased_always_on is used`);
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

const POOL_BYTES = 4096;
const INVALID_TRACE_ID = '0'.repeat(32);

/**
 * Trace and span ids cut from a pool of cryptographic randomness, refilled a few kilobytes at a time (the
 * SDK's own generator draws `Math.random` four times an id). It can also hand the next root span a trace id
 * chosen beforehand: the one a request's sampling decision was made on.
 */
export class PooledIdGenerator {
  private readonly pool = Buffer.allocUnsafe(POOL_BYTES);
  private offset = POOL_BYTES;
  private chosenTraceId: string | null = null;

  generateTraceId(): string {
    const chosen = this.chosenTraceId;
    if (chosen !== null) {
      this.chosenTraceId = null;
      return chosen;
    }
    const id = this.hex(16);
    return id === INVALID_TRACE_ID ? this.generateTraceId() : id;
  }

  generateSpanId(): string {
    return this.hex(8);
  }

  /** Runs `start` (which starts one root span) with `traceId` as the trace id the SDK takes for it. */
  withTraceId<T>(traceId: string, start: () => T): T {
    this.chosenTraceId = traceId;
    try {
      return start();
    } finally {
      this.chosenTraceId = null;
    }
  }

  private hex(bytes: number): string {
    if (this.offset + bytes > POOL_BYTES) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const id = this.pool.toString('hex', this.offset, this.offset + bytes);
    this.offset += bytes;
    return id;
  }
}

/** What the entry's tracing hands the service's program: the SDK's own sampler and id generator. */
export interface RequestSampling {
  /** Whether the SDK's sampler keeps a request's server span of `traceId` under `parent`. */
  keeps(parent: Context, traceId: string, spanName: string): boolean;
  readonly ids: PooledIdGenerator;
}

/**
 * `sampler`'s decisions on a request's server span. `notRecord` is the SDK's own `SamplingDecision.NOT_RECORD`,
 * passed in so the program's bundle never loads the SDK for a constant.
 */
export function requestSampling(sampler: Sampler, ids: PooledIdGenerator, notRecord: SamplingDecision): RequestSampling {
  return { ids, keeps: (parent, traceId, spanName) => sampler.shouldSample(parent, traceId, spanName, SpanKind.SERVER, NO_ATTRIBUTES, NO_LINKS).decision !== notRecord };
}

// Asked on every request: one frozen empty set of attributes and of links rather than two new ones each time.
// Frozen, so a sampler that tried to add to them would fail loudly rather than leak into every later request.
const NO_ATTRIBUTES = Object.freeze({});
const NO_LINKS: Link[] = [];
Object.freeze(NO_LINKS);

// The entry (which starts the SDK) and the program are bundles of their own, each with its own copy of this
// module: the hand-over goes through the global symbol registry, which both share.
const HANDED_OVER = Symbol.for('portcullis.telemetry.requestSampling');

export function handOverRequestSampling(sampling: RequestSampling): void {
  (globalThis as Record<symbol, unknown>)[HANDED_OVER] = sampling;
}

/** The sampling the entry's tracing handed over; null when tracing was not started. */
export function handedOverRequestSampling(): RequestSampling | null {
  return ((globalThis as Record<symbol, unknown>)[HANDED_OVER] as RequestSampling | undefined) ?? null;
}
