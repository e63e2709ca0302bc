import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { node, tracing as samplers } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SamplingDecision, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RequestTracer } from './request-span.ts';
import { PooledIdGenerator, requestSampling, samplerFromEnvironment } from './sampling.ts';

const RATIO = 0.5;
const exporter = new InMemorySpanExporter();
const sampler = samplerFromEnvironment({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(RATIO) }, samplers, () => {});
const ids = new PooledIdGenerator();
let tracer: RequestTracer;

/** What a trace id alone decides, as the ratio sampler sees it at the root. */
const keptAtRoot = (traceId: string): boolean => sampler.shouldSample(ROOT_CONTEXT, traceId, 'any', SpanKind.SERVER, {}, []).decision !== SamplingDecision.NOT_RECORD;

beforeAll(() => {
  // The SDK as the entry's tracing configures it (W3C propagation, AsyncLocalStorage context): its sampler and
  // id generator are the ones handed over.
  new node.NodeTracerProvider({ sampler, idGenerator: ids, spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();
  tracer = new RequestTracer(requestSampling(sampler, ids, SamplingDecision.NOT_RECORD));
});

afterAll(() => {
  trace.disable();
  propagation.disable();
  context.disable();
});

beforeEach(() => exporter.reset());

describe('a request\'s trace', () => {
  it('is kept or dropped on one trace id: the one the SDK then gives the span it makes', () => {
    const traces = Array.from({ length: 400 }, () => tracer.start('GET', '/api/auth/get-session', {}));
    const kept = traces.filter((requestTrace) => requestTrace.span !== null);
    for (const requestTrace of kept) {
      // Had the SDK drawn another trace id, half of these would have come back from it unrecorded.
      expect(requestTrace.span!.isRecording()).toBe(true);
      expect(keptAtRoot(requestTrace.span!.spanContext().traceId)).toBe(true);
      expect(requestTrace.sampledOutTraceparent()).toBeNull();
      requestTrace.answered(200);
    }
    for (const requestTrace of traces.filter((each) => each.span === null)) {
      const traceparent = requestTrace.sampledOutTraceparent()!;
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
      expect(keptAtRoot(traceparent.split('-')[1]!)).toBe(false);
    }
    // Random ids: a ratio of one half lands well inside this band (six standard deviations).
    expect(kept.length).toBeGreaterThan(400 * RATIO - 60);
    expect(kept.length).toBeLessThan(400 * RATIO + 60);
    expect(exporter.getFinishedSpans()).toHaveLength(kept.length);
  });

  it('records the route template and the status, never the path', () => {
    const requestTrace = sampledRoot();
    requestTrace.answered(503);
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('POST /api/auth/reset-password/:token');
    expect(span!.kind).toBe(SpanKind.SERVER);
    expect(span!.attributes).toEqual({ 'http.request.method': 'POST', 'http.route': '/api/auth/reset-password/:token', 'http.response.status_code': 503 });
    expect(span!.status.code).toBe(2);
  });

  it('continues a caller\'s sampled trace under the caller\'s span', () => {
    const traceId = 'ab'.repeat(16);
    const requestTrace = tracer.start('GET', '/api/auth/get-session', { traceparent: `00-${traceId}-${'cd'.repeat(8)}-01` });
    requestTrace.answered(200);
    const [span] = exporter.getFinishedSpans();
    expect(span!.spanContext().traceId).toBe(traceId);
    expect(span!.parentSpanContext?.spanId).toBe('cd'.repeat(8));
  });

  it('keeps a caller\'s sampled-out trace out, and hands on its trace id with flags 00, the same for the whole request', () => {
    const traceId = 'ef'.repeat(16);
    const requestTrace = tracer.start('POST', '/api/auth/request-password-reset', { traceparent: `00-${traceId}-${'12'.repeat(8)}-00` });
    expect(requestTrace.span).toBeNull();
    const traceparent = requestTrace.sampledOutTraceparent();
    expect(traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(traceparent).not.toContain('12'.repeat(8));
    expect(requestTrace.sampledOutTraceparent()).toBe(traceparent);
    requestTrace.answered(200);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it('makes a kept request\'s span the active one for the rest of the request, and a dropped one makes nothing active', () => {
    const kept = sampledRoot();
    kept.enter(() => expect(trace.getSpan(context.active())).toBe(kept.span));
    const dropped = tracer.start('GET', '/api/auth/get-session', { traceparent: `00-${'ef'.repeat(16)}-${'12'.repeat(8)}-00` });
    dropped.enter(() => expect(trace.getSpan(context.active())).toBeUndefined());
  });
});

describe('the sampler the variables name', () => {
  const made = (env: NodeJS.ProcessEnv): { sampler: string; warnings: string[] } => {
    const warnings: string[] = [];
    return { sampler: samplerFromEnvironment(env, samplers, (message) => warnings.push(message)).toString(), warnings };
  };

  it('is the SDK\'s reading of OTEL_TRACES_SAMPLER and its argument', () => {
    expect(made({}).sampler).toBe(made({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' }).sampler);
    expect(made({}).sampler).toMatch(/^ParentBased\{root=AlwaysOnSampler/);
    expect(made({ OTEL_TRACES_SAMPLER: 'always_off' }).sampler).toBe('AlwaysOffSampler');
    expect(made({ OTEL_TRACES_SAMPLER: 'always_on' }).sampler).toBe('AlwaysOnSampler');
    expect(made({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).sampler).toBe('TraceIdRatioBased{0.25}');
    expect(made({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }).sampler).toMatch(/^ParentBased\{root=TraceIdRatioBased\{0.01\}/);
    expect(made({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }).sampler).toMatch(/^ParentBased\{root=AlwaysOffSampler/);
  });

  it('keeps every trace, and says so, when the ratio is missing or out of range, or the name unknown', () => {
    for (const argument of [undefined, '', '1.5', '-0.1', 'half']) {
      const { sampler: named, warnings } = made({ OTEL_TRACES_SAMPLER: 'traceidratio', ...(argument === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: argument }) });
      expect(named).toBe('TraceIdRatioBased{1}');
      expect(warnings).toHaveLength(1);
    }
    const unknown = made({ OTEL_TRACES_SAMPLER: 'jaeger_remote' });
    expect(unknown.sampler).toMatch(/^ParentBased\{root=AlwaysOnSampler/);
    expect(unknown.warnings[0]).toContain('jaeger_remote');
  });
});

describe('pooled ids', () => {
  it('are distinct hex of the W3C lengths across refills of the pool', () => {
    const generator = new PooledIdGenerator();
    const traceIds = Array.from({ length: 1000 }, () => generator.generateTraceId());
    const spanIds = Array.from({ length: 1000 }, () => generator.generateSpanId());
    expect(new Set(traceIds).size).toBe(1000);
    expect(new Set(spanIds).size).toBe(1000);
    for (const id of traceIds) expect(id).toMatch(/^[0-9a-f]{32}$/);
    for (const id of spanIds) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('give a chosen trace id to the one root started with it, and no other, even when starting it fails', () => {
    const generator = new PooledIdGenerator();
    const chosen = '0123456789abcdef'.repeat(2);
    expect(generator.withTraceId(chosen, () => generator.generateTraceId())).toBe(chosen);
    expect(generator.generateTraceId()).not.toBe(chosen);
    expect(() => generator.withTraceId(chosen, () => {
      throw new Error('no span');
    })).toThrow('no span');
    expect(generator.generateTraceId()).not.toBe(chosen);
  });
});

/** A request whose trace the ratio sampler keeps (some request is, within a few tries). */
function sampledRoot() {
  for (;;) {
    const requestTrace = tracer.start('POST', '/api/auth/reset-password/:token', {});
    if (requestTrace.span) return requestTrace;
  }
}
