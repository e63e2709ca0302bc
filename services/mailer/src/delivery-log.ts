import { mailJobSchema, type MailJob } from '@portcullis/contracts';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from '@portcullis/platform';

export interface DueDelivery {
  readonly job: MailJob;
  readonly attempts: number;
  /** When its first attempt was made: now, for a job never tried (or revived by an operator's retry). */
  readonly firstAttemptedAt: Date;
}

/** Postgres wakes the mailers listening here when jobs waiting for the relay were made due (see releaseWaitingForRelay). */
export const MAIL_DUE_CHANNEL = 'portcullis_mail_due';

export type DeliveryOutcome =
  | { readonly status: 'sent'; readonly transport: string; readonly messageId: string | null; readonly response: string }
  | {
      readonly status: 'retry';
      readonly error: string;
      readonly nextAttemptAt: Date;
      /** The relay could not be used at all (down, unreachable, closing sessions), rather than deferring this mail. */
      readonly waitingForRelay: boolean;
    }
  | { readonly status: 'dead'; readonly error: string };

/**
 * The delivery log, keyed by job id: what makes a job that the bus brings twice a single mail. Taking a due
 * job locks its row (FOR UPDATE SKIP LOCKED) for as long as its delivery runs, inside one transaction that
 * also records the outcome: a mailer that dies mid-delivery leaves the job pending for the next one, and a
 * job recorded as sent is never taken again.
 */
export class DeliveryLog {
  constructor(private readonly pool: DatabasePool) {}

  /** Records a job as pending; false when it was known already (a redelivery). */
  async enqueue(job: MailJob): Promise<boolean> {
    const inserted = await this.pool.maybeOneFirst(sql.unsafe`
      INSERT INTO mail_delivery (job_id, kind, user_id, recipient, job)
      VALUES (${job.jobId}, ${job.kind}, ${job.userId}, ${job.to}, ${sql.jsonb(job)})
      ON CONFLICT (job_id) DO NOTHING
      RETURNING job_id`);
    return inserted !== null;
  }

  /**
   * Takes one due job and runs `deliver` on it while holding its row, then records the outcome. Resolves to
   * that outcome, or null when nothing was due.
   */
  async deliverNext(deliver: (due: DueDelivery) => Promise<DeliveryOutcome>): Promise<DeliveryOutcome | null> {
    return this.pool.transaction(async (tx) => {
      const row = (await tx.maybeOne(sql.unsafe`
        SELECT job, attempts, coalesce(first_attempted_at, now()) AS first_attempted_at FROM mail_delivery
        WHERE status = 'pending' AND next_attempt_at <= now()
        ORDER BY next_attempt_at, received_at
        LIMIT 1 FOR UPDATE SKIP LOCKED`)) as { job: unknown; attempts: number; first_attempted_at: number } | null;
      if (!row) return null;
      const job = mailJobSchema.parse(row.job);
      const outcome = await deliver({ job, attempts: row.attempts, firstAttemptedAt: new Date(row.first_attempted_at) });
      await record(tx, job.jobId, outcome);
      return outcome;
    });
  }

  /**
   * The relay works again (a mail just went through): every job waiting out a backoff because the relay could
   * not be used becomes due now, so the backlog of an outage goes out at once instead of each job at the end
   * of its own backoff, and mailers of every process are told (MAIL_DUE_CHANNEL). Jobs the relay deferred
   * themselves keep their backoff. Rows another mailer holds are skipped, not waited for: those are being
   * delivered or released already. Resolves to how many were made due.
   */
  async releaseWaitingForRelay(): Promise<number> {
    // One statement, one round trip after every mail sent: the notice goes out with its commit, and only when
    // a job was released.
    const { released } = (await this.pool.one(sql.unsafe`
        WITH released AS (
          UPDATE mail_delivery SET next_attempt_at = now(), updated_at = now()
          WHERE job_id IN (
            SELECT job_id FROM mail_delivery
            WHERE status = 'pending' AND waiting_for_relay AND next_attempt_at > now()
            FOR UPDATE SKIP LOCKED)
          RETURNING job_id),
        notice AS (SELECT pg_notify(${MAIL_DUE_CHANNEL}, '') FROM (SELECT FROM released LIMIT 1) AS any_released)
        SELECT (SELECT count(*) FROM released)::int AS released, (SELECT count(*) FROM notice)::int AS notified`)) as {
      released: number;
      notified: number;
    };
    return released;
  }
}

/**
 * The outcome's own time is when it was recorded (clock_timestamp), after the delivery; the first attempt's is
 * when the delivery began (now(): the transaction's start, which deliverNext handed to the worker).
 */
async function record(tx: DatabaseTransactionConnection, jobId: string, outcome: DeliveryOutcome): Promise<void> {
  switch (outcome.status) {
    case 'sent':
      await tx.query(sql.unsafe`
        UPDATE mail_delivery SET status = 'sent', attempts = attempts + 1, sent_at = clock_timestamp(), updated_at = clock_timestamp(),
          first_attempted_at = coalesce(first_attempted_at, now()), waiting_for_relay = false,
          transport = ${outcome.transport}, message_id = ${outcome.messageId}, smtp_response = ${outcome.response.slice(0, 1000)},
          last_error = NULL
        WHERE job_id = ${jobId}`);
      return;
    case 'retry':
      await tx.query(sql.unsafe`
        UPDATE mail_delivery SET attempts = attempts + 1, updated_at = clock_timestamp(), last_error = ${outcome.error.slice(0, 1000)},
          first_attempted_at = coalesce(first_attempted_at, now()), waiting_for_relay = ${outcome.waitingForRelay},
          next_attempt_at = ${sql.timestamp(outcome.nextAttemptAt)}
        WHERE job_id = ${jobId}`);
      return;
    case 'dead':
      await tx.query(sql.unsafe`
        UPDATE mail_delivery SET status = 'dead', attempts = attempts + 1, dead_at = clock_timestamp(), updated_at = clock_timestamp(),
          first_attempted_at = coalesce(first_attempted_at, now()), waiting_for_relay = false,
          last_error = ${outcome.error.slice(0, 1000)}
        WHERE job_id = ${jobId}`);
      return;
    default: {
      const unreachable: never = outcome;
      return unreachable;
    }
  }
}
