import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

const KEY = 'operator-key-0123456789abcdef0123456789';
const SECRET = 'mail-ops-spec-secret-0123456789abcdef0123';

/**
 * The dev mailbox holds live reset and deletion links: only an operator may read it, unless the api
 * listens on loopback alone (nobody but this machine can reach it).
 */
describe('mail ops routes', () => {
  let exposed: InProcessApi;
  let local: InProcessApi;

  beforeAll(async () => {
    exposed = await startInProcessApi('mail_ops_exposed', { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: KEY, AUTH_SECRET: SECRET, NODE_ENV: 'development' });
    local = await startInProcessApi('mail_ops_local', { HOST: '127.0.0.1', AUTH_SERVER_API_KEY: KEY, AUTH_SECRET: SECRET, NODE_ENV: 'development' });
  });

  afterAll(async () => {
    await exposed?.close();
    await local?.close();
  });

  it('refuses a caller without the key when the api listens beyond loopback, and serves an operator', async () => {
    for (const url of ['/ops/mailbox', '/ops/mail/deliveries']) {
      const refused = await exposed.app.inject({ method: 'GET', url });
      expect(refused.statusCode, url).toBe(401);
      expect(refused.json()).toMatchObject({ code: 'UNAUTHORIZED' });
      expect((await exposed.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY } })).statusCode, url).toBe(200);
      expect((await exposed.app.inject({ method: 'GET', url, headers: { 'x-api-key': 'wrong' } })).statusCode, url).toBe(401);
    }
  });

  it('serves anyone on this machine when the api listens on loopback alone', async () => {
    expect((await local.app.inject({ method: 'GET', url: '/ops/mailbox' })).statusCode).toBe(200);
  });

  describe('the delivery log, the queue and retries', () => {
    const op = { 'x-api-key': KEY };
    /** Rows as the mailer writes them (the api only reads its delivery log), each a job of its own. */
    const rows: { jobId: string; kind: string; to: string; status: string; userId: string; receivedSecondsAgo: number }[] = [];

    async function delivered(jobId: string, kind: string, to: string, status: string, userId: string, receivedSecondsAgo: number): Promise<void> {
      rows.push({ jobId, kind, to, status, userId, receivedSecondsAgo });
      await exposed.db.pool.query(sql.unsafe`
        INSERT INTO mail_delivery (job_id, kind, user_id, recipient, job, status, attempts, received_at, first_attempted_at, sent_at, dead_at, updated_at)
        VALUES (${jobId}, ${kind}, ${userId}, ${to}, '{}'::jsonb, ${status}, ${status === 'pending' ? 0 : 1},
                now() - make_interval(secs => ${receivedSecondsAgo}),
                ${status === 'pending' ? sql.fragment`NULL` : sql.fragment`now() - make_interval(secs => ${receivedSecondsAgo})`},
                ${status === 'sent' ? sql.fragment`now()` : sql.fragment`NULL`}, ${status === 'dead' ? sql.fragment`now() - interval '1 second'` : sql.fragment`NULL`},
                now() - make_interval(secs => ${receivedSecondsAgo}))`);
    }

    async function deliveries(query: string): Promise<{ deliveries: { jobId: string; status: string; receivedAt: string; firstAttemptedAt: string | null }[]; total: number }> {
      const answer = await exposed.app.inject({ method: 'GET', url: `/ops/mail/deliveries?${query}`, headers: op });
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json();
    }

    /** A real password-reset job in the log (its stream is what a retry is appended to), dead in the delivery log. */
    async function deadResetMail(email: string): Promise<string> {
      const signedUp = await exposed.app.inject({ method: 'POST', url: '/api/auth/sign-up/email', payload: { email, password: 'a long enough password', name: 'Dead Letter' } });
      expect(signedUp.statusCode, signedUp.body).toBe(200);
      const userId = signedUp.json<{ user: { id: string } }>().user.id;
      expect((await exposed.app.inject({ method: 'POST', url: '/api/auth/request-password-reset', payload: { email } })).statusCode).toBe(200);
      const jobId = String(await exposed.db.pool.oneFirst(sql.unsafe`
        SELECT data->>'jobId' FROM events WHERE type = 'mail.job_queued.v1' AND data->>'userId' = ${userId} AND data->>'kind' = 'password-reset'`));
      await delivered(jobId, 'password-reset', email, 'dead', userId, 30);
      return jobId;
    }

    let deadJob: string;

    beforeAll(async () => {
      await delivered(randomUUID(), 'verification', 'Ann@Example.test', 'sent', 'user-ann', 400);
      await delivered(randomUUID(), 'verification', 'bob@example.test', 'pending', 'user-bob', 300);
      await delivered(randomUUID(), 'invitation', 'carol@example.test', 'pending', 'user-carol', 200);
      await delivered(randomUUID(), 'change-email', 'dan_100%@example.test', 'dead', 'user-dan', 100);
      deadJob = await deadResetMail(`dead-${randomUUID().slice(0, 8)}@example.test`);
    });

    it('filters by several statuses and kinds, recipient, user and job, newest change first, with the total of every page', async () => {
      const all = await deliveries('limit=500');
      expect(all.total).toBe(rows.length);
      expect(all.deliveries.map((d) => d.jobId)).toEqual([...rows].sort((a, b) => a.receivedSecondsAgo - b.receivedSecondsAgo).map((r) => r.jobId));
      // Tried jobs say when their retry window began; the untried ones have none yet.
      for (const d of all.deliveries) expect(d.firstAttemptedAt).toBe(d.status === 'pending' ? null : d.receivedAt);

      const deadOrPending = await deliveries('status=dead,pending');
      expect(new Set(deadOrPending.deliveries.map((d) => d.status))).toEqual(new Set(['dead', 'pending']));
      expect(deadOrPending.total).toBe(rows.filter((r) => r.status !== 'sent').length);
      expect((await deliveries('kind=verification,invitation')).total).toBe(3);
      expect((await deliveries('kind=verification&status=pending')).deliveries.map((d) => d.jobId)).toEqual([rows[1]!.jobId]);
      // Case-insensitive, and % and _ are letters of the address.
      expect((await deliveries('to=ann@EXAMPLE')).deliveries.map((d) => d.jobId)).toEqual([rows[0]!.jobId]);
      expect((await deliveries(`to=${encodeURIComponent('_100%')}`)).total).toBe(1);
      expect((await deliveries('to=%25')).total).toBe(1);
      expect((await deliveries('userId=user-carol')).deliveries.map((d) => d.jobId)).toEqual([rows[2]!.jobId]);
      expect((await deliveries(`jobId=${rows[3]!.jobId}`)).total).toBe(1);

      const pages = [await deliveries('limit=2&offset=0'), await deliveries('limit=2&offset=2'), await deliveries('limit=2&offset=4')];
      expect(pages.map((p) => p.total)).toEqual([rows.length, rows.length, rows.length]);
      expect(pages.flatMap((p) => p.deliveries.map((d) => d.jobId))).toEqual(all.deliveries.map((d) => d.jobId));
      expect(await deliveries('limit=2&offset=50')).toEqual({ deliveries: [], total: rows.length });

      const refused = await exposed.app.inject({ method: 'GET', url: '/ops/mail/deliveries?status=dead,lost', headers: op });
      expect(refused.statusCode).toBe(400);
    });

    it('answers the queue: pending and dead jobs, mail sent in the last day, the age of the oldest unsent mail', async () => {
      // One of the pending jobs failed on a relay it could not use (the mailer marks it so).
      const waiting = rows.find((row) => row.status === 'pending')!;
      await exposed.db.pool.query(sql.unsafe`UPDATE mail_delivery SET waiting_for_relay = true, next_attempt_at = now() + interval '5 minutes' WHERE job_id = ${waiting.jobId}`);
      const answer = await exposed.app.inject({ method: 'GET', url: '/ops/mail/queue', headers: op });
      expect(answer.statusCode, answer.body).toBe(200);
      const queue = answer.json<{ pending: number; waitingForRelay: number; dead: number; sentLast24h: number; oldestUnsentAt: string; oldestUnsentAgeSeconds: number }>();
      expect(queue).toMatchObject({ pending: 2, waitingForRelay: 1, dead: 2, sentLast24h: 1 });
      // bob's, received 300 s ago, is the oldest pending one.
      expect(queue.oldestUnsentAgeSeconds).toBeGreaterThanOrEqual(300);
      expect(queue.oldestUnsentAgeSeconds).toBeLessThan(400);
      expect(Date.now() - Date.parse(queue.oldestUnsentAt)).toBeGreaterThanOrEqual(300_000);
    });

    it('appends a retry of a dead letter to its job\'s stream, and refuses one of a job that is not dead or not known', async () => {
      const retry = (jobId: string) => exposed.app.inject({ method: 'POST', url: `/ops/mail/deliveries/${jobId}/retry`, headers: op });
      const unknown = await retry(randomUUID());
      expect({ status: unknown.statusCode, code: unknown.json().code }).toEqual({ status: 404, code: 'MAIL_DELIVERY_NOT_FOUND' });
      for (const row of rows.filter((r) => r.status !== 'dead')) {
        const refused = await retry(row.jobId);
        expect({ status: refused.statusCode, code: refused.json().code }, row.status).toEqual({ status: 409, code: 'MAIL_DELIVERY_NOT_DEAD' });
      }
      expect((await exposed.app.inject({ method: 'POST', url: `/ops/mail/deliveries/${deadJob}/retry` })).statusCode).toBe(401);

      const accepted = await retry(deadJob);
      expect(accepted.statusCode, accepted.body).toBe(200);
      expect(accepted.json()).toMatchObject({ jobId: deadJob });
      const appended = (await exposed.db.pool.one(sql.unsafe`
        SELECT type, stream_version, data, metadata->'actor' AS actor FROM events WHERE stream_id = ${`mail-${deadJob}`} ORDER BY position DESC LIMIT 1`)) as { type: string; stream_version: number; data: { jobId: string; kind: string }; actor: { kind: string } };
      expect(appended).toMatchObject({ type: 'mail.retry_requested.v1', stream_version: 2, data: { jobId: deadJob, kind: 'password-reset' }, actor: { kind: 'server' } });
    });
  });
});
