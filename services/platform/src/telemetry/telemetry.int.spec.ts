import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { metrics as sdkMetrics, tracing } from '@opentelemetry/sdk-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError, OrganizationJoined, type StreamModel } from '@portcullis/contracts';
import { createEventLogDatabase, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { CommandHandler } from '../command/command-handler.ts';
import { systemRequest } from '../command/request-metadata.ts';
import { useMeterProvider } from './telemetry.ts';

const joined: StreamModel<number> = {
  name: 'spec-telemetry',
  revision: 1,
  initial: () => 0,
  evolve: (count) => count + 1,
};

describe('telemetry of commands (real Postgres, SDK registered in process)', () => {
  let db: EventLogDatabase;
  const spans = new tracing.InMemorySpanExporter();
  const reader = new sdkMetrics.PeriodicExportingMetricReader({
    exporter: new sdkMetrics.InMemoryMetricExporter(sdkMetrics.AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 60_000,
  });

  beforeAll(async () => {
    db = await createEventLogDatabase('telemetry');
    const tracerProvider = new tracing.BasicTracerProvider({ spanProcessors: [new tracing.SimpleSpanProcessor(spans)] });
    trace.setGlobalTracerProvider(tracerProvider);
    useMeterProvider(new sdkMetrics.MeterProvider({ readers: [reader] }));
  });

  afterAll(async () => {
    trace.disable();
    await db?.close();
  });

  it('traces each command with its name and outcome, and counts runs, refusals and conflicts', async () => {
    const handler = new CommandHandler({ store: db.store, clock: () => new Date(), settle: async () => {}, backoff: { baseMs: 1, capMs: 2 } });
    const streamId = `spec-${randomUUID()}`;
    await handler.handle({ name: 'spec.join', request: systemRequest, actorId: null }, async (unit) => {
      const stream = await unit.load(streamId, joined);
      unit.append(streamId, [OrganizationJoined({ userId: 'u', organizationId: 'o' })], { expected: stream.version });
    });
    await handler
      .handle({ name: 'spec.refuse', request: systemRequest, actorId: null }, async () => {
        throw new DomainError('ORGANIZATION_ALREADY_EXISTS');
      })
      .catch(() => {});
    let tries = 0;
    await handler.handle({ name: 'spec.stale', request: systemRequest, actorId: null }, async (unit) => {
      tries += 1;
      // The first attempt expects a version the stream has left; the retry reads it fresh.
      unit.append(streamId, [OrganizationJoined({ userId: 'u', organizationId: 'p' })], { expected: tries === 1 ? 0 : 1 });
    });

    const finished = spans.getFinishedSpans();
    expect(finished.map((span) => span.name)).toEqual(['command spec.join', 'command spec.refuse', 'command spec.stale']);
    expect(finished[0]!.attributes['portcullis.command.position']).toBeGreaterThan(0);
    expect(finished[1]!.status.code).toBe(2);

    const collected = await reader.collect();
    const byName = new Map(collected.resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => [metric.descriptor.name, metric])));
    const runs = byName.get('portcullis.commands')!.dataPoints.map((point) => [point.attributes.command, point.attributes.outcome, point.value]);
    expect(runs).toEqual(
      expect.arrayContaining([
        ['spec.join', 'ok', 1],
        ['spec.refuse', 'ORGANIZATION_ALREADY_EXISTS', 1],
        ['spec.stale', 'ok', 1],
      ]),
    );
    const conflicts = byName.get('portcullis.command.conflicts')!.dataPoints.map((point) => [point.attributes.command, point.value]);
    expect(conflicts).toEqual([['spec.stale', 1]]);
  });
});
