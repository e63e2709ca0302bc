import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailJobQueued, streams } from '@portcullis/contracts';
import { createTokenSealer, EventLogMailBus, generateId, sql } from '@portcullis/platform';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../support/event-log.ts';
import { mailerEnv, sealedJob, startMailer } from '../support/mailer-process.ts';
import { waitFor, type ServiceProcess } from '../support/processes.ts';
import { linkIn, TestSmtpServer } from '../support/smtp.ts';

interface DeliveryRow {
  status: string;
  attempts: number;
  last_error: string | null;
}

/**
 * The mailer process against a real SMTP server that refuses on purpose: a temporary refusal (451) is
 * retried with exponential backoff until the retry window ends, a permanent one (550) dead-letters the job at
 * once, and so do a link that expired before delivery and a token that does not open. An invitation goes out with the
 * deployment's invitation URL (AUTH_ORGANIZATION_INVITATION_URL) around its id.
 */
describe('mailer: retries, backoff and dead letters', () => {
  let db: EventLogDatabase;
  let smtp: TestSmtpServer;
  let mailer: ServiceProcess;
  let bus: EventLogMailBus;
  let env: Record<string, string>;
  const refusedSoFar = new Map<string, number>();

  beforeAll(async () => {
    db = await createEventLogDatabase('mailer_delivery');
    smtp = await TestSmtpServer.start();
    smtp.refuse = ({ to }) => {
      const address = to[0] ?? '';
      const count = refusedSoFar.get(address) ?? 0;
      if (address.startsWith('bounce')) return { code: 550, message: 'No such mailbox' };
      if (address.startsWith('down')) return { code: 451, message: 'Try again later' };
      if (address.startsWith('flaky') && count < 2) {
        refusedSoFar.set(address, count + 1);
        return { code: 451, message: 'Greylisted' };
      }
      return null;
    };
    env = mailerEnv(db.url, smtp.url, {
      MAILER_RETRY_WINDOW_SECONDS: '5',
      MAILER_RETRY_BASE_MS: '300',
      MAILER_RETRY_MAX_MS: '5000',
      MAILER_POLL_INTERVAL_MS: '50',
      AUTH_ORGANIZATION_INVITATION_URL: 'https://app.example.test/join/{id}?via=mail',
    });
    mailer = startMailer(env);
    bus = new EventLogMailBus({ store: db.store, pool: db.pool, databaseUrl: db.url, control: db.control, log: { info() {}, warn() {}, error() {} } });
  });

  afterAll(async () => {
    await mailer?.stop();
    await smtp?.close();
    await db?.close();
  });

  async function delivery(jobId: string): Promise<DeliveryRow | null> {
    return (await db.pool.maybeOne(sql.unsafe`SELECT status, attempts, last_error FROM mail_delivery WHERE job_id = ${jobId}`)) as DeliveryRow | null;
  }

  async function settled(jobId: string): Promise<DeliveryRow> {
    let row: DeliveryRow | null = null;
    await waitFor(async () => (row = await delivery(jobId)) !== null && row.status !== 'pending', {
      timeoutMs: 30_000,
      message: `job ${jobId} to be sent or dead-lettered\n${mailer.output().slice(-2000)}`,
    });
    return row!;
  }

  it('sends, retries a temporary refusal with growing delays, and dead-letters what cannot be sent', async () => {
    const ok = sealedJob(env, 'ok@example.test');
    const flaky = sealedJob(env, 'flaky@example.test');
    const bounce = sealedJob(env, 'bounce@example.test');
    const down = sealedJob(env, 'down@example.test');
    const expired = sealedJob(env, 'late@example.test', { expiresAt: new Date(Date.now() - 1000).toISOString() });
    const foreign = sealedJob({ AUTH_SECRET: 'another-deployment-secret-0123456789abcdef' }, 'foreign@example.test');
    await bus.publish([ok, flaky, bounce, down, expired, foreign]);

    expect(await settled(ok.jobId)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(await settled(flaky.jobId)).toMatchObject({ status: 'sent', attempts: 3 });
    const bounced = await settled(bounce.jobId);
    expect(bounced).toMatchObject({ status: 'dead', attempts: 1 });
    expect(bounced.last_error).toMatch(/550/);
    const gaveUp = await settled(down.jobId);
    expect(gaveUp.status).toBe('dead');
    expect(gaveUp.last_error).toMatch(/^still failing when its retry window \(MAILER_RETRY_WINDOW_SECONDS=5\) ended: .*451/);
    expect(await settled(expired.jobId)).toMatchObject({ status: 'dead', last_error: 'link expired before delivery' });
    expect(await settled(foreign.jobId)).toMatchObject({ status: 'dead', last_error: 'sealed token does not open under any secret of the ring' });

    // Delivered once each; the dead ones never reached the inbox; expired and foreign never reached the server.
    expect(smtp.mailsTo('ok@example.test')).toHaveLength(1);
    expect(smtp.mailsTo('flaky@example.test')).toHaveLength(1);
    expect(smtp.mailsTo('bounce@example.test')).toHaveLength(0);
    expect(smtp.offers.filter((o) => o.to.includes('late@example.test') || o.to.includes('foreign@example.test'))).toEqual([]);
    // Backoff: base 300 ms then 600 ms (±20 %). Only lower bounds are asserted: a loaded machine can stretch
    // any wait, but no retry may come sooner than its backoff allows.
    const tries = smtp.offers.filter((o) => o.to.includes('down@example.test')).map((o) => o.at);
    expect(tries).toHaveLength(gaveUp.attempts);
    expect(tries.length).toBeGreaterThanOrEqual(3);
    const [first, second] = [tries[1]! - tries[0]!, tries[2]! - tries[1]!];
    expect(first).toBeGreaterThanOrEqual(230);
    expect(second).toBeGreaterThanOrEqual(470);

    const mail = smtp.mailsTo('ok@example.test')[0]!;
    expect(mail.jobId).toBe(ok.jobId);
    expect(mail.subject).toBe('Reset your Portcullis password');
    expect(mail.text).toContain(`http://127.0.0.1:3999/api/auth/reset-password/token-for-${ok.jobId}?callbackURL=%2Freset`);
    expect(mail.html).toContain(`href="http://127.0.0.1:3999/api/auth/reset-password/token-for-${ok.jobId}?callbackURL=%2Freset"`);
  });

  it('takes a job published twice in once', async () => {
    const job = sealedJob(env, 'twice@example.test');
    await bus.publish([job]);
    // A second copy of the same job (a redelivery), under a fresh stream id of the log.
    await db.store.append([
      { streamId: `mail-${job.jobId}-again`, expectedVersion: 'no_stream', events: [{ type: 'mail.job_queued.v1', data: { ...job, requestedAt: undefined, traceparent: undefined }, metadata: { occurredAt: job.requestedAt } }] },
    ]);
    expect(await settled(job.jobId)).toMatchObject({ status: 'sent', attempts: 1 });
    await waitFor(
      async () => Number(await db.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = 'mail-bus:portcullis-mailer'`)) === (await db.store.headPosition()),
      { timeoutMs: 10_000, message: 'the mailer to take in both copies' },
    );
    expect(smtp.mailsTo('twice@example.test')).toHaveLength(1);
  });

  it('delivers an invitation queued in the log: the invitation link with its id, who invites to which organization', async () => {
    // As the api queues it: the invitation id sealed to the job id, in a mail stream of the real event store.
    const jobId = randomUUID();
    const invitationId = generateId();
    const requestedAt = new Date();
    await db.store.append([
      domainWrite(
        streams.mail(jobId),
        'no_stream',
        [
          MailJobQueued({
            jobId,
            kind: 'invitation',
            userId: 'inviter-user-id',
            to: 'invited@example.test',
            name: '',
            sealedToken: createTokenSealer(env.AUTH_SECRET!).seal(invitationId, jobId),
            callbackURL: null,
            expiresAt: new Date(requestedAt.getTime() + 172_800_000).toISOString(),
            newEmail: null,
            invitation: { organizationName: 'Babbage & <Lovelace>', inviterName: 'Ada Lovelace', inviterEmail: 'ada@example.test', role: 'admin' },
          }),
        ],
        metadataAt(requestedAt),
      ),
    ]);

    expect(await settled(jobId)).toMatchObject({ status: 'sent', attempts: 1 });
    const mail = await smtp.waitForMail('invited@example.test');
    expect(mail.jobId).toBe(jobId);
    expect(mail.subject).toBe('Ada Lovelace invited you to join Babbage & <Lovelace> on Portcullis');
    expect(linkIn(mail)).toBe(`https://app.example.test/join/${invitationId}?via=mail`);
    expect(mail.text).toContain('Ada Lovelace (ada@example.test) invited you to join the organization Babbage & <Lovelace> on Portcullis, with the role admin.');
    expect(mail.text).toContain('This invitation expires in 48 hours');
    expect(mail.html).toContain(`href="https://app.example.test/join/${invitationId}?via=mail"`);
    expect(mail.html).toContain('join the organization Babbage &amp; &lt;Lovelace&gt; on Portcullis');
  });
});
