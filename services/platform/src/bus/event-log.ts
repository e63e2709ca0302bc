import { MailJobQueued, streams, type MailJob } from '@portcullis/contracts';
import { sql, type DatabasePool } from '../database/pool.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { CHECKPOINT_CHANNEL, fencedOr, moveStoredCheckpoint, readStoredCheckpoint } from '../projection/postgres-target.ts';
import { CheckpointFencedError, type ProjectedEvent, type ProjectionTarget } from '../projection/projection.ts';
import type { ProjectionControl } from '../projection/control.ts';
import { ProjectionRunner, type RunnerLogger } from '../projection/runner.ts';
import type { ConsumeOptions, MailBus, MailBusConsumer } from './mail-bus.ts';

/** The checkpoint name of a consumer group following the log (in `projection_checkpoints`). */
function eventLogConsumerName(group: string): string {
  return `mail-bus:${group}`;
}

/** The only events a mail consumer or relay is handed. */
export const mailJobEventTypes: ReadonlySet<string> = new Set([MailJobQueued.type]);

/** A `mail.job_queued.v1` event read back as the job the mailer works on. */
export function mailJobFromEvent(projected: ProjectedEvent): MailJob | null {
  const { event, recorded } = projected;
  if (event.type !== MailJobQueued.type) return null;
  return { ...event.data, requestedAt: recorded.metadata.occurredAt, traceparent: recorded.metadata.traceparent ?? null };
}

/**
 * The default bus: no bus at all. The api appends each job to the log (`mail.job_queued.v1`) in the same
 * atomic write as the fact the mail announces, and each consumer group follows the log with a checkpoint of
 * its own, held by one process at a time (a projection runner: advisory lock, standby takeover). The
 * checkpoint moves only after `handle` has resolved for the batch's jobs: at least once.
 */
export class EventLogMailBus implements MailBus {
  readonly name = 'event-log';
  private readonly consumers = new Set<ProjectionRunner>();

  constructor(
    private readonly options: {
      readonly store: EventStore;
      readonly pool: DatabasePool;
      readonly databaseUrl: string;
      readonly log: RunnerLogger;
      readonly batchSize?: number;
      readonly pollIntervalMs?: number;
      readonly standbyIntervalMs?: number;
      /** Where the process hears rebuild requests (see ProjectionRunner). */
      readonly control: ProjectionControl;
    },
  ) {}

  async publish(jobs: readonly MailJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.options.store.append(
      jobs.map((job) => {
        const { requestedAt, traceparent, ...data } = job;
        const event = MailJobQueued(data);
        return {
          streamId: streams.mail(job.jobId),
          expectedVersion: 'no_stream' as const,
          events: [{ type: event.type, data: event.data, metadata: { occurredAt: requestedAt, traceparent } }],
        };
      }),
    );
  }

  async consume(options: ConsumeOptions): Promise<MailBusConsumer> {
    const runner = new ProjectionRunner({
      store: this.options.store,
      target: new ConsumerTarget(this.options.pool, eventLogConsumerName(options.group), options.handle),
      databaseUrl: this.options.databaseUrl,
      batchSize: this.options.batchSize ?? 100,
      pollIntervalMs: this.options.pollIntervalMs ?? 1000,
      ...(this.options.standbyIntervalMs === undefined ? {} : { standbyIntervalMs: this.options.standbyIntervalMs }),
      log: this.options.log,
      control: this.options.control,
    });
    this.consumers.add(runner);
    runner.start();
    return {
      stop: async () => {
        this.consumers.delete(runner);
        await runner.stop();
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((runner) => runner.stop()));
    this.consumers.clear();
  }
}

class ConsumerTarget implements ProjectionTarget {
  readonly handles = mailJobEventTypes;

  constructor(
    private readonly pool: DatabasePool,
    readonly name: string,
    private readonly handle: (job: MailJob) => Promise<void>,
  ) {}

  readCheckpoint(): Promise<number> {
    return readStoredCheckpoint(this.pool, this.name);
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number): Promise<void> {
    // Fenced like a projection, before and after handing the jobs on: a holder that lost its lock stops
    // rather than move the checkpoint under the new holder. The handler runs outside the transaction (it
    // writes with connections of its own); at least once is the contract, so a job handed on twice is fine.
    const before = await this.pool.maybeOneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${this.name}`);
    if (before === null || Number(before) !== from) throw new CheckpointFencedError(this.name, from);
    for (const projected of events) {
      const job = mailJobFromEvent(projected);
      if (job) await this.handle(job);
    }
    await this.pool.query(moveStoredCheckpoint(this.name, from, to, CHECKPOINT_CHANNEL)).catch((error: unknown) => {
      throw fencedOr(error, this.name, from);
    });
  }

  async reset(): Promise<void> {
    await this.pool.query(sql.unsafe`UPDATE projection_checkpoints SET position = 0, updated_at = now() WHERE name = ${this.name}`);
  }
}
