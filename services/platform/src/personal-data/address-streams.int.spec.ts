import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailReserved, SignInFailed, streams, UsernameReserved } from '@portcullis/contracts';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { sql } from '../database/pool.ts';
import { PostgresEventStore } from '../event-store/postgres.ts';
import { carryAddressStreamsForward } from './address-streams.ts';

/**
 * A log written before address streams were keyed: reservations under `email-<address>` and
 * `username-<name>`, in plaintext, beside what an api writes now. Starting on it carries each old reservation
 * to its keyed name once; guards and keyed streams stay as they are. On real Postgres, read through the port.
 */
describe('address streams carried forward at start', () => {
  let db: EventLogDatabase;
  let stored: PostgresEventStore;
  const at = metadataAt(new Date());

  beforeAll(async () => {
    db = await createEventLogDatabase('address_streams', {
      engine: (databaseUrl, notifications) => (stored = new PostgresEventStore({ databaseUrl, notifications })),
    });
    // What an api before keyed streams wrote: the address in the stream's name and the event, unencrypted.
    await stored.append([
      domainWrite('email-old@example.com', 'no_stream', [EmailReserved({ email: 'old@example.com', userId: 'old-user' })], at),
      domainWrite('username-oldie', 'no_stream', [UsernameReserved({ username: 'oldie', userId: 'old-user' })], at),
      domainWrite('sign-in-old@example.com', 'no_stream', [SignInFailed({ email: 'old@example.com', userId: 'old-user', reason: 'invalid_password' })], at),
    ]);
    // The migration marked this log upgraded, having found it empty; it held these streams when it ran.
    await db.pool.query(sql.unsafe`DELETE FROM log_upgrade WHERE name = 'address-streams-keyed'`);
    // What an api writes now: already under the keyed name.
    await db.store.append([domainWrite(streams.email('new@example.com'), 'no_stream', [EmailReserved({ email: 'new@example.com', userId: 'new-user' })], at)]);
  });

  afterAll(async () => {
    await db?.close();
  });

  it('reserves each old address under its keyed name, naming the original as cause, once', async () => {
    const originals = new Map((await stored.readAll({ after: 0, limit: 100 })).map((e) => [e.streamId, e.eventId]));

    expect(await carryAddressStreamsForward({ stored, protected: db.store }, db.pool)).toBe(2);

    const email = await db.store.readStream(streams.email('old@example.com'));
    expect(email.events.map((e) => [e.type, e.data, e.metadata.causationId])).toEqual([
      ['email.reserved.v1', { email: 'old@example.com', userId: 'old-user' }, originals.get('email-old@example.com')],
    ]);
    const username = await db.store.readStream(streams.username('oldie'));
    expect(username.events.map((e) => [e.type, e.data, e.metadata.causationId])).toEqual([
      ['username.reserved.v1', { username: 'oldie', userId: 'old-user' }, originals.get('username-oldie')],
    ]);
    // The guard's window starts afresh, and the reservation written keyed is not copied onto itself.
    expect((await db.store.readStream(streams.signIn('old@example.com'))).version).toBe(0);
    expect((await db.store.readStream(streams.email('new@example.com'))).version).toBe(1);

    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM log_upgrade WHERE name = 'address-streams-keyed'`))).toBe(1);
    const head = await stored.headPosition();
    expect(await carryAddressStreamsForward({ stored, protected: db.store }, db.pool)).toBe(0);
    expect(await stored.headPosition()).toBe(head);
  });
});
