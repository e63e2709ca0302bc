import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { OtlpReceiver } from '../support/otlp-receiver.ts';
import { waitFor } from '../support/processes.ts';
import { HttpClient } from '../support/system.ts';

/**
 * Traces that join across the three processes: with an OTLP endpoint set, a request's incoming traceparent
 * is the parent of its span, the command's events carry the trace on, and the projector's batch and the
 * mailer's delivery continue it. The receiver is an OTLP/HTTP JSON endpoint inside the test.
 */
describe('traces: one password reset is one trace across api, projector and mailer', () => {
  let receiver: OtlpReceiver;
  let system: MailSystem;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    system = await startMailSystem({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        // Spans go out a moment after they end, not after the default 5 s.
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
  });

  afterAll(async () => {
    await system?.stop();
    await receiver?.close();
  });

  // First: the sampled trace after it is the barrier that shows this one's spans would have been exported.
  let sampledOutTraceId = '';
  it('keeps a trace the caller sampled out out of every process, and hands the decision on in its events', async () => {
    const client = new HttpClient(system.authUrl);
    const { user } = await signUp(client);
    sampledOutTraceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const reset = await new HttpClient(system.authUrl).post('request-password-reset', { email: user.email }, { headers: { traceparent: `00-${sampledOutTraceId}-${callerSpanId}-00` } });
    expect(reset.status, reset.text).toBe(200);
    await system.smtp!.waitForMail(user.email, { timeoutMs: 30_000 });
    const carried = await system.query<{ traceparent: string | null }>(
      "select metadata->>'traceparent' as traceparent from events where metadata->>'traceparent' like $1",
      [`00-${sampledOutTraceId}-%`],
    );
    expect(carried.length).toBeGreaterThan(0);
    // Not the caller's span: the api's own sampled-out request, still flagged not sampled.
    for (const { traceparent } of carried) {
      expect(traceparent).toMatch(new RegExp(`^00-${sampledOutTraceId}-[0-9a-f]{16}-00$`));
      expect(traceparent).not.toContain(callerSpanId);
    }
  });

  it('continues the caller\'s trace in the api, the projector and the mailer', async () => {
    const client = new HttpClient(system.authUrl);
    const { user } = await signUp(client);
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const reset = await new HttpClient(system.authUrl).post('request-password-reset', { email: user.email }, { headers: { traceparent: `00-${traceId}-${callerSpanId}-01` } });
    expect(reset.status, reset.text).toBe(200);

    const joined = (): string[] => {
      const spans = receiver.trace(traceId);
      const missing: string[] = [];
      // The caller's span is the parent of the api's request span: the incoming traceparent was honoured.
      if (!spans.some((span) => span.service === 'portcullis-api' && span.parentSpanId === callerSpanId)) missing.push('api request span under the caller');
      if (!spans.some((span) => span.service === 'portcullis-api' && span.name === 'command request-password-reset')) missing.push('api command span');
      // Postgres is instrumented: the command's append is a span of the trace.
      if (!spans.some((span) => span.service === 'portcullis-api' && span.name.startsWith('pg.query'))) missing.push('api Postgres span');
      if (!spans.some((span) => span.service === 'portcullis-projector' && span.name.startsWith('projection '))) missing.push('projector batch span');
      if (!spans.some((span) => span.service === 'portcullis-mailer' && span.name === 'mail delivery')) missing.push('mailer delivery span');
      return missing;
    };
    await waitFor(() => joined().length === 0, { timeoutMs: 30_000, message: 'spans of the trace from api, projector and mailer' }).catch((error: unknown) => {
      throw new Error(`${String(error)}\nmissing: ${joined().join(', ')}\nreceived: ${JSON.stringify(receiver.trace(traceId), null, 1)}`);
    });
    const spans = receiver.trace(traceId);
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['portcullis-api', 'portcullis-projector', 'portcullis-mailer']));
    // Every span hangs from another span of the trace, or from the caller's.
    const ids = new Set([callerSpanId, ...spans.map((span) => span.spanId)]);
    expect(spans.filter((span) => !ids.has(span.parentSpanId)).map((span) => `${span.service} ${span.name}`)).toEqual([]);
    // Each process ended the sampled-out trace's work before this one's began, and exports spans in the order they end.
    expect(sampledOutTraceId).not.toBe('');
    expect(receiver.trace(sampledOutTraceId)).toEqual([]);
    // slonik traces itself through the global API; its spans (one per interceptor phase, a trace per query outside a request) are silenced.
    expect(receiver.spans.filter((span) => span.name.startsWith('slonik.')).map((span) => `${span.service} ${span.name}`)).toEqual([]);
  });

  it('starts a trace of its own for a request without a traceparent, on the trace id its sampler decided on, and the projector and mailer continue it', async () => {
    const client = new HttpClient(system.authUrl);
    const { user } = await signUp(client);
    const reset = await client.post('request-password-reset', { email: user.email });
    expect(reset.status, reset.text).toBe(200);
    // The earlier resets hang from their callers' spans: this is the only reset whose span is a root.
    const rootOfReset = (): string | undefined =>
      receiver.spans.find((span) => span.service === 'portcullis-api' && span.parentSpanId === '' && span.name.endsWith('/request-password-reset'))?.traceId;
    const continued = (traceId: string): boolean => ['portcullis-projector', 'portcullis-mailer'].every((service) => receiver.trace(traceId).some((span) => span.service === service));
    await waitFor(() => rootOfReset() !== undefined && continued(rootOfReset()!), { timeoutMs: 30_000, message: 'the api\'s root span and the projector\'s and mailer\'s spans in its trace' }).catch((error: unknown) => {
      throw new Error(`${String(error)}\nreceived: ${JSON.stringify(receiver.spans.filter((span) => span.service !== 'portcullis-api' || span.name.includes('reset')), null, 1)}`);
    });
    const traceId = rootOfReset()!;
    // The command's events carry the request's trace on.
    const carried = await system.query<{ count: string }>("select count(*) from events where metadata->>'traceparent' like $1", [`00-${traceId}-%-01`]);
    expect(Number(carried[0]!.count)).toBeGreaterThan(0);
    const spans = receiver.trace(traceId);
    const ids = new Set(spans.map((span) => span.spanId));
    // One root, the request's; every other span hangs from a span of the trace.
    expect(spans.filter((span) => !ids.has(span.parentSpanId)).map((span) => `${span.service} ${span.name}`)).toEqual([`portcullis-api POST ${new URL(system.authUrl).pathname}/request-password-reset`]);
  });
});
