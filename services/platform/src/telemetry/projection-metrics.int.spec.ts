import { randomUUID } from 'node:crypto';
import { metrics as sdkMetrics } from '@opentelemetry/sdk-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserRegistered } from '@portcullis/contracts';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { observeProjections } from './projection-metrics.ts';
import { useMeterProvider } from './telemetry.ts';

/** The lag gauges read the log through the port: its head, the oldest event after a checkpoint, the count between. */
describe('projection lag gauges (real Postgres, SDK registered in process)', () => {
  let db: EventLogDatabase;
  const reader = new sdkMetrics.PeriodicExportingMetricReader({
    exporter: new sdkMetrics.InMemoryMetricExporter(sdkMetrics.AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 60_000,
  });

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_metrics');
    useMeterProvider(new sdkMetrics.MeterProvider({ readers: [reader] }));
  });

  afterAll(async () => {
    await db?.close();
  });

  async function gauges(): Promise<Map<string, Map<string, number>>> {
    const collected = await reader.collect();
    const byName = new Map<string, Map<string, number>>();
    for (const metric of collected.resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)) {
      byName.set(metric.descriptor.name, new Map(metric.dataPoints.map((point) => [String(point.attributes.projection), point.value as number])));
    }
    return byName;
  }

  it('reports each held projection its checkpoint, the events it trails and how long the oldest has waited; none for one held elsewhere', async () => {
    const writtenAfter = Date.now();
    for (let i = 0; i < 5; i += 1) {
      const userId = randomUUID();
      await db.store.append([domainWrite(`user-${userId}`, 'no_stream', [UserRegistered({ userId, email: `${userId}@example.test`, name: 'U', image: null, emailVerified: false })], metadataAt(new Date()))]);
    }
    const head = await db.store.headPosition();
    const [, second] = await db.store.readAll({ after: 0, limit: 2 });
    observeProjections(db.store, [
      { name: 'behind', checkpointPosition: second!.position },
      { name: 'also-behind', checkpointPosition: second!.position },
      { name: 'caught-up', checkpointPosition: head },
      { name: 'held-elsewhere', checkpointPosition: null },
    ]);

    const observed = await gauges();
    const checkpoint = observed.get('portcullis.projection.checkpoint')!;
    const lagEvents = observed.get('portcullis.projection.lag.events')!;
    const lagSeconds = observed.get('portcullis.projection.lag.seconds')!;
    expect(Object.fromEntries(checkpoint)).toEqual({ behind: second!.position, 'also-behind': second!.position, 'caught-up': head });
    expect(Object.fromEntries(lagEvents)).toEqual({ behind: 3, 'also-behind': 3, 'caught-up': 0 });
    expect(lagSeconds.get('caught-up')).toBe(0);
    // The oldest event it trails is the third, written during this spec.
    expect(lagSeconds.get('behind')).toBeGreaterThanOrEqual(0);
    expect(lagSeconds.get('behind')).toBeLessThanOrEqual((Date.now() - writtenAfter) / 1000 + 1);
    expect(lagSeconds.get('also-behind')).toBe(lagSeconds.get('behind'));
  });
});
