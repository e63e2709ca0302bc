import type { MailJob } from '@portcullis/contracts';

export interface MailBusConsumer {
  stop(): Promise<void>;
}

export interface ConsumeOptions {
  /** Consumers sharing a group share the work; each group sees every job. */
  readonly group: string;
  /**
   * Called for each job. A job counts as consumed once this resolves; if it throws, the job (and what
   * follows it for the same user and kind) is delivered again. Must therefore be idempotent per job id.
   */
  readonly handle: (job: MailJob) => Promise<void>;
}

/**
 * How mail jobs travel from the api to the mailer: at least once, in order per user and kind (the event log
 * keeps a user's jobs of every kind in order; Kafka, a topic per kind, only those of one kind), resuming after the last
 * consumed job when a consumer restarts. Adapters: the event log itself (`event-log.ts`, the default) and
 * Kafka (`kafka.ts`, with KAFKA_BROKERS). The shared contract suite is tests/adapter-suites/mail-bus.suite.ts.
 */
export interface MailBus {
  readonly name: string;
  /** Resolves once the bus holds the jobs durably. */
  publish(jobs: readonly MailJob[]): Promise<void>;
  consume(options: ConsumeOptions): Promise<MailBusConsumer>;
  close(): Promise<void>;
}
