import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MailJob } from '@portcullis/contracts';
import { EventLogMailBus, sql } from '@portcullis/platform';
import { scrapePrometheus } from '@portcullis/platform/telemetry/prometheus-text';
import { createEventLogDatabase, type EventLogDatabase } from '../support/event-log.ts';
import { mailerEnv, sealedJob, startMailer } from '../support/mailer-process.ts';
import { waitFor, type ServiceProcess } from '../support/processes.ts';
import { TestSmtpServer } from '../support/smtp.ts';
import { DeliveryLog } from '../../services/mailer/src/delivery-log.ts';

interface DeliveryRow {
  status: string;
  attempts: number;
  last_error: string | null;
  waiting_for_relay: boolean;
  /** Seconds from now to the next attempt (negative when due). */
  next_attempt_in: number;
  /** Seconds from the first attempt to the dead letter. */
  died_after: number | null;
}

/** What MAILER_MAX_ATTEMPTS allowed before a job was dead-lettered, when attempts bounded retries. */
const OLD_MAX_ATTEMPTS = 8;

/**
 * SMTP outages against a real SMTP server that goes down (stopped: connections refused) and comes back on
 * its port. A mail is retried for MAILER_RETRY_WINDOW_SECONDS from its first attempt, however many attempts
 * that takes, and dead-lettered after it; once a mail goes through again, the jobs waiting for the relay go
 * out at once instead of at the end of their backoffs, from every mailer process.
 */
