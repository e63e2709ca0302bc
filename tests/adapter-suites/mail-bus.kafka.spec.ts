import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { MailJob } from '@portcullis/contracts';
import { KafkaMailBus, sql } from '@portcullis/platform';
import { createEventLogDatabase, type EventLogDatabase } from '../support/event-log.ts';
import { consumerGroupMembers, describeWithKafka, isolatedKafkaEnv, testKafkaBrokers } from '../support/kafka.ts';
import { mailerEnv, sealedJob, startMailer } from '../support/mailer-process.ts';
import { waitFor, type ServiceProcess } from '../support/processes.ts';
import { TestSmtpServer } from '../support/smtp.ts';
import { mailBusContract } from './mail-bus.suite.ts';

// The run's broker: started by global-setup from Maven's Apache Kafka, or KAFKA_BROKERS when given.
describeWithKafka('Kafka mail bus', () => {
  const log = { warn: () => {}, error: () => {} };
  // Each test gets topics and groups of its own (a prefix), so runs against a shared broker never meet.
  mailBusContract(
    'kafka',
    async () => {
      const run = randomBytes(4).toString('hex');
      const bus = new KafkaMailBus({
        brokers: testKafkaBrokers()!.split(','),
        clientId: `portcullis-test-${run}`,
        topicPrefix: `test-${run}.`,
        log,
        partitions: 2,
      });
      let groups = 0;
      return {
        bus,
        group: (label) => `test-${run}-${label}-${(groups += 1)}`,
        cleanup: () => bus.close(),
      };
    },
    { timeoutMs: 60_000 },
  );
});

/**
 * Real mailer processes in one consumer group on the run's broker, each spec with topics and a group of its own:
 * Kafka delivers at least once (the relay publishes again what it published before a crash; a consumer that
 * dies or loses its partitions leaves offsets uncommitted), and the delivery log, keyed by job id, turns that
 * into one mail per job.
 */
