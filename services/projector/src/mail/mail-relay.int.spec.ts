import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailJobQueued, parseMailJobMessage, SignInFailed, streams, toMailJobMessage, type MailJob } from '@portcullis/contracts';
import { sql, type MailBus, type MailBusConsumer } from '@portcullis/platform';
import { catchUp, createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { MAIL_RELAY, MailRelayTarget } from './mail-relay.ts';

/** Stands in for Kafka (the third party): records what was published, and can refuse a publish. */
class RecordingBus implements MailBus {
  readonly name = 'recording';
  readonly published: MailJob[][] = [];
  failNext = 0;

  async publish(jobs: readonly MailJob[]): Promise<void> {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('broker unavailable');
    }
    this.published.push([...jobs]);
  }

  consume(): Promise<MailBusConsumer> {
    throw new Error('not used by the relay');
  }

  async close(): Promise<void> {}
}

describe('mail relay (log → bus)', () => {
  let db: EventLogDatabase;

  beforeAll(async () => {
    db = await createEventLogDatabase('mail_relay');
  });

  afterAll(async () => {
    await db?.close();
  });

  async function queue(userId: string): Promise<string> {
    const jobId = randomUUID();
    await db.store.append([
      domainWrite(
        streams.mail(jobId),
        'no_stream',
        [
          MailJobQueued({
            jobId,
            kind: 'password-reset',
            userId,
            to: `${userId}@x.test`,
            name: 'U',
            sealedToken: 'v1.a.b.c',
            callbackURL: null,
            expiresAt: '2030-01-01T01:00:00.000Z',
            newEmail: null,
          }),
        ],
        metadataAt('2030-01-01T00:00:00.000Z', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }),
      ),
    ]);
    return jobId;
  }

  it('publishes each mail job in log order with its request time and trace, and nothing else', async () => {
    const bus = new RecordingBus();
    const target = new MailRelayTarget(db.pool, bus);
    const first = await queue('u1');
    await db.store.append([domainWrite(streams.signIn('a@x.test'), 'any', [SignInFailed({ email: 'a@x.test', userId: null, reason: 'user_not_found' })], metadataAt(new Date()))]);
    const second = await queue('u2');
    await catchUp(db.store, target);

    const jobs = bus.published.flat();
    expect(jobs.map((j) => j.jobId)).toEqual([first, second]);
    expect(jobs[0]).toMatchObject({ userId: 'u1', requestedAt: '2030-01-01T00:00:00.000Z', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${MAIL_RELAY}`))).toBe(await db.store.headPosition());
  });

  it('relays an invitation job with its details, and they survive the Kafka message contract', async () => {
    const bus = new RecordingBus();
    const target = new MailRelayTarget(db.pool, bus);
    await catchUp(db.store, target);
    const jobId = randomUUID();
    const details = { organizationName: 'Acme & <Sons>', inviterName: 'Ada', inviterEmail: 'ada@x.test', role: 'admin,member' };
    await db.store.append([
      domainWrite(
        streams.mail(jobId),
        'no_stream',
        [
          MailJobQueued({
            jobId,
            kind: 'invitation',
            userId: 'inviter-1',
            to: 'grace@x.test',
            name: '',
            sealedToken: 'v1.a.b.c',
            callbackURL: null,
            expiresAt: '2030-01-03T00:00:00.000Z',
            newEmail: null,
            invitation: details,
          }),
        ],
        metadataAt('2030-01-01T00:00:00.000Z'),
      ),
    ]);
    await catchUp(db.store, target);

    const [job] = bus.published.flat();
    expect(job).toMatchObject({ jobId, kind: 'invitation', userId: 'inviter-1', to: 'grace@x.test', invitation: details });
    expect(parseMailJobMessage(JSON.parse(JSON.stringify(toMailJobMessage(job!))))).toEqual(job);
  });

  it('moves its checkpoint only after the bus took the batch: a failed publish is published again', async () => {
    const bus = new RecordingBus();
    const target = new MailRelayTarget(db.pool, bus);
    const before = await target.readCheckpoint();
    const jobId = await queue('u3');
    bus.failNext = 1;
    await expect(catchUp(db.store, target)).rejects.toThrow('broker unavailable');
    expect(await target.readCheckpoint()).toBe(before);
    await catchUp(db.store, target);
    expect(bus.published.flat().map((j) => j.jobId)).toEqual([jobId]);
    expect(await target.readCheckpoint()).toBe(await db.store.headPosition());
  });
});