describe('mail through an SMTP outage', () => {
  let db: EventLogDatabase;
  let smtp: TestSmtpServer;
  let bus: EventLogMailBus;
  let mailers: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createEventLogDatabase('mail_outage');
    smtp = await TestSmtpServer.start();
    bus = new EventLogMailBus({ store: db.store, pool: db.pool, databaseUrl: db.url, control: db.control, log: { info() {}, warn() {}, error() {} } });
  });

  afterEach(async () => {
    await Promise.all(mailers.map((m) => m.stop()));
    mailers = [];
    smtp.refuse = () => null;
    await smtp.restart();
  });

  afterAll(async () => {
    await smtp?.close();
    await db?.close();
  });

  /** A mailer started and delivering: registered once its workers run. Resolves to its /metrics URL. */
  async function startedMailer(env: Record<string, string>): Promise<string> {
    const mailer = startMailer(env);
    mailers.push(mailer);
    let metricsUrl: string | null = null;
    await waitFor(
      async () => (metricsUrl = (await db.pool.maybeOneFirst(sql.unsafe`SELECT metrics_url FROM process_registry WHERE service = 'mailer' AND pid = ${mailer.pid}`)) as string | null) !== null,
      { timeoutMs: 30_000, message: `${mailer.name} to start\n${mailer.output().slice(-1500)}` },
    );
    return metricsUrl!;
  }

  async function waitingForRelayGauge(metricsUrl: string): Promise<number | undefined> {
    return (await scrapePrometheus(metricsUrl, 5000))?.find((sample) => sample.name === 'portcullis_mail_queue_waiting_for_relay')?.value;
  }

  async function delivery(jobId: string): Promise<DeliveryRow> {
    const row = (await db.pool.maybeOne(sql.unsafe`
      SELECT status, attempts, last_error, waiting_for_relay,
             extract(epoch FROM next_attempt_at - clock_timestamp())::float8 AS next_attempt_in,
             extract(epoch FROM dead_at - first_attempted_at)::float8 AS died_after
      FROM mail_delivery WHERE job_id = ${jobId}`)) as DeliveryRow | null;
    if (!row) throw new Error(`job ${jobId} is not in the delivery log yet`);
    return row;
  }

  async function until(jobId: string, condition: (row: DeliveryRow) => boolean, message: string): Promise<DeliveryRow> {
    let row: DeliveryRow | undefined;
    await waitFor(async () => condition((row = await delivery(jobId))), {
      timeoutMs: 30_000,
      message: `${message} (last seen: ${JSON.stringify(row)})\n${mailers.map((m) => m.output().slice(-1500)).join('\n')}`,
    });
    return row!;
  }

  it('keeps retrying past what eight attempts allowed, and dead-letters only once the retry window is over', async () => {
    const env = mailerEnv(db.url, smtp.url, {
      MAILER_RETRY_WINDOW_SECONDS: '8',
      MAILER_RETRY_BASE_MS: '50',
      MAILER_RETRY_MAX_MS: '200',
      MAILER_POLL_INTERVAL_MS: '50',
    });
    await startedMailer(env);
    await smtp.stop();
    const job = sealedJob(env, 'outage@example.test');
    await bus.publish([job]);

    // The old bound came and went: the job is still pending, waiting for the relay.
    const past = await until(job.jobId, (row) => row.attempts > OLD_MAX_ATTEMPTS, `more than ${OLD_MAX_ATTEMPTS} attempts`);
    expect(past).toMatchObject({ status: 'pending', waiting_for_relay: true });

    const dead = await until(job.jobId, (row) => row.status === 'dead', 'the dead letter at the end of the window');
    expect(dead.last_error).toMatch(/^still failing when its retry window \(MAILER_RETRY_WINDOW_SECONDS=8\) ended: /);
    expect(dead.died_after).toBeGreaterThanOrEqual(8);
    expect(smtp.mailsTo('outage@example.test')).toEqual([]);
  });

  it('sends the backlog of backoffs of an hour as soon as a mail goes through again, from either of two mailers', async () => {
    // Backoffs of an hour and polls a minute apart: only the release that follows a delivery can send the
    // backlog before the waits below time out, and only a notice can wake the mailer that did not deliver it.
    const env = mailerEnv(db.url, smtp.url, {
      MAILER_RETRY_BASE_MS: String(3_600_000),
      MAILER_RETRY_MAX_MS: String(3_600_000),
      MAILER_POLL_INTERVAL_MS: '60000',
    });
    const [metricsUrl] = await Promise.all([startedMailer(env), startedMailer(env)]);
    smtp.refuse = ({ to }) => (to.includes('deferred@example.test') ? { code: 451, message: 'Mailbox busy, try again later' } : null);

    // The relay works, and defers one mail of its own accord: that one waits out its backoff whatever follows.
    const deferred = sealedJob(env, 'deferred@example.test');
    await bus.publish([deferred]);
    expect(await until(deferred.jobId, (row) => row.attempts === 1, 'the deferral')).toMatchObject({ status: 'pending', waiting_for_relay: false });

    await smtp.stop();
    const backlog = Array.from({ length: 6 }, (_, i) => sealedJob(env, `backlog-${i}@example.test`));
    await bus.publish(backlog);
    for (const job of backlog) {
      const waiting = await until(job.jobId, (row) => row.attempts === 1, `${job.to} to fail once`);
      expect(waiting).toMatchObject({ status: 'pending', waiting_for_relay: true });
      expect(waiting.next_attempt_in).toBeGreaterThan(1800);
    }
    // What an operator's alert watches: the relay is down, these wait for it (the deferred one does not).
    expect(await waitingForRelayGauge(metricsUrl)).toBe(backlog.length);
    await smtp.restart();
    const probe = sealedJob(env, 'probe@example.test');
    await bus.publish([probe]);
    await smtp.waitForMail('probe@example.test');
    const sent = async (jobs: readonly MailJob[]): Promise<boolean> =>
      (await Promise.all(jobs.map((job) => delivery(job.jobId)))).every((row) => row.status === 'sent');
    await waitFor(() => sent(backlog), {
      timeoutMs: 20_000,
      message: `the backlog to go out after the probe\n${mailers.map((m) => m.output().slice(-1500)).join('\n')}`,
    });

    // Each once; the mail the relay deferred itself still waits, untried since.
    for (const job of [...backlog, probe]) expect(smtp.mailsTo(job.to).map((m) => m.jobId)).toEqual([job.jobId]);
    const stillDeferred = await delivery(deferred.jobId);
    expect(stillDeferred).toMatchObject({ status: 'pending', attempts: 1, waiting_for_relay: false });
    expect(stillDeferred.next_attempt_in).toBeGreaterThan(1800);
    expect(smtp.offers.filter((o) => o.to.includes('deferred@example.test'))).toHaveLength(1);
    expect(await waitingForRelayGauge(metricsUrl)).toBe(0);
  });

  it('wakes a mailer between its polls when another mailer found the relay back', async () => {
    // One mailer, polling a minute apart; the test's delivery log stands for a second mailer that has just
    // delivered a mail and releases the jobs waiting for the relay: only its notice can wake the first.
    const env = mailerEnv(db.url, smtp.url, {
      MAILER_RETRY_BASE_MS: String(3_600_000),
      MAILER_RETRY_MAX_MS: String(3_600_000),
      MAILER_POLL_INTERVAL_MS: '60000',
    });
    await startedMailer(env);
    await smtp.stop();
    const backlog = Array.from({ length: 3 }, (_, i) => sealedJob(env, `woken-${i}@example.test`));
    await bus.publish(backlog);
    for (const job of backlog) await until(job.jobId, (row) => row.attempts === 1 && row.waiting_for_relay, `${job.to} to fail once`);

    await smtp.restart();
    expect(await new DeliveryLog(db.pool).releaseWaitingForRelay()).toBe(backlog.length);
    for (const job of backlog) await smtp.waitForMail(job.to);
    // The server keeps a mail as it answers 250; the mailer records it as sent a moment after hearing that.
    for (const job of backlog) {
      expect(await until(job.jobId, (row) => row.status !== 'pending', `${job.to} recorded`)).toMatchObject({ status: 'sent', attempts: 2, waiting_for_relay: false });
    }
  });

  it('dead-letters a mail whose link expires during the outage at its expiry, not a backoff later', async () => {
    const env = mailerEnv(db.url, smtp.url, {
      MAILER_RETRY_BASE_MS: String(3_600_000),
      MAILER_RETRY_MAX_MS: String(3_600_000),
      MAILER_POLL_INTERVAL_MS: '50',
    });
    await startedMailer(env);
    await smtp.stop();
    const shortLink = sealedJob(env, 'short-link@example.test', { expiresAt: new Date(Date.now() + 5000).toISOString() });
    await bus.publish([shortLink]);
    const waiting = await until(shortLink.jobId, (row) => row.attempts >= 1, 'the first attempt');
    expect(waiting.next_attempt_in).toBeLessThan(6);
    const expired = await until(shortLink.jobId, (row) => row.status === 'dead', 'the dead letter at the expiry');
    expect(expired).toMatchObject({ attempts: 2, last_error: 'link expired before delivery' });
  });
});
