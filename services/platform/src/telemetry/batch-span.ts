import { context, trace, type Attributes, type Link, type SpanContext } from '@opentelemetry/api';
import { inSpan, spanContextOf } from './telemetry.ts';

/** At most this many requests' traces get a span of a batch's work each (a rebuild's batch has thousands). */
const MAX_JOINED_TRACES = 64;

/**
 * Runs the work of a batch that serves many requests (a projection's batch of events) in a span of its own
 * linked to the requests' traces, and, once it is done, puts a span of the same time in each request's trace
 * (the `traceparent` its events carry), so a request's trace shows where its events were projected. With
 * tracing off the spans are the API's no-ops and nothing more is done: `traceparents` is asked only while
 * the batch's span records, so the projector's loop reads no event's metadata for it otherwise.
 */
export async function inBatchSpan<T>(name: string, attributes: Attributes, traceparents: () => Iterable<string | null | undefined>, work: () => Promise<T>): Promise<T> {
  const parents = new Map<string, SpanContext>();
  const started = Date.now();
  return inSpan(name, attributes, async (span) => {
    if (span.isRecording()) {
      for (const traceparent of traceparents()) {
        if (parents.size >= MAX_JOINED_TRACES) break;
        const parent = spanContextOf(traceparent);
        if (parent) parents.set(traceparent!, parent);
      }
      const links: Link[] = [...parents.values()].map((parent) => ({ context: parent }));
      span.addLinks(links);
    }
    const result = await work();
    if (parents.size > 0) {
      const tracer = trace.getTracer('portcullis');
      const batch = span.spanContext();
      for (const parent of parents.values()) {
        tracer
          .startSpan(name, { startTime: started, attributes, links: [{ context: batch }] }, trace.setSpanContext(context.active(), parent))
          .end();
      }
    }
    return result;
  });
}
