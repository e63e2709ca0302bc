import { mailJobSchema, type MailJob } from '@portcullis/contracts';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from '@portcullis/platform';

export interface DueDelivery {
  readonly job: MailJob;
  readonly attempts: number;
}

export type DeliveryOutcome =
  | { readonly status: 'sent'; readonly transport: string; readonly messageId: string | null; readonly response: string }
  | { readonly status: 'retry'; readonly error: string; readonly nextAttemptAt: Date }
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
   * Takes one due job and runs `deliver` on it while holding its row, then records the outcome. Resolves
   * false when nothing was due.
   */
  async deliverNext(deliver: (due: DueDelivery) => Promise<DeliveryOutcome>): Promise<boolean> {
    return this.pool.transaction(async (tx) => {
      const row = (await tx.maybeOne(sql.unsafe`
        SELECT job, attempts FROM mail_delivery
        WHERE status = 'pending' AND next_attempt_at <= now()
        ORDER BY next_attempt_at, received_at
        LIMIT 1 FOR UPDATE SKIP LOCKED`)) as { job: unknown; attempts: number } | null;
      if (!row) return false;
      const job = mailJobSchema.parse(row.job);
      const outcome = await deliver({ job, attempts: row.attempts });
      await record(tx, job.jobId, outcome);
      return true;
    });
  }
}

async function record(tx: DatabaseTransactionConnection, jobId: string, outcome: DeliveryOutcome): Promise<void> {
  switch (outcome.status) {
    case 'sent':
      await tx.query(sql.unsafe`
        UPDATE mail_delivery SET status = 'sent', attempts = attempts + 1, sent_at = now(), updated_at = now(),
          transport = ${outcome.transport}, message_id = ${outcome.messageId}, smtp_response = ${outcome.response.slice(0, 1000)},
          last_error = NULL
        WHERE job_id = ${jobId}`);
      return;
    case 'retry':
      await tx.query(sql.unsafe`
        UPDATE mail_delivery SET attempts = attempts + 1, updated_at = now(), last_error = ${outcome.error.slice(0, 1000)},
          next_attempt_at = ${sql.timestamp(outcome.nextAttemptAt)}
        WHERE job_id = ${jobId}`);
      return;
    case 'dead':
      await tx.query(sql.unsafe`
        UPDATE mail_delivery SET status = 'dead', attempts = attempts + 1, dead_at = now(), updated_at = now(),
          last_error = ${outcome.error.slice(0, 1000)}
        WHERE job_id = ${jobId}`);
      return;
    default: {
      const unreachable: never = outcome;
      return unreachable;
    }
  }
}
