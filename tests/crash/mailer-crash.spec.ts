import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLogMailBus, sql } from '@portcullis/platform';
import { createEventLogDatabase, type EventLogDatabase } from '../support/event-log.ts';
import { mailerEnv, sealedJob, startMailer } from '../support/mailer-process.ts';
import { waitFor, type ServiceProcess } from '../support/processes.ts';
import { TestSmtpServer } from '../support/smtp.ts';

const JOBS = 160;
const CONCURRENCY = 4;

/**
 * The mailer crash test: a burst of jobs, the mailer killed with SIGKILL twice while it delivers them, and
 * restarted. Afterwards every job has been delivered, and no job that the delivery log had recorded as
 * accepted before a kill reached the SMTP server again. Only a job that was mid-delivery at the kill (at
 * most one per worker) may arrive twice: the server accepted it, the mailer died before it wrote that down.
 */
describe('mailer crash safety', () => {
  let db: EventLogDatabase;
  let smtp: TestSmtpServer;
  let env: Record<string, string>;
  const mailers: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createEventLogDatabase('mailer_crash');
    smtp = await TestSmtpServer.start();
    // Each acceptance takes a moment, so the burst is still being delivered when the kills land.
    smtp.acceptDelayMs = 15;
    env = mailerEnv(db.url, smtp.url, { MAILER_CONCURRENCY: String(CONCURRENCY) });
  });

  afterAll(async () => {
    await Promise.all(mailers.map((m) => m.stop()));
    await smtp?.close();
    await db?.close();
  });

  async function sentJobIds(): Promise<Set<string>> {
    return new Set((await db.pool.anyFirst(sql.unsafe`SELECT job_id FROM mail_delivery WHERE status = 'sent'`)) as readonly string[]);
  }

  async function killDuringBurst(mailer: ServiceProcess, deliveredAtLeast: number): Promise<{ sentAtKill: Set<string>; seqAtKill: number }> {
    await waitFor(() => smtp.mails.length >= deliveredAtLeast, {
      timeoutMs: 30_000,
      message: `${deliveredAtLeast} deliveries before the kill\n${mailer.output().slice(-2000)}`,
    });
    mailer.kill('SIGKILL');
    const exit = await mailer.exited;
    expect(exit.signal).toBe('SIGKILL');
    // The process is gone: what the log says now is what it had recorded.
    return { sentAtKill: await sentJobIds(), seqAtKill: smtp.mails.length };
  }

  it('delivers every job after kill -9 and restart, and none again that was recorded as accepted', async () => {
    const bus = new EventLogMailBus({ store: db.store, pool: db.pool, databaseUrl: db.url, control: db.control, log: { info() {}, warn() {}, error() {} } });
    const jobs = Array.from({ length: JOBS }, (_, i) => sealedJob(env, `burst-${i}@example.test`));
    mailers.push(startMailer(env));
    // The burst arrives while the mailer works: in slices, the last ones while it is dead.
    await bus.publish(jobs.slice(0, 100));
    const firstKill = await killDuringBurst(mailers.at(-1)!, 30);
    await bus.publish(jobs.slice(100, 130));
    mailers.push(startMailer(env));
    const secondKill = await killDuringBurst(mailers.at(-1)!, firstKill.seqAtKill + 40);
    await bus.publish(jobs.slice(130));
    mailers.push(startMailer(env));

    await waitFor(async () => (await sentJobIds()).size === JOBS, {
      timeoutMs: 60_000,
      message: `all ${JOBS} jobs recorded as sent\n${mailers.at(-1)!.output().slice(-2000)}`,
    });

    const deliveries = new Map<string, number[]>();
    for (const mail of smtp.mails) deliveries.set(mail.jobId!, [...(deliveries.get(mail.jobId!) ?? []), mail.seq]);
    // Every job reached the inbox.
    expect(jobs.filter((job) => !deliveries.has(job.jobId)).map((job) => job.to)).toEqual([]);
    // Nothing recorded as accepted before a kill was delivered after it.
    for (const kill of [firstKill, secondKill]) {
      const again = [...kill.sentAtKill].filter((jobId) => (deliveries.get(jobId) ?? []).some((seq) => seq > kill.seqAtKill));
      expect(again).toEqual([]);
    }
    // Duplicates only where a delivery was cut short: at most one per worker per kill.
    const twice = [...deliveries].filter(([, seqs]) => seqs.length > 1);
    expect(twice.length).toBeLessThanOrEqual(2 * CONCURRENCY);
    expect(twice.every(([, seqs]) => seqs.length === 2)).toBe(true);
    console.info(`[mailer-crash] ${JOBS} jobs, 2 kills (after ${firstKill.seqAtKill} and ${secondKill.seqAtKill} deliveries), ${twice.length} delivered twice`);
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM mail_delivery WHERE status <> 'sent'`))).toBe(0);
  });
});