describeWithKafka('Kafka mail bus with real mailers: one mail per job', () => {
  const quiet = { warn: () => {}, error: () => {} };
  let db: EventLogDatabase;
  let smtp: TestSmtpServer;
  let env: Record<string, string>;
  let publisher: KafkaMailBus;
  const mailers: ServiceProcess[] = [];

  beforeEach(async () => {
    db = await createEventLogDatabase('mail_kafka');
    smtp = await TestSmtpServer.start();
    env = mailerEnv(db.url, smtp.url, {
      ...isolatedKafkaEnv('mailers'),
      // Two mailers share each kind; a killed one's partitions move on after the broker's shortest session.
      KAFKA_TOPIC_PARTITIONS: '4',
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      MAILER_CONCURRENCY: '8',
      MAILER_RETRY_BASE_MS: '200',
      MAILER_RETRY_MAX_MS: '1000',
    });
    publisher = new KafkaMailBus({ brokers: env.KAFKA_BROKERS!.split(','), clientId: `${env.KAFKA_CLIENT_ID}-relay`, topicPrefix: env.KAFKA_TOPIC_PREFIX!, partitions: 4, log: quiet });
  });

  afterEach(async () => {
    await Promise.all(mailers.splice(0).map((mailer) => mailer.stop()));
    await publisher?.close();
    await smtp?.close();
    await db?.close();
  });

  function startKafkaMailer(): ServiceProcess {
    const mailer = startMailer(env);
    mailers.push(mailer);
    return mailer;
  }

  async function recorded(): Promise<{ status: string; count: number }[]> {
    return (await db.pool.any(sql.unsafe`SELECT status, count(*)::int AS count FROM mail_delivery GROUP BY status ORDER BY status`)) as {
      status: string;
      count: number;
    }[];
  }

  /** Waits until the delivery log holds every job as sent; then each must have reached the inbox exactly once. */
  async function expectEachMailedOnce(jobs: readonly MailJob[]): Promise<void> {
    await waitFor(async () => {
      const rows = await recorded();
      return rows.length === 1 && rows[0]!.status === 'sent' && rows[0]!.count === jobs.length;
    }, { timeoutMs: 90_000, message: `${jobs.length} jobs sent (delivery log: ${JSON.stringify(await recorded())})\n${mailers.map((m) => m.output().slice(-1500)).join('\n')}` });
    const mailed = new Map<string, number>();
    for (const mail of smtp.mails) mailed.set(mail.jobId ?? '', (mailed.get(mail.jobId ?? '') ?? 0) + 1);
    const twice = [...mailed].filter(([, count]) => count > 1);
    expect(twice, 'jobs mailed more than once').toEqual([]);
    expect([...mailed.keys()].sort()).toEqual(jobs.map((job) => job.jobId).sort());
  }

  function jobsFor(label: string, count: number): MailJob[] {
    return Array.from({ length: count }, (_, n) => sealedJob(env, `${label}-${n}@example.test`, { userId: `user-${label}-${n % 7}` }));
  }

  it('mails a job the relay published twice once', async () => {
    startKafkaMailer();
    const userId = 'user-twice';
    const jobs = Array.from({ length: 5 }, (_, n) => sealedJob(env, `twice-${n}@example.test`, { userId }));
    await publisher.publish(jobs);
    await expectEachMailedOnce(jobs);

    // The relay died after Kafka took the jobs and before its checkpoint moved: it publishes them again. A job
    // after them, of the same user and kind, travels on the same partition behind them.
    const after = sealedJob(env, 'after@example.test', { userId });
    await publisher.publish([...jobs, after]);
    await smtp.waitForMail('after@example.test', { timeoutMs: 60_000 });
    await expectEachMailedOnce([...jobs, after]);
  });

  it('loses and doubles nothing when a mailer is killed (SIGKILL) while it holds a batch', async () => {
    // No mail leaves before the kill, so what the first mailer sent cannot be the question: what it took in is.
    smtp.refuseSessions = { code: 421, message: 'Service not available, try later' };
    const first = startKafkaMailer();
    const jobs = jobsFor('killed', 400);
    await publisher.publish(jobs);
    await waitFor(async () => (await recorded()).some((row) => row.count > 0), {
      timeoutMs: 60_000,
      message: `the first mailer to take jobs in\n${first.output().slice(-1500)}`,
    });
    first.kill('SIGKILL');
    await first.exited;
    const takenIn = (await recorded()).reduce((sum, row) => sum + row.count, 0);
    // Killed with part of the published jobs in the delivery log and the rest (and its uncommitted offsets) in Kafka.
    expect(takenIn).toBeGreaterThan(0);
    expect(takenIn).toBeLessThan(jobs.length);

    smtp.refuseSessions = null;
    startKafkaMailer();
    await expectEachMailedOnce(jobs);
  });

  it('loses and doubles nothing while a second mailer joins the group and leaves it', async () => {
    const group = env.KAFKA_MAILER_GROUP!;
    const published: MailJob[] = [];
    const publishRound = async (round: number): Promise<void> => {
      const jobs = jobsFor(`round${round}`, 40);
      published.push(...jobs);
      await publisher.publish(jobs);
    };

    startKafkaMailer();
    await waitFor(async () => (await consumerGroupMembers(group)) === 1, { timeoutMs: 60_000, message: 'the first mailer in the group' });
    await publishRound(1);
    const second = startKafkaMailer();
    await publishRound(2);
    await waitFor(async () => (await consumerGroupMembers(group)) === 2, { timeoutMs: 60_000, message: 'the second mailer in the group' });
    await publishRound(3);
    await second.stop();
    await publishRound(4);
    await waitFor(async () => (await consumerGroupMembers(group)) === 1, { timeoutMs: 60_000, message: 'the group without the second mailer' });
    await publishRound(5);
    await expectEachMailedOnce(published);
  });
});
