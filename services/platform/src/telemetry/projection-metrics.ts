import type { DatabasePool } from 'slonik';
import { sql } from '../database/pool.ts';
import { instruments } from './telemetry.ts';

export interface ObservedProjection {
  readonly name: string;
  /** The checkpoint while this process holds the projection; null while another does (it reports it). */
  readonly checkpointPosition: number | null;
}

interface LagRow {
  readonly name: string;
  readonly head: number;
  readonly oldest_unprojected_seconds: number | null;
}

/**
 * Each projection this process holds: its checkpoint, how many events of the log it trails, and how long
 * the oldest of them has waited (seconds), read from the log's head on each collection. A standby reports
 * nothing for a projection it does not hold, so a sum over processes counts each projection once.
 */
export function observeProjections(pool: DatabasePool, runners: readonly ObservedProjection[]): void {
  instruments((meter) => {
    const checkpoint = meter.createObservableGauge('portcullis.projection.checkpoint', { description: 'The log position a projection has applied up to' });
    const lagEvents = meter.createObservableGauge('portcullis.projection.lag.events', { description: 'Events of the log a projection has not applied yet' });
    const lagSeconds = meter.createObservableGauge('portcullis.projection.lag.seconds', {
      unit: 's',
      description: 'How long the oldest event a projection has not applied has been in the log',
    });
    // One query per collection serves the three gauges.
    meter.addBatchObservableCallback(async (observer) => {
      const held = runners.filter((runner) => runner.checkpointPosition !== null);
      if (held.length === 0) return;
      const rows = (await pool.any(sql.unsafe`
        SELECT p.name, h.position AS head,
               (SELECT extract(epoch FROM now() - e.recorded_at) FROM events e WHERE e.position > p.checkpoint ORDER BY e.position LIMIT 1)::float8
                 AS oldest_unprojected_seconds
        FROM unnest(${sql.array(held.map((r) => r.name), 'text')}::text[], ${sql.array(held.map((r) => r.checkpointPosition!), 'int8')}::bigint[]) AS p(name, checkpoint),
             event_log_head h`)) as readonly LagRow[];
      for (const row of rows) {
        const position = held.find((runner) => runner.name === row.name)?.checkpointPosition ?? null;
        if (position === null) continue;
        const attributes = { projection: row.name };
        observer.observe(checkpoint, position, attributes);
        observer.observe(lagEvents, Math.max(0, Number(row.head) - position), attributes);
        observer.observe(lagSeconds, row.oldest_unprojected_seconds ?? 0, attributes);
      }
    }, [checkpoint, lagEvents, lagSeconds]);
  })();
}
