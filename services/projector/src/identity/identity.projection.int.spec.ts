import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CredentialAccountCreated,
  EmailReserved,
  SignInFailed,
  streams,
  UsernameChanged,
  type DomainEvent,
  UserBanned,
  UserRegistered,
  UserRoleChanged,
  UserUnbanned,
  UserUpdated,
} from '@portcullis/contracts';
import { CheckpointFencedError, PostgresProjectionTarget, sql, type ProjectedEvent } from '@portcullis/platform';
import { catchUp, createEventLogDatabase, domainWrite, metadataAt, toProjected, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { identityProjection } from './identity.projection.ts';

const registeredAt = '2026-03-01T10:00:00.000Z';
const updatedAt = '2026-03-02T11:30:00.000Z';
const passwordHash = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo';

describe('identity projection (user, account)', () => {
  let db: EventLogDatabase;
  let target: PostgresProjectionTarget;

  beforeAll(async () => {
    db = await createEventLogDatabase('identity_projection');
    target = new PostgresProjectionTarget(db.pool, identityProjection);
  });

  afterAll(async () => {
    await db?.close();
  });

  /** A sign-up as the api appends it: reservation, user and credential account in one write. */
  async function register(user: { userId: string; email: string; name: string; image?: string | null }): Promise<void> {
    const metadata = metadataAt(registeredAt, { actorId: user.userId });
    await db.store.append([
      domainWrite(streams.email(user.email), 'no_stream', [EmailReserved({ email: user.email, userId: user.userId })], metadata),
      domainWrite(
        streams.user(user.userId),
        'no_stream',
        [
          UserRegistered({ userId: user.userId, email: user.email, name: user.name, image: user.image ?? null, emailVerified: false }),
          CredentialAccountCreated({ userId: user.userId, accountId: `acc-${user.userId}`, passwordHash }),
        ],
        metadata,
      ),
    ]);
  }

  async function userRow(userId: string): Promise<Record<string, unknown> | null> {
    return (await db.pool.maybeOne(sql.unsafe`SELECT * FROM "user" WHERE id = ${userId}`)) as Record<string, unknown> | null;
  }

  it('a registration gives a user row and a credential account row, timed at the decision', async () => {
    const userId = randomUUID();
    await register({ userId, email: `${userId}@example.test`, name: 'Ada Lovelace', image: 'https://img.example/ada.png' });
    await catchUp(db.store, target);

    expect(await userRow(userId)).toEqual({
      id: userId,
      name: 'Ada Lovelace',
      email: `${userId}@example.test`,
      emailVerified: false,
      image: 'https://img.example/ada.png',
      createdAt: Date.parse(registeredAt),
      updatedAt: Date.parse(registeredAt),
      username: null,
      displayUsername: null,
      role: 'user',
      banned: false,
      banReason: null,
      banExpires: null,
    });
    const accounts = await db.pool.any(sql.unsafe`SELECT * FROM account WHERE "userId" = ${userId}`);
    expect(accounts).toEqual([
      {
        id: `acc-${userId}`,
        // better-auth's credential account: the account id is the user id.
        accountId: userId,
        providerId: 'credential',
        userId,
        accessToken: null,
        refreshToken: null,
        idToken: null,
        accessTokenExpiresAt: null,
        refreshTokenExpiresAt: null,
        scope: null,
        password: passwordHash,
        createdAt: Date.parse(registeredAt),
        updatedAt: Date.parse(registeredAt),
      },
    ]);
  });

  it('user.updated changes the name and image it carries and leaves the rest', async () => {
    const userId = randomUUID();
    await register({ userId, email: `${userId}@example.test`, name: 'Before', image: 'https://img.example/before.png' });
    await db.store.append([domainWrite(streams.user(userId), 2, [UserUpdated({ userId, name: 'Renamed' })], metadataAt(updatedAt))]);
    await catchUp(db.store, target);

    expect(await userRow(userId)).toMatchObject({
      name: 'Renamed',
      image: 'https://img.example/before.png',
      createdAt: Date.parse(registeredAt),
      updatedAt: Date.parse(updatedAt),
    });

    const laterStill = '2026-03-03T09:00:00.000Z';
    await db.store.append([domainWrite(streams.user(userId), 3, [UserUpdated({ userId, image: null })], metadataAt(laterStill))]);
    await catchUp(db.store, target);
    expect(await userRow(userId)).toMatchObject({ name: 'Renamed', image: null, updatedAt: Date.parse(laterStill) });

    await db.store.append([
      domainWrite(streams.user(userId), 4, [UserUpdated({ userId, name: 'Both', image: 'https://img.example/both.png' })], metadataAt(laterStill)),
    ]);
    await catchUp(db.store, target);
    expect(await userRow(userId)).toMatchObject({ name: 'Both', image: 'https://img.example/both.png' });
  });

  it('the admin plugin\'s role and ban columns follow role changes, bans and unbans', async () => {
    const userId = randomUUID();
    await register({ userId, email: `${userId}@example.test`, name: 'Admin' });
    const banExpires = '2026-04-01T00:00:00.000Z';
    await db.store.append([
      domainWrite(
        streams.user(userId),
        2,
        [UserRoleChanged({ userId, role: 'admin,user' }), UserBanned({ userId, reason: 'spam', expiresAt: banExpires })],
        metadataAt(updatedAt),
      ),
    ]);
    await catchUp(db.store, target);
    expect(await userRow(userId)).toMatchObject({
      role: 'admin,user',
      banned: true,
      banReason: 'spam',
      banExpires: Date.parse(banExpires),
      updatedAt: Date.parse(updatedAt),
    });
    await db.store.append([domainWrite(streams.user(userId), 4, [UserUnbanned({ userId, reason: 'expired' })], metadataAt(updatedAt))]);
    await catchUp(db.store, target);
    expect(await userRow(userId)).toMatchObject({ role: 'admin,user', banned: false, banReason: null, banExpires: null });
  });

  it('user.username_changed sets both username columns, null clearing one, and moves updatedAt', async () => {
    const userId = randomUUID();
    await register({ userId, email: `${userId}@example.test`, name: 'Named' });
    await db.store.append([
      domainWrite(streams.user(userId), 2, [UsernameChanged({ userId, username: 'ada_l', displayUsername: 'Ada_L' })], metadataAt(updatedAt)),
    ]);
    await catchUp(db.store, target);
    expect(await userRow(userId)).toMatchObject({
      name: 'Named',
      username: 'ada_l',
      displayUsername: 'Ada_L',
      createdAt: Date.parse(registeredAt),
      updatedAt: Date.parse(updatedAt),
    });

    const later = '2026-03-04T08:00:00.000Z';
    await db.store.append([
      domainWrite(streams.user(userId), 3, [UsernameChanged({ userId, username: null, displayUsername: 'Shown only' })], metadataAt(later)),
    ]);
    await catchUp(db.store, target);
    expect(await userRow(userId)).toMatchObject({ username: null, displayUsername: 'Shown only', updatedAt: Date.parse(later) });
  });

  it('moves its checkpoint over events it does not project, without rows for them', async () => {
    const email = `${randomUUID()}@example.test`;
    const { position } = await db.store.append([
      domainWrite(streams.signIn(email), 'any', [SignInFailed({ email, userId: null, reason: 'user_not_found' })], metadataAt(updatedAt)),
    ]);
    const usersBefore = await db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM "user"`);

    expect(await catchUp(db.store, target)).toBe(position);
    expect(await target.readCheckpoint()).toBe(position);
    expect(await db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM "user"`)).toBe(usersBefore);
  });

  it('applies a batch whole or not at all: a failing event rolls back the rows and the checkpoint', async () => {
    const userId = randomUUID();
    const checkpoint = await catchUp(db.store, target);
    await register({ userId, email: `${userId}@example.test`, name: 'First' });
    const pending = toProjected(await db.store.readAll({ after: checkpoint, limit: 100 }));
    // A second registration of the same email breaks the read model's unique index. The decider never emits
    // one, and it is not appended to the log; it stands in for any failure part-way through a batch.
    const clash = projectedAt(
      UserRegistered({ userId: randomUUID(), email: `${userId}@example.test`, name: 'Clash', image: null, emailVerified: false }),
      pending.at(-1)!.recorded.position + 1,
    );

    await expect(target.applyBatch([...pending, clash], checkpoint, clash.recorded.position)).rejects.toThrow();

    expect(await target.readCheckpoint()).toBe(checkpoint);
    expect(await userRow(userId)).toBeNull();
    expect(await db.pool.maybeOne(sql.unsafe`SELECT id FROM account WHERE "userId" = ${userId}`)).toBeNull();

    await catchUp(db.store, target);
    expect(await userRow(userId)).toMatchObject({ name: 'First' });
  });

  it('fences a batch that starts from a stale checkpoint, writing nothing', async () => {
    const userId = randomUUID();
    await register({ userId, email: `${userId}@example.test`, name: 'Registered' });
    const stale = await catchUp(db.store, target);
    const { position } = await db.store.append([
      domainWrite(streams.user(userId), 2, [UserUpdated({ userId, name: 'Renamed once' })], metadataAt(updatedAt)),
    ]);
    expect(await catchUp(db.store, target)).toBe(position);

    // A holder that lost its lock still believes the checkpoint is `stale`; its batch must not land.
    const late = projectedAt(UserUpdated({ userId, name: 'Renamed by a stale holder' }), position);
    await expect(target.applyBatch([late], stale, position)).rejects.toBeInstanceOf(CheckpointFencedError);

    expect(await target.readCheckpoint()).toBe(position);
    expect(await userRow(userId)).toMatchObject({ name: 'Renamed once' });
  });

  it('reset empties its tables and its checkpoint, and a replay rebuilds the same rows', async () => {
    const head = await catchUp(db.store, target);
    const snapshot = async (): Promise<unknown> => ({
      users: await db.pool.any(sql.unsafe`SELECT * FROM "user" ORDER BY id`),
      accounts: await db.pool.any(sql.unsafe`SELECT * FROM account ORDER BY id`),
    });
    const before = await snapshot();
    expect((before as { users: unknown[] }).users.length).toBeGreaterThan(0);

    await target.reset();
    expect(await target.readCheckpoint()).toBe(0);
    expect(await db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM "user"`)).toBe(0);
    expect(await db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM account`)).toBe(0);

    expect(await catchUp(db.store, target, 7)).toBe(head);
    expect(await snapshot()).toEqual(before);
  });
});

/** An event as a holder would project it, without going through the log (for batches the log must not hold). */
function projectedAt(event: DomainEvent, position: number): ProjectedEvent {
  const metadata = metadataAt(updatedAt);
  return {
    event,
    recorded: {
      position,
      eventId: randomUUID(),
      streamId: 'test-synthetic',
      streamVersion: 1,
      type: event.type,
      data: event.data,
      metadata,
      recordedAt: new Date(metadata.occurredAt),
    },
  };
}
