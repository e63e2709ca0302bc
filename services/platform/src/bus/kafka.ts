import { readFileSync } from 'node:fs';
import kafkajs, { type Admin, type Consumer, type Kafka, type Producer, type SASLOptions } from 'kafkajs';
import { mailKinds, mailTopics, parseMailJobMessage, toMailJobMessage, type MailJob, type MailKind } from '@portcullis/contracts';
import type { ConsumeOptions, MailBus, MailBusConsumer } from './mail-bus.ts';

const { Kafka: KafkaClient, logLevel } = kafkajs;

export interface KafkaMailBusOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Put in front of every topic name (empty in production; tests use it to keep runs apart). */
  readonly topicPrefix: string;
  readonly log: { warn(obj: object, message: string): void; error(obj: object, message: string): void };
  /** How long a consumer may go unheard before its group gives its partitions to the others. */
  readonly sessionTimeoutMs?: number;
  /** Partitions of each topic this bus creates (one it finds is left as it is). */
  readonly partitions?: number;
  /** Replicas of each topic this bus creates; null: the broker's `default.replication.factor`. */
  readonly replicationFactor?: number | null;
  /** TLS to the brokers, checked against the system CAs or those of `caFile` (PEM). */
  readonly ssl?: { readonly caFile: string | null } | null;
  readonly sasl?: { readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; readonly username: string; readonly password: string } | null;
}

/** Topics this bus creates have this many partitions unless told: a few mailers can share each kind. */
export const defaultMailTopicPartitions = 6;

function mailTopicName(prefix: string, kind: MailKind): string {
  return `${prefix}${mailTopics[kind]}`;
}

/**
 * Mail jobs on Kafka: one topic per kind (`auth.mail.verification`, ...), keyed by user id so one user's
 * mail keeps its order, values the versioned message contract (`portcullis.mail-job.v1`), the trace
 * context in a `traceparent` header. Producers wait for all in-sync replicas and are idempotent; consumers
 * are a consumer group that commits an offset only after `handle` resolved for the message.
 */
export class KafkaMailBus implements MailBus {
  readonly name = 'kafka';
  private readonly kafka: Kafka;
  private producer: Producer | null = null;
  private topicsReady: Promise<void> | null = null;
  private readonly consumers = new Set<Consumer>();

  constructor(private readonly options: KafkaMailBusOptions) {
    this.kafka = new KafkaClient({
      clientId: options.clientId,
      brokers: [...options.brokers],
      ssl: options.ssl ? (options.ssl.caFile ? { ca: [readFileSync(options.ssl.caFile, 'utf8')] } : true) : false,
      ...(options.sasl ? { sasl: { mechanism: options.sasl.mechanism, username: options.sasl.username, password: options.sasl.password } as SASLOptions } : {}),
      logLevel: logLevel.WARN,
      logCreator: () => ({ level, log }) => {
        const { message, ...rest } = log;
        if (level <= logLevel.ERROR) options.log.error(rest, `kafka: ${message}`);
        else options.log.warn(rest, `kafka: ${message}`);
      },
    });
  }

  private topics(): string[] {
    return mailKinds.map((kind) => mailTopicName(this.options.topicPrefix, kind));
  }

  /** Creates the topics once (existing ones are left as they are). */
  private ensureTopics(): Promise<void> {
    this.topicsReady ??= (async () => {
      const admin: Admin = this.kafka.admin();
      await admin.connect();
      try {
        await admin.createTopics({
          waitForLeaders: true,
          topics: this.topics().map((topic) => ({
            topic,
            numPartitions: this.options.partitions ?? defaultMailTopicPartitions,
            // -1 asks the broker for its default.replication.factor, what the cluster's operator set for it.
            replicationFactor: this.options.replicationFactor ?? -1,
          })),
        });
      } finally {
        await admin.disconnect();
      }
    })().catch((error: unknown) => {
      this.topicsReady = null;
      throw error;
    });
    return this.topicsReady;
  }

  async publish(jobs: readonly MailJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.ensureTopics();
    if (!this.producer) {
      const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await producer.connect();
      this.producer = producer;
    }
    const byTopic = new Map<string, { key: string; value: string; headers: Record<string, string> }[]>();
    for (const job of jobs) {
      const topic = mailTopicName(this.options.topicPrefix, job.kind);
      const messages = byTopic.get(topic) ?? [];
      messages.push({
        key: job.userId,
        value: JSON.stringify(toMailJobMessage(job)),
        headers: { 'job-id': job.jobId, ...(job.traceparent ? { traceparent: job.traceparent } : {}) },
      });
      byTopic.set(topic, messages);
    }
    await this.producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
  }

  async consume(options: ConsumeOptions): Promise<MailBusConsumer> {
    await this.ensureTopics();
    const sessionTimeout = this.options.sessionTimeoutMs ?? 30_000;
    const consumer = this.kafka.consumer({
      groupId: options.group,
      allowAutoTopicCreation: false,
      sessionTimeout,
      // Three heartbeats a session at least, as Kafka advises, so one lost heartbeat does not cost the partitions.
      heartbeatInterval: Math.min(3000, Math.floor(sessionTimeout / 3)),
    });
    await consumer.connect();
    await consumer.subscribe({ topics: this.topics(), fromBeginning: true });
    this.consumers.add(consumer);
    await consumer.run({
      // Commit after each handled message, so a restart redelivers at most the messages in flight.
      autoCommit: true,
      autoCommitThreshold: 1,
      eachMessage: async ({ topic, partition, message }) => {
        let job: MailJob;
        try {
          job = parseMailJobMessage(JSON.parse(message.value?.toString('utf8') ?? 'null'));
        } catch (error) {
          // A message that can never be read would block its partition for ever: report it and move on.
          this.options.log.error({ err: error, topic, partition, offset: message.offset }, 'unreadable mail job message skipped');
          return;
        }
        await options.handle(job);
      },
    });
    return {
      stop: async () => {
        this.consumers.delete(consumer);
        await consumer.disconnect();
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.disconnect().catch(() => {})));
    this.consumers.clear();
    await this.producer?.disconnect().catch(() => {});
    this.producer = null;
  }
}
