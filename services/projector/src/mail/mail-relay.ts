import { sql, mailJobFromEvent, mailJobEventTypes, CheckpointFencedError, type DatabasePool, type MailBus, type ProjectedEvent, type ProjectionTarget } from '@portcullis/platform';

export const MAIL_RELAY = 'mail-relay';

/**
 * With KAFKA_BROKERS: follows the log and publishes each `mail.job_queued.v1` as a mail job message (its own
 * contract) to its topic, keyed by user. The checkpoint moves only after Kafka acknowledged the batch, so a
 * crash publishes a batch again rather than losing it; the mailer's delivery log makes that harmless.
 */
export class MailRelayTarget implements ProjectionTarget {
  readonly name = MAIL_RELAY;
  readonly handles = mailJobEventTypes;

  constructor(
    private readonly pool: DatabasePool,
    private readonly bus: MailBus,
  ) {}

  async readCheckpoint(): Promise<number> {
    await this.pool.query(sql.unsafe`
      INSERT INTO projection_checkpoints (name, position) VALUES (${this.name}, 0) ON CONFLICT (name) DO NOTHING`);
    return Number(await this.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${this.name}`));
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number): Promise<void> {
    await this.pool.transaction(async (tx) => {
      // Fence before publishing: a holder that lost its lock must not publish behind the new holder's back.
      const stored = await tx.maybeOneFirst(sql.unsafe`
        SELECT position FROM projection_checkpoints WHERE name = ${this.name} FOR UPDATE`);
      if (stored === null || Number(stored) !== from) throw new CheckpointFencedError(this.name, from);
      const jobs = events.map(mailJobFromEvent).filter((job) => job !== null);
      await this.bus.publish(jobs);
      await tx.query(sql.unsafe`UPDATE projection_checkpoints SET position = ${to}, updated_at = now() WHERE name = ${this.name}`);
    });
  }

  async reset(): Promise<void> {
    await this.pool.query(sql.unsafe`
      INSERT INTO projection_checkpoints (name, position) VALUES (${this.name}, 0)
      ON CONFLICT (name) DO UPDATE SET position = 0, updated_at = now()`);
  }
}
