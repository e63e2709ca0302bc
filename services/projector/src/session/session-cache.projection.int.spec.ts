import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  cachedSessionSchema,
  SessionCreated,
  SessionRefreshed,
  SessionRevoked,
  streams,
  UsernameChanged,
  UserRegistered,
  UserUpdated,
  type CachedSession,
  type User,
} from '@portcullis/contracts';
import {
  CheckpointFencedError,
  createRedisClient,
  generateSessionToken,
  hashToken,
  RedisProjectionTarget,
  sessionCacheKeys,
  type Redis,
  type RedisProjection,
  type SessionCacheKeys,
} from '@portcullis/platform';
import { catchUp, createEventLogDatabase, domainWrite, metadataAt, toProjected, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { deleteRedisKeys, describeWithRedis, testRedisUrl, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';
import { sessionCacheProjection } from './session-cache.projection.ts';

const DAY_MS = 24 * 3600 * 1000;
const registeredAt = '2026-05-01T12:00:00.000Z';
const updatedAt = '2026-05-02T12:00:00.000Z';

describeWithRedis('session-cache projection (Redis)', () => {
  const redisUrl = testRedisUrl()!;
  const prefix = uniqueRedisPrefix();
  const keys: SessionCacheKeys = sessionCacheKeys(prefix);
  const projection = sessionCacheProjection(keys);
  let db: EventLogDatabase;
  let redis: Redis;
  let reader: Redis;
  let target: RedisProjectionTarget;

  beforeAll(async () => {
    db = await createEventLogDatabase('session_cache_projection');
    // The target's connection is its own (WATCH is per connection); the test reads through another.
    redis = createRedisClient(redisUrl, { name: 'session-cache-spec-target' });
    reader = createRedisClient(redisUrl, { name: 'session-cache-spec-reader' });
    target = new RedisProjectionTarget(redis, projection, db.pool);
  });

  afterAll(async () => {
    await deleteRedisKeys(redisUrl, prefix).catch(() => {});
    redis?.disconnect();
    reader?.disconnect();
    await db?.close();
  });

  async function register(userId: string, name: string): Promise<void> {
    await db.store.append([
      domainWrite(
        streams.user(userId),
        'no_stream',
        [UserRegistered({ userId, email: `${userId}@example.test`, name, image: null, emailVerified: true })],
        metadataAt(registeredAt),
      ),
    ]);
  }

  /** Signs in: returns the raw token and the expiry, a week ahead of now so the key lives through the test. */
  async function signIn(userId: string, sessionId = randomUUID()): Promise<{ sessionId: string; token: string; expiresAt: string }> {
    const token = generateSessionToken();
    const expiresAt = new Date(Date.now() + 7 * DAY_MS).toISOString();
    await db.store.append([
      domainWrite(
        streams.session(sessionId),
        'no_stream',
        [
          SessionCreated({
            sessionId,
            userId,
            tokenHash: hashToken(token),
            expiresAt,
            ipAddress: '198.51.100.4',
            userAgent: 'vitest',
            rememberMe: true,
            method: 'email-password',
          }),
        ],
        metadataAt(registeredAt),
      ),
    ]);
    return { sessionId, token, expiresAt };
  }

  async function cached(token: string): Promise<CachedSession | null> {
    const raw = await reader.get(keys.session(hashToken(token)));
    return raw === null ? null : cachedSessionSchema.parse(JSON.parse(raw));
  }

  /** The key's remaining life must match expiresAt; a few seconds of slack covers the time the test takes. */
  async function expectExpiresAt(key: string, expiresAt: string): Promise<void> {
    const pttl = await reader.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    expect(Math.abs(Date.now() + pttl - Date.parse(expiresAt))).toBeLessThan(5_000);
  }

  async function allKeys(): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await reader.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found.sort();
  }

  it('holds {session, user} under the token hash, expiring at expiresAt, and never the token', async () => {
    const userId = randomUUID();
    await register(userId, 'Grace');
    const { sessionId, token, expiresAt } = await signIn(userId);
    await catchUp(db.store, target);

    const user: User = {
      id: userId,
      email: `${userId}@example.test`,
      name: 'Grace',
      image: null,
      emailVerified: true,
      createdAt: registeredAt,
      updatedAt: registeredAt,
    };
    expect(await cached(token)).toEqual({
      session: {
        id: sessionId,
        userId,
        expiresAt,
        createdAt: registeredAt,
        updatedAt: registeredAt,
        ipAddress: '198.51.100.4',
        userAgent: 'vitest',
        rememberMe: true,
      },
      user,
    });
    await expectExpiresAt(keys.session(hashToken(token)), expiresAt);
    await expectExpiresAt(keys.sessionToken(sessionId), expiresAt);
    expect(await reader.smembers(keys.userSessions(userId))).toEqual([hashToken(token)]);

    // The raw token is what a thief would need; it appears in no key and no value.
    for (const key of await allKeys()) {
      expect(key).not.toContain(token);
      const type = await reader.type(key);
      const value = type === 'set' ? (await reader.smembers(key)).join(',') : ((await reader.get(key)) ?? '');
      expect(value).not.toContain(token);
    }
  });

  it('user.updated rewrites every cached session of that user, keeping each expiry', async () => {
    const [userId, otherId] = [randomUUID(), randomUUID()];
    await register(userId, 'Before');
    await register(otherId, 'Bystander');
    const first = await signIn(userId);
    const second = await signIn(userId);
    const other = await signIn(otherId);
    await catchUp(db.store, target);

    await db.store.append([
      domainWrite(streams.user(userId), 1, [UserUpdated({ userId, name: 'After', image: 'https://img.example/after.png' })], metadataAt(updatedAt)),
    ]);
    await catchUp(db.store, target);

    for (const s of [first, second]) {
      expect((await cached(s.token))?.user).toMatchObject({ name: 'After', image: 'https://img.example/after.png', updatedAt });
      await expectExpiresAt(keys.session(hashToken(s.token)), s.expiresAt);
    }
    expect((await cached(other.token))?.user).toMatchObject({ name: 'Bystander', image: null, updatedAt: registeredAt });
  });

  it('user.username_changed sets or clears the username fields in every cached session of the user', async () => {
    const userId = randomUUID();
    await register(userId, 'Named');
    const session = await signIn(userId);
    await catchUp(db.store, target);
    expect((await cached(session.token))?.user).not.toHaveProperty('username');

    await db.store.append([
      domainWrite(streams.user(userId), 1, [UsernameChanged({ userId, username: 'ada_l', displayUsername: 'Ada_L' })], metadataAt(updatedAt)),
    ]);
    await catchUp(db.store, target);
    expect((await cached(session.token))?.user).toMatchObject({ name: 'Named', username: 'ada_l', displayUsername: 'Ada_L', updatedAt });
    await expectExpiresAt(keys.session(hashToken(session.token)), session.expiresAt);

    await db.store.append([
      domainWrite(streams.user(userId), 2, [UsernameChanged({ userId, username: null, displayUsername: 'Shown' })], metadataAt(updatedAt)),
    ]);
    await catchUp(db.store, target);
    const user = (await cached(session.token))?.user;
    expect(user).toMatchObject({ displayUsername: 'Shown' });
    expect(user).not.toHaveProperty('username');
  });

  it('session.refreshed moves the cached expiresAt and the key expiry', async () => {
    const userId = randomUUID();
    await register(userId, 'Refresher');
    const session = await signIn(userId);
    const laterExpiry = new Date(Date.parse(session.expiresAt) + 2 * DAY_MS).toISOString();
    await db.store.append([
      domainWrite(
        streams.session(session.sessionId),
        1,
        [SessionRefreshed({ sessionId: session.sessionId, userId, expiresAt: laterExpiry })],
        metadataAt(updatedAt),
      ),
    ]);
    await catchUp(db.store, target);

    expect((await cached(session.token))?.session).toMatchObject({ expiresAt: laterExpiry, updatedAt, createdAt: registeredAt });
    await expectExpiresAt(keys.session(hashToken(session.token)), laterExpiry);
    await expectExpiresAt(keys.sessionToken(session.sessionId), laterExpiry);
  });

  it('session.revoked removes the session’s keys and leaves the user’s other session', async () => {
    const userId = randomUUID();
    await register(userId, 'Revoker');
    const revoked = await signIn(userId);
    const kept = await signIn(userId);
    await catchUp(db.store, target);
    expect(await cached(revoked.token)).not.toBeNull();

    await db.store.append([
      domainWrite(
        streams.session(revoked.sessionId),
        1,
        [SessionRevoked({ sessionId: revoked.sessionId, userId, reason: 'signed_out' })],
        metadataAt(updatedAt),
      ),
    ]);
    await catchUp(db.store, target);

    expect(await cached(revoked.token)).toBeNull();
    expect(await reader.exists(keys.sessionToken(revoked.sessionId))).toBe(0);
    expect(await reader.smembers(keys.userSessions(userId))).toEqual([hashToken(kept.token)]);
    expect(await cached(kept.token)).not.toBeNull();
  });

  it('moves the checkpoint key with every batch, to the batch’s last position', async () => {
    const userId = randomUUID();
    await register(userId, 'Counter');
    let head = await catchUp(db.store, target);
    expect(await reader.get(keys.checkpoint(projection.name))).toBe(String(head));

    for (let i = 0; i < 3; i += 1) await signIn(userId);
    const positions = (await db.store.readAll({ after: head, limit: 100 })).map((e) => e.position);
    // Two batches: the checkpoint stops at the end of each, not at the head.
    await target.applyBatch(toProjected(await db.store.readAll({ after: head, limit: 2 })), head, positions[1]!);
    expect(await reader.get(keys.checkpoint(projection.name))).toBe(String(positions[1]));
    head = await catchUp(db.store, target);
    expect(head).toBe(positions[2]);
    expect(await target.readCheckpoint()).toBe(head);
    expect(await reader.smembers(keys.userSessions(userId))).toHaveLength(3);
  });

  it('fences a batch from a stale checkpoint and writes nothing of it', async () => {
    const userId = randomUUID();
    await register(userId, 'Stale');
    const stale = await catchUp(db.store, target);
    const session = await signIn(userId);
    const batch = await db.store.readAll({ after: stale, limit: 100 });
    // Another holder got there first: the checkpoint is past `stale` now.
    await reader.set(keys.checkpoint(projection.name), String(stale + 1));
    try {
      await expect(target.applyBatch(toProjected(batch), stale, batch.at(-1)!.position)).rejects.toBeInstanceOf(CheckpointFencedError);
      expect(await cached(session.token)).toBeNull();
      expect(await reader.exists(keys.sessionToken(session.sessionId), keys.userSessions(userId))).toBe(0);
      expect(await reader.get(keys.checkpoint(projection.name))).toBe(String(stale + 1));
    } finally {
      await reader.set(keys.checkpoint(projection.name), String(stale));
    }
    await catchUp(db.store, target);
    expect(await cached(session.token)).not.toBeNull();
  });

  it('fences a batch whose checkpoint moves while the batch is being built (WATCH), writing nothing', async () => {
    const userId = randomUUID();
    await register(userId, 'Raced');
    const from = await catchUp(db.store, target);
    const session = await signIn(userId);
    const batch = await db.store.readAll({ after: from, limit: 100 });
    const checkpointKey = keys.checkpoint(projection.name);
    let moved = false;
    // Another writer moves the checkpoint after this batch checked it and before its EXEC.
    const racing: RedisProjection = {
      ...projection,
      async apply(redisBatch, projected) {
        if (!moved) {
          moved = true;
          await reader.set(checkpointKey, String(from + 1));
        }
        await projection.apply(redisBatch, projected);
      },
    };

    await expect(
      new RedisProjectionTarget(redis, racing, db.pool).applyBatch(toProjected(batch), from, batch.at(-1)!.position),
    ).rejects.toBeInstanceOf(CheckpointFencedError);

    expect(moved).toBe(true);
    expect(await cached(session.token)).toBeNull();
    expect(await reader.get(checkpointKey)).toBe(String(from + 1));
    await reader.set(checkpointKey, String(from));
    await catchUp(db.store, target);
    expect(await cached(session.token)).not.toBeNull();
  });

  it('reset deletes its keys (and no one else’s), and a replay rebuilds the same values', async () => {
    const neighbourKey = `${uniqueRedisPrefix()}session:neighbour`;
    await reader.set(neighbourKey, 'not ours', 'PX', 60_000);
    try {
      const head = await catchUp(db.store, target);
      const snapshot = async (): Promise<Record<string, unknown>> => {
        const values: Record<string, unknown> = {};
        for (const key of await allKeys()) {
          values[key] = (await reader.type(key)) === 'set' ? (await reader.smembers(key)).sort() : await reader.get(key);
        }
        return values;
      };
      const before = await snapshot();
      expect(Object.keys(before).length).toBeGreaterThan(10);

      await target.reset();
      expect(await allKeys()).toEqual([keys.checkpoint(projection.name)]);
      expect(await target.readCheckpoint()).toBe(0);
      expect(await reader.get(neighbourKey)).toBe('not ours');

      expect(await catchUp(db.store, target, 3)).toBe(head);
      expect(await snapshot()).toEqual(before);
    } finally {
      await reader.del(neighbourKey);
    }
  });
});
