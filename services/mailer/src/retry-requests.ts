import { MailRetryRequested } from '@portcullis/contracts';
import {
  fencedOr,
  moveStoredCheckpoint,
  ProjectionRunner,
  sql,
  type DatabasePool,
  type EventStore,
  type ProjectedEvent,
  type ProjectionControl,
  type ProjectionTarget,
  type RunnerLogger,
} from '@portcullis/platform';

/** The checkpoint of a mailer group's follower of retry requests (in `projection_checkpoints`). */
export function retryFollowerName(group: string): string {
  return `mail-retries:${group}`;
}

/**
 * Applies the retries operators ask for (`mail.retry_requested.v1`, POST /ops/mail/deliveries/:jobId/retry)
 * to the delivery log the mailer owns: a dead job becomes pending again, due now, with its attempts counted
 * afresh and a retry window counted from its next attempt. Only a job that died before the retry was asked
 * is revived, so a retry asked for twice, or read again after a restart, sends nothing more. The rows and
 * the checkpoint move in one transaction.
 */
class RetryRequestTarget implements ProjectionTarget {
  readonly handles: ReadonlySet<string> = new Set([MailRetryRequested.type]);

  constructor(
    private readonly pool: DatabasePool,
    private readonly store: Pick<EventStore, 'headPosition' | 'readAll'>,
    readonly name: string,
    private readonly revived: () => void,
  ) {}

  async readCheckpoint(): Promise<number> {
    const kept = await this.pool.maybeOneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${this.name}`);
    if (kept !== null) return Number(kept);
    // A new follower starts before the first retry ever asked (none: at the head), not at the log's start:
    // every event before that is none of its business. The head is read first, so a retry asked meanwhile
    // lies past it and is read by the follower.
    const head = await this.store.headPosition();
    const [first] = await this.store.readAll({ after: 0, until: head, limit: 1, types: [MailRetryRequested.type], fields: { data: [], metadata: [] } });
    await this.pool.query(sql.unsafe`
      INSERT INTO projection_checkpoints (name, position) VALUES (${this.name}, ${first ? first.position - 1 : head})
      ON CONFLICT (name) DO NOTHING`);
    return Number(await this.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${this.name}`));
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number): Promise<void> {
    let revived = 0;
    await this.pool
      .transaction(async (tx) => {
        for (const { event, recorded } of events) {
          if (event.type !== MailRetryRequested.type) continue;
          const result = await tx.query(sql.unsafe`
            UPDATE mail_delivery SET status = 'pending', attempts = 0, next_attempt_at = now(), dead_at = NULL, updated_at = now(),
              first_attempted_at = NULL, waiting_for_relay = false
            WHERE job_id = ${event.data.jobId} AND status = 'dead' AND dead_at <= ${sql.timestamp(recorded.recordedAt)}`);
          revived += result.rowCount;
        }
        await tx.query(moveStoredCheckpoint(this.name, from, to, null));
      })
      .catch((error: unknown) => {
        throw fencedOr(error, this.name, from);
      });
    if (revived > 0) this.revived();
  }
}

/** Follows the log for retry requests, one holder per mailer group (a projection runner: lock, standby takeover). */
export function followRetryRequests(options: {
  readonly store: EventStore;
  readonly pool: DatabasePool;
  readonly databaseUrl: string;
  readonly group: string;
  readonly control: ProjectionControl;
  readonly log: RunnerLogger;
  readonly pollIntervalMs: number;
  /** A job became pending again: the worker should look for due jobs now. */
  readonly revived: () => void;
}): ProjectionRunner {
  const runner = new ProjectionRunner({
    store: options.store,
    target: new RetryRequestTarget(options.pool, options.store, retryFollowerName(options.group), options.revived),
    databaseUrl: options.databaseUrl,
    batchSize: 500,
    pollIntervalMs: options.pollIntervalMs,
    control: options.control,
    log: options.log,
  });
  runner.start();
  return runner;
}
