import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailRetryRequested, UserRegistered } from '@portcullis/contracts';
import { sql, type ProjectionRunner } from '@portcullis/platform';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../tests/support/event-log.ts';
import { waitFor } from '../../../tests/support/processes.ts';
import { followRetryRequests, retryFollowerName } from './retry-requests.ts';

interface Row {
  status: string;
  attempts: number;
  dead: boolean;
  tried: boolean;
}

/**
 * The mailer's side of a retry: it follows the log for `mail.retry_requested.v1` and makes the dead job
 * pending again, only if it died before the retry was asked, so a retry read twice sends nothing more.
 */
describe('retry requests', () => {
  let db: EventLogDatabase;
  let follower: ProjectionRunner | undefined;
  let revived = 0;

  async function dead(jobId: string, diedAt: string): Promise<void> {
    await db.pool.query(sql.unsafe`
      INSERT INTO mail_delivery (job_id, kind, user_id, recipient, job, status, attempts, first_attempted_at, dead_at, last_error)
      VALUES (${jobId}, 'verification', 'user-1', 'someone@example.test', '{}'::jsonb, 'dead', 8, now() - interval '1 day', now() + ${diedAt}::interval, '550 No such mailbox')`);
  }

  async function retry(jobId: string): Promise<void> {
    await db.store.append([domainWrite(`mail-${jobId}`, 'any', [MailRetryRequested({ jobId, kind: 'verification', userId: 'user-1' })], metadataAt(new Date()))]);
  }

  async function row(jobId: string): Promise<Row> {
    return (await db.pool.one(sql.unsafe`SELECT status, attempts, dead_at IS NOT NULL AS dead, first_attempted_at IS NOT NULL AS tried FROM mail_delivery WHERE job_id = ${jobId}`)) as Row;
  }

  async function caughtUp(): Promise<void> {
    const head = await db.store.headPosition();
    await waitFor(async () => Number(await db.pool.maybeOneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${retryFollowerName('spec')}`)) >= head, {
      timeoutMs: 10_000,
      message: 'the follower to reach the head',
    });
  }

  beforeAll(async () => {
    db = await createEventLogDatabase('mail_retry_requests');
  });

  afterAll(async () => {
    await follower?.stop();
    await db?.close();
  });

  it('revives a job that died before the retry, leaves one that died after it, and sends nothing twice', async () => {
    // Retries asked before the follower first started are applied: it starts before the first one.
    const userId = randomUUID();
    await db.store.append([domainWrite(`user-${userId}`, 'no_stream', [UserRegistered({ userId, email: 'u@example.test', name: 'U', image: null, emailVerified: false })], metadataAt(new Date()))]);
    const diedBefore = randomUUID();
    const diedAfter = randomUUID();
    await dead(diedBefore, '-1 minute');
    await dead(diedAfter, '1 hour');
    await retry(diedBefore);
    await retry(diedAfter);

    follower = followRetryRequests({
      store: db.store,
      pool: db.pool,
      databaseUrl: db.url,
      group: 'spec',
      control: db.control,
      log: { info() {}, warn() {}, error() {} },
      pollIntervalMs: 100,
      revived: () => (revived += 1),
    });
    await caughtUp();
    // Its retry window starts again at its next attempt.
    expect(await row(diedBefore)).toEqual({ status: 'pending', attempts: 0, dead: false, tried: false });
    expect(await row(diedAfter)).toEqual({ status: 'dead', attempts: 8, dead: true, tried: true });
    expect(revived).toBe(1);
    // Sent meanwhile, then a second retry of the same job arrives: nothing changes.
    await db.pool.query(sql.unsafe`UPDATE mail_delivery SET status = 'sent', attempts = 1, sent_at = now() WHERE job_id = ${diedBefore}`);
    await retry(diedBefore);
    await caughtUp();
    expect(await row(diedBefore)).toEqual({ status: 'sent', attempts: 1, dead: false, tried: false });
    expect(revived).toBe(1);
  });
});

describe('a new retry follower', () => {
  let db: EventLogDatabase;
  const followers: ProjectionRunner[] = [];

  beforeAll(async () => {
    db = await createEventLogDatabase('mail_retry_start');
  });

  afterAll(async () => {
    await Promise.all(followers.map((f) => f.stop()));
    await db?.close();
  });

  function follow(group: string): void {
    followers.push(
      followRetryRequests({
        store: db.store,
        pool: db.pool,
        databaseUrl: db.url,
        group,
        control: db.control,
        log: { info() {}, warn() {}, error() {} },
        pollIntervalMs: 100,
        revived: () => {},
      }),
    );
  }

  async function startedAt(group: string): Promise<number> {
    let position: number | null = null;
    await waitFor(async () => {
      const kept = await db.pool.maybeOneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${retryFollowerName(group)}`);
      position = kept === null ? null : Number(kept);
      return position !== null;
    }, { timeoutMs: 10_000, message: `the ${group} follower's checkpoint` });
    return position!;
  }

  it('starts at the head of a log that holds no retry (one that does: see above), and reads the retries after it', async () => {
    const userId = randomUUID();
    await db.store.append([domainWrite(`user-${userId}`, 'no_stream', [UserRegistered({ userId, email: 'n@example.test', name: 'N', image: null, emailVerified: false })], metadataAt(new Date()))]);
    const head = await db.store.headPosition();
    follow('none-asked');
    expect(await startedAt('none-asked')).toBe(head);

    const jobId = randomUUID();
    await db.pool.query(sql.unsafe`
      INSERT INTO mail_delivery (job_id, kind, user_id, recipient, job, status, attempts, first_attempted_at, dead_at, last_error)
      VALUES (${jobId}, 'verification', ${userId}, 'n@example.test', '{}'::jsonb, 'dead', 8, now() - interval '1 day', now() - interval '1 minute', '550 No such mailbox')`);
    await db.store.append([domainWrite(`mail-${jobId}`, 'any', [MailRetryRequested({ jobId, kind: 'verification', userId })], metadataAt(new Date()))]);
    await waitFor(async () => (await db.pool.oneFirst(sql.unsafe`SELECT status FROM mail_delivery WHERE job_id = ${jobId}`)) === 'pending', {
      timeoutMs: 10_000,
      message: 'the retry asked after the follower started to revive the job',
    });
  });
});
