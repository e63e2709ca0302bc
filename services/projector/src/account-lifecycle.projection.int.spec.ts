import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CredentialAccountCreated,
  EmailChanged,
  EmailVerified,
  PasswordChanged,
  SessionCreated,
  streams,
  UserDeleted,
  UserRegistered,
  VerificationTokenConsumed,
  VerificationTokenIssued,
  type CachedSession,
  type DomainEvent,
} from '@portcullis/contracts';
import {
  createRedisClient,
  generateSessionToken,
  hashToken,
  PostgresProjectionTarget,
  RedisProjectionTarget,
  sessionCacheLayout,
  type SessionCacheKeys,
  sql,
  type Redis,
} from '@portcullis/platform';
import { catchUp, createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../tests/support/event-log.ts';
import { deleteRedisKeys, describeOnRedisDeployments, uniqueRedisPrefix } from '../../../tests/support/redis.ts';
import { identityProjection } from './identity/identity.projection.ts';
import { sessionCacheProjection } from './session/session-cache.projection.ts';
import { userHistoryFrom } from './session/user-history.ts';
import { sessionsProjection } from './session/sessions.projection.ts';

const at = '2026-06-01T10:00:00.000Z';
const later = '2026-06-02T10:00:00.000Z';
const hash = (n: number): string => `$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaC${n}`;

async function appendUser(db: EventLogDatabase, userId: string, events: DomainEvent[], occurredAt = at): Promise<void> {
  await db.store.append([domainWrite(streams.user(userId), 'any', events, metadataAt(occurredAt))]);
}

async function openSession(db: EventLogDatabase, userId: string): Promise<{ sessionId: string; tokenHash: string }> {
  const sessionId = randomUUID();
  const tokenHash = hashToken(generateSessionToken());
  await db.store.append([
    domainWrite(
      streams.session(sessionId),
      'no_stream',
      [
        SessionCreated({
          sessionId,
          userId,
          tokenHash,
          expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
          ipAddress: null,
          userAgent: null,
          rememberMe: true,
          method: 'email-password',
        }),
      ],
      metadataAt(at),
    ),
  ]);
  return { sessionId, tokenHash };
}

describe('read models through the email lifecycle (identity, sessions)', () => {
  let db: EventLogDatabase;
  let identity: PostgresProjectionTarget;
  let sessions: PostgresProjectionTarget;

  beforeAll(async () => {
    db = await createEventLogDatabase('lifecycle_projection');
    identity = new PostgresProjectionTarget(db.pool, identityProjection);
    sessions = new PostgresProjectionTarget(db.pool, sessionsProjection);
  });

  afterAll(async () => {
    await db?.close();
  });

  const catchUpAll = async (): Promise<void> => {
    await catchUp(db.store, identity);
    await catchUp(db.store, sessions);
  };
  const count = async (table: string, where: string, value: string): Promise<number> =>
    Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM ${sql.identifier([table])} WHERE ${sql.identifier([where])} = ${value}`));

  it('verifies and changes the email, changes the password, and keeps only token hashes', async () => {
    const userId = randomUUID();
    await appendUser(db, userId, [
      UserRegistered({ userId, email: `${userId}@old.test`, name: 'Ada', image: null, emailVerified: false }),
      CredentialAccountCreated({ userId, accountId: `acc-${userId}`, passwordHash: hash(1) }),
    ]);
    await appendUser(db, userId, [EmailVerified({ userId, email: `${userId}@old.test` })], later);
    await catchUpAll();
    expect(await db.pool.one(sql.unsafe`SELECT email, "emailVerified", "updatedAt" FROM "user" WHERE id = ${userId}`)).toEqual({
      email: `${userId}@old.test`,
      emailVerified: true,
      updatedAt: Date.parse(later),
    });

    const tokenHash = hashToken(`reset-${userId}`);
    await db.store.append([
      domainWrite(
        streams.verification(tokenHash),
        'no_stream',
        [VerificationTokenIssued({ purpose: 'reset-password', tokenHash, userId, expiresAt: '2026-06-01T11:00:00.000Z' })],
        metadataAt(at),
      ),
    ]);
    await catchUpAll();
    expect(await db.pool.one(sql.unsafe`SELECT id, identifier, value, "expiresAt" FROM verification WHERE value = ${userId}`)).toEqual({
      id: tokenHash,
      identifier: `reset-password:${tokenHash}`,
      value: userId,
      expiresAt: Date.parse('2026-06-01T11:00:00.000Z'),
    });

    await db.store.append([
      domainWrite(streams.verification(tokenHash), 1, [VerificationTokenConsumed({ purpose: 'reset-password', tokenHash, userId })], metadataAt(later)),
      domainWrite(streams.user(userId), 'any', [PasswordChanged({ userId, accountId: `acc-${userId}`, passwordHash: hash(2), via: 'reset-password' })], metadataAt(later)),
    ]);
    await appendUser(db, userId, [EmailChanged({ userId, previousEmail: `${userId}@old.test`, email: `${userId}@new.test`, emailVerified: false })], later);
    await catchUpAll();
    expect(await count('verification', 'value', userId)).toBe(0);
    expect(await db.pool.oneFirst(sql.unsafe`SELECT password FROM account WHERE "userId" = ${userId}`)).toBe(hash(2));
    expect(await db.pool.one(sql.unsafe`SELECT email, "emailVerified" FROM "user" WHERE id = ${userId}`)).toEqual({
      email: `${userId}@new.test`,
      emailVerified: false,
    });
  });

  it('drops a deleted user with its accounts, verifications and sessions, and leaves other users alone', async () => {
    const [userId, otherId] = [randomUUID(), randomUUID()];
    for (const id of [userId, otherId]) {
      await appendUser(db, id, [
        UserRegistered({ userId: id, email: `${id}@x.test`, name: 'U', image: null, emailVerified: true }),
        CredentialAccountCreated({ userId: id, accountId: `acc-${id}`, passwordHash: hash(1) }),
      ]);
      await openSession(db, id);
      await openSession(db, id);
    }
    const tokenHash = hashToken(`delete-${userId}`);
    await db.store.append([
      domainWrite(
        streams.verification(tokenHash),
        'no_stream',
        [VerificationTokenIssued({ purpose: 'delete-account', tokenHash, userId, expiresAt: '2026-06-02T10:00:00.000Z' })],
        metadataAt(at),
      ),
    ]);
    await catchUpAll();
    expect(await count('session', 'userId', userId)).toBe(2);
    expect(await db.pool.oneFirst(sql.unsafe`SELECT identifier FROM verification WHERE id = ${tokenHash}`)).toBe(`delete-account-${tokenHash}`);

    await appendUser(db, userId, [UserDeleted({ userId, email: `${userId}@x.test` })], later);
    await catchUpAll();
    expect(await count('user', 'id', userId)).toBe(0);
    expect(await count('account', 'userId', userId)).toBe(0);
    expect(await count('session', 'userId', userId)).toBe(0);
    expect(await count('verification', 'value', userId)).toBe(0);
    expect(await count('user', 'id', otherId)).toBe(1);
    expect(await count('session', 'userId', otherId)).toBe(2);
  });
});

describeOnRedisDeployments('session cache through the email lifecycle', (deployment) => {
  let redisUrl: string;
  const prefix = uniqueRedisPrefix();
  let keys: SessionCacheKeys;
  let db: EventLogDatabase;
  let redis: Redis;
  let reader: Redis;
  let target: RedisProjectionTarget;

  beforeAll(async () => {
    redisUrl = deployment().url;
    db = await createEventLogDatabase('lifecycle_cache_projection');
    redis = createRedisClient(redisUrl, { name: 'lifecycle-cache-spec-target' });
    reader = createRedisClient(redisUrl, { name: 'lifecycle-cache-spec-reader' });
    const layout = sessionCacheLayout(prefix, await db.store.logId());
    target = new RedisProjectionTarget(redis, sessionCacheProjection(userHistoryFrom(db.store)), layout, db.store);
    await target.readCheckpoint();
    keys = layout.generation(target.generation!);
  });

  afterAll(async () => {
    await deleteRedisKeys(redisUrl, prefix).catch(() => {});
    redis?.disconnect();
    reader?.disconnect();
    await db?.close();
  });

  const cached = async (tokenHash: string): Promise<CachedSession | null> => {
    const raw = await reader.get(keys.session(tokenHash));
    return raw === null ? null : (JSON.parse(raw) as CachedSession);
  };

  it('rewrites cached sessions when the email is verified or changed, and drops every key of a deleted user', async () => {
    const userId = randomUUID();
    await appendUser(db, userId, [UserRegistered({ userId, email: `${userId}@old.test`, name: 'Ada', image: null, emailVerified: false })]);
    const first = await openSession(db, userId);
    const second = await openSession(db, userId);
    await appendUser(db, userId, [EmailVerified({ userId, email: `${userId}@old.test` })], later);
    await catchUp(db.store, target);
    expect((await cached(first.tokenHash))?.user).toMatchObject({ email: `${userId}@old.test`, emailVerified: true, updatedAt: later });

    await appendUser(db, userId, [EmailChanged({ userId, previousEmail: `${userId}@old.test`, email: `${userId}@new.test`, emailVerified: false })], later);
    await catchUp(db.store, target);
    expect((await cached(second.tokenHash))?.user).toMatchObject({ email: `${userId}@new.test`, emailVerified: false });

    await appendUser(db, userId, [UserDeleted({ userId, email: `${userId}@new.test` })], later);
    // A session opened in a race with the deletion is not cached either.
    const late = await openSession(db, userId);
    await catchUp(db.store, target);
    expect(
      await reader.exists(
        keys.session(first.tokenHash),
        keys.session(second.tokenHash),
        keys.session(late.tokenHash),
        keys.sessionToken(first.sessionId),
        keys.sessionToken(second.sessionId),
        keys.user(userId),
        keys.userSessions(userId),
      ),
    ).toBe(0);
  });
});
