import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import {
  cachedSessionSchema,
  MemberRemoved,
  OrganizationDeleted,
  SessionActiveOrganizationChanged,
  SessionCreated,
  SessionRefreshed,
  SessionRevoked,
  streams,
  TeamMemberRemoved,
  TeamRemoved,
  UserDeleted,
  UsernameChanged,
  UserRegistered,
  UserUpdated,
  unbannedUser,
  type CachedSession,
  type DomainEvent,
  type User,
} from '@portcullis/contracts';
import {
  CheckpointFencedError,
  createRedisClient,
  generateSessionToken,
  hashToken,
  parseCacheCheckpoint,
  parsePointer,
  RedisProjectionTarget,
  scanKeys,
  sessionCacheLayout,
  type Redis,
  type RedisProjection,
  type SessionCacheKeys,
  type SessionCacheLayout,
} from '@portcullis/platform';
import { catchUp, createEventLogDatabase, domainWrite, metadataAt, toProjected, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { deleteRedisKeys, describeOnRedisDeployments, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';
import { sessionCacheProjection } from './session-cache.projection.ts';
import { userHistoryFrom } from './user-history.ts';

const DAY_MS = 24 * 3600 * 1000;
const registeredAt = '2026-05-01T12:00:00.000Z';
const updatedAt = '2026-05-02T12:00:00.000Z';

describeOnRedisDeployments('session-cache projection', (deployment) => {
  let redisUrl: string;
  const prefix = uniqueRedisPrefix();
  let layout: SessionCacheLayout;
  /** The keys of the generation the target writes. */
  let keys: SessionCacheKeys;
  let projection: RedisProjection;
  let db: EventLogDatabase;
  let redis: Redis;
  let reader: Redis;
  let target: RedisProjectionTarget;

  beforeAll(async () => {
    redisUrl = deployment().url;
    db = await createEventLogDatabase('session_cache_projection');
    // The target's connection is its own, so a spec can see what the target asks of Redis; the test reads through another.
    redis = createRedisClient(redisUrl, { name: 'session-cache-spec-target' });
    reader = createRedisClient(redisUrl, { name: 'session-cache-spec-reader' });
    projection = sessionCacheProjection(userHistoryFrom(db.store));
    layout = sessionCacheLayout(prefix, await db.store.logId());
    target = new RedisProjectionTarget(redis, projection, layout, db.store);
    await target.readCheckpoint();
    // Nothing to replay yet: the first generation is the served one at once.
    await target.caughtUp();
    keys = layout.generation(target.generation!);
  });

  /** The checkpoint's position as Redis holds it (it also names the event there). */
  async function checkpointPosition(): Promise<number | undefined> {
    return parseCacheCheckpoint(await reader.get(keys.checkpoint))?.position;
  }

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
  async function signIn(
    userId: string,
    sessionId = randomUUID(),
    lifetimeMs = 7 * DAY_MS,
  ): Promise<{ sessionId: string; token: string; expiresAt: string }> {
    const token = generateSessionToken();
    const expiresAt = new Date(Date.now() + lifetimeMs).toISOString();
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
    await scanKeys(reader, `${prefix}*`, async (batch) => {
      found.push(...batch);
    });
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
      ...unbannedUser,
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
        activeOrganizationId: null,
        activeTeamId: null,
        impersonatedBy: null,
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
        [SessionRevoked({ sessionId: revoked.sessionId, userId, tokenHash: hashToken(revoked.token), reason: 'signed_out' })],
        metadataAt(updatedAt),
      ),
    ]);
    await catchUp(db.store, target);

    expect(await cached(revoked.token)).toBeNull();
    expect(await reader.exists(keys.sessionToken(revoked.sessionId))).toBe(0);
    expect(await reader.smembers(keys.userSessions(userId))).toEqual([hashToken(kept.token)]);
    expect(await cached(kept.token)).not.toBeNull();
  });

  async function select(
    session: { sessionId: string },
    userId: string,
    activeOrganizationId: string | null,
    activeTeamId: string | null,
  ): Promise<void> {
    await db.store.append([
      domainWrite(
        streams.session(session.sessionId),
        'any',
        [SessionActiveOrganizationChanged({ sessionId: session.sessionId, userId, activeOrganizationId, activeTeamId })],
        metadataAt(updatedAt),
      ),
    ]);
  }

  async function onOrganization(organizationId: string, events: DomainEvent[]): Promise<void> {
    await db.store.append([domainWrite(streams.organization(organizationId), 'any', events, metadataAt(updatedAt))]);
  }

  const workers = new Set<string>();

  /** A registered user with a cached session working in `organizationId` (and `teamId`). */
  async function working(organizationId: string, teamId: string | null = null, userId = randomUUID(), sessionLifetimeMs?: number) {
    if (!workers.has(userId)) await register(userId, 'Worker');
    workers.add(userId);
    const session = await signIn(userId, randomUUID(), sessionLifetimeMs);
    await select(session, userId, organizationId, teamId);
    return { ...session, userId };
  }

  async function selection(token: string): Promise<{ activeOrganizationId: string | null; activeTeamId: string | null } | null> {
    const session = (await cached(token))?.session;
    return session ? { activeOrganizationId: session.activeOrganizationId, activeTeamId: session.activeTeamId } : null;
  }

  const none = { activeOrganizationId: null, activeTeamId: null };

  it('session.active_organization_changed sets the cached selection, moves updatedAt, keeps the expiry, and lists the session under it', async () => {
    const [organizationId, teamId, otherOrganizationId] = [randomUUID(), randomUUID(), randomUUID()];
    const { token, expiresAt, userId, sessionId } = await working(organizationId, teamId);
    await catchUp(db.store, target);

    expect(await cached(token)).toMatchObject({
      session: { id: sessionId, userId, expiresAt, activeOrganizationId: organizationId, activeTeamId: teamId, createdAt: registeredAt, updatedAt },
      user: { id: userId },
    });
    await expectExpiresAt(keys.session(hashToken(token)), expiresAt);
    expect(await reader.smembers(keys.organizationSessions(organizationId))).toEqual([hashToken(token)]);
    expect(await reader.smembers(keys.teamSessions(teamId))).toEqual([hashToken(token)]);

    await select({ sessionId }, userId, otherOrganizationId, null);
    await catchUp(db.store, target);
    expect(await selection(token)).toEqual({ activeOrganizationId: otherOrganizationId, activeTeamId: null });
    expect(await reader.exists(keys.organizationSessions(organizationId), keys.teamSessions(teamId))).toBe(0);
    expect(await reader.smembers(keys.organizationSessions(otherOrganizationId))).toEqual([hashToken(token)]);
  });

  it('a member who leaves or is removed loses the organization on each cached session, and no one else does', async () => {
    const [organizationId, elsewhere, teamId] = [randomUUID(), randomUUID(), randomUUID()];
    const leaver = await working(organizationId, teamId);
    const leaverSecond = await working(organizationId, null, leaver.userId);
    const leaverElsewhere = await working(elsewhere, null, leaver.userId);
    const removed = await working(organizationId);
    const stays = await working(organizationId, teamId);
    await onOrganization(organizationId, [
      MemberRemoved({ organizationId, memberId: randomUUID(), userId: leaver.userId, reason: 'left' }),
      MemberRemoved({ organizationId, memberId: randomUUID(), userId: removed.userId, reason: 'removed' }),
    ]);
    await catchUp(db.store, target);

    for (const s of [leaver, leaverSecond, removed]) expect(await selection(s.token)).toEqual(none);
    expect(await selection(leaverElsewhere.token)).toEqual({ activeOrganizationId: elsewhere, activeTeamId: null });
    expect(await selection(stays.token)).toEqual({ activeOrganizationId: organizationId, activeTeamId: teamId });
    expect(await reader.smembers(keys.organizationSessions(organizationId))).toEqual([hashToken(stays.token)]);
    expect(await reader.smembers(keys.teamSessions(teamId))).toEqual([hashToken(stays.token)]);
    await expectExpiresAt(keys.session(hashToken(leaver.token)), leaver.expiresAt);
  });

  it('deleting an organization clears it on every cached session that has it active, members named or not', async () => {
    const [organizationId, survivor, teamId] = [randomUUID(), randomUUID(), randomUUID()];
    const named = await working(organizationId, teamId);
    // Selected in a race with the member's removal: the deletion does not name this user.
    const unnamed = await working(organizationId);
    const kept = await working(survivor, randomUUID());
    await onOrganization(organizationId, [
      OrganizationDeleted({ organizationId, slug: `slug-${organizationId}`, memberUserIds: [named.userId] }),
    ]);
    await catchUp(db.store, target);

    expect(await selection(named.token)).toEqual(none);
    expect(await selection(unnamed.token)).toEqual(none);
    expect(await selection(kept.token)).toMatchObject({ activeOrganizationId: survivor });
    expect(await reader.exists(keys.organizationSessions(organizationId), keys.teamSessions(teamId))).toBe(0);
  });

  it('leaving a team clears it for that user; removing a team clears it for everyone; the organization stays', async () => {
    const [organizationId, teamId, otherTeamId] = [randomUUID(), randomUUID(), randomUUID()];
    const u = await working(organizationId, teamId);
    const v = await working(organizationId, teamId);
    const w = await working(organizationId, otherTeamId);

    await onOrganization(organizationId, [TeamMemberRemoved({ organizationId, teamId, teamMemberId: randomUUID(), userId: u.userId })]);
    await catchUp(db.store, target);
    expect(await selection(u.token)).toEqual({ activeOrganizationId: organizationId, activeTeamId: null });
    expect(await selection(v.token)).toEqual({ activeOrganizationId: organizationId, activeTeamId: teamId });
    expect(await reader.smembers(keys.teamSessions(teamId))).toEqual([hashToken(v.token)]);

    await onOrganization(organizationId, [TeamRemoved({ organizationId, teamId })]);
    await catchUp(db.store, target);
    expect(await selection(v.token)).toEqual({ activeOrganizationId: organizationId, activeTeamId: null });
    expect(await selection(w.token)).toEqual({ activeOrganizationId: organizationId, activeTeamId: otherTeamId });
    expect(await reader.exists(keys.teamSessions(teamId))).toBe(0);
    expect((await reader.smembers(keys.organizationSessions(organizationId))).sort()).toEqual(
      [u, v, w].map((s) => hashToken(s.token)).sort(),
    );
  });

  it('a revoked session and a deleted user’s sessions leave the organization and team lists', async () => {
    const [organizationId, teamId] = [randomUUID(), randomUUID()];
    const revoked = await working(organizationId, teamId);
    const deleted = await working(organizationId, teamId);
    const kept = await working(organizationId);
    await db.store.append([
      domainWrite(
        streams.session(revoked.sessionId),
        'any',
        [SessionRevoked({ sessionId: revoked.sessionId, userId: revoked.userId, tokenHash: hashToken(revoked.token), reason: 'signed_out' })],
        metadataAt(updatedAt),
      ),
      domainWrite(streams.user(deleted.userId), 'any', [UserDeleted({ userId: deleted.userId, email: `${deleted.userId}@example.test` })], metadataAt(updatedAt)),
    ]);
    await catchUp(db.store, target);

    expect(await reader.smembers(keys.organizationSessions(organizationId))).toEqual([hashToken(kept.token)]);
    expect(await reader.exists(keys.teamSessions(teamId))).toBe(0);
  });

  it('a cached session that expired is dropped from a list when the list is next visited', async () => {
    const organizationId = randomUUID();
    // Redis drops the session's key at expiresAt; nothing in the log says so.
    const expired = await working(organizationId, null, randomUUID(), 1500);
    const live = await working(organizationId);
    await catchUp(db.store, target);
    expect(await reader.smembers(keys.organizationSessions(organizationId))).toContain(hashToken(expired.token));
    await waitFor(async () => (await reader.exists(keys.session(hashToken(expired.token)))) === 0, {
      timeoutMs: 10_000,
      message: 'the short session’s key to expire',
    });

    await onOrganization(organizationId, [OrganizationDeleted({ organizationId, slug: `slug-${organizationId}`, memberUserIds: [] })]);
    await catchUp(db.store, target);
    expect(await selection(live.token)).toEqual(none);
    expect(await cached(expired.token)).toBeNull();
    expect(await reader.exists(keys.organizationSessions(organizationId))).toBe(0);
  });

  it('moves the checkpoint key with every batch, to the batch’s last position', async () => {
    const userId = randomUUID();
    await register(userId, 'Counter');
    let head = await catchUp(db.store, target);
    expect(await checkpointPosition()).toBe(head);

    for (let i = 0; i < 3; i += 1) await signIn(userId);
    const positions = (await db.store.readAll({ after: head, limit: 100 })).map((e) => e.position);
    // Two batches: the checkpoint stops at the end of each, not at the head.
    const firstTwo = await db.store.readAll({ after: head, limit: 2 });
    await target.applyBatch(toProjected(firstTwo), head, positions[1]!, firstTwo[1]!.eventId);
    // The position and the id of the event there, which ties the cache to this log's history.
    expect(await reader.get(keys.checkpoint)).toBe(`${positions[1]}:${firstTwo[1]!.eventId}`);
    head = await catchUp(db.store, target);
    expect(head).toBe(positions[2]);
    expect(await target.readCheckpoint()).toBe(head);
    expect(await reader.smembers(keys.userSessions(userId))).toHaveLength(3);
  });

  it('announces each move of its checkpoint on the checkpoint channel, after the writes it covers', async () => {
    const listener = createRedisClient(redisUrl, { name: 'session-cache-spec-listener', protocol: 2 });
    const heard: { checkpoint: string; sessionCached: boolean }[] = [];
    const userId = randomUUID();
    await register(userId, 'Announced');
    let head = await catchUp(db.store, target);
    const { token } = await signIn(userId);
    const tokenHash = hashToken(token);
    try {
      listener.on('message', (_channel: string, payload: string) => {
        // What a reader sees when the announcement arrives: the batch must already be in Redis.
        void reader.exists(keys.session(tokenHash)).then((exists) => heard.push({ checkpoint: payload, sessionCached: exists === 1 }));
      });
      await listener.subscribe(layout.checkpointChannel);
      const before = head;
      head = await catchUp(db.store, target);
      // A cluster carries a publish to the other nodes over its bus, so the announcement of the catch-up
      // before the subscription may still arrive, after this one: only the moves past it are this batch's.
      const ours = () => heard.filter((h) => Number(h.checkpoint.split(':').at(-1)) > before);
      await waitFor(() => ours().length > 0, { timeoutMs: 5000, message: 'the checkpoint announcement' });
      expect(ours()).toEqual([{ checkpoint: `${projection.name}@${keys.generation}:${head}`, sessionCached: true }]);
    } finally {
      listener.disconnect();
    }
  });

  it('changes a session it wrote itself without reading Redis first, and reads again once its checkpoint was read anew', async () => {
    const userId = randomUUID();
    await register(userId, 'Writer');
    const session = await signIn(userId);
    const organizationId = randomUUID();
    let from = await catchUp(db.store, target);
    const commands = ['get', 'mget', 'smembers'] as const;
    const readsWhile = async (work: () => Promise<void>): Promise<number> => {
      const spies = commands.map((command) => vi.spyOn(redis, command));
      try {
        await work();
        return spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
      } finally {
        for (const spy of spies) spy.mockRestore();
      }
    };
    const selectAndApply = async (activeOrganizationId: string | null): Promise<number> => {
      await select(session, userId, activeOrganizationId, null);
      const batch = await db.store.readAll({ after: from, limit: 100 });
      const reads = await readsWhile(() => target.applyBatch(toProjected(batch), from, batch.at(-1)!.position, batch.at(-1)!.eventId));
      from = batch.at(-1)!.position;
      return reads;
    };

    expect(await selectAndApply(organizationId)).toBe(0);
    expect((await cached(session.token))?.session.activeOrganizationId).toBe(organizationId);
    // A new holder (or this one after a fence) reads the checkpoint: it no longer vouches for what it wrote.
    await target.readCheckpoint();
    expect(await selectAndApply(null)).toBeGreaterThan(0);
    expect((await cached(session.token))?.session.activeOrganizationId).toBeNull();
  });

  it("rewrites a user's sessions on reading the user and their set ahead together, and their entries in one more round trip", async () => {
    const userId = randomUUID();
    await register(userId, 'Before');
    const sessions = [await signIn(userId), await signIn(userId), await signIn(userId)];
    const from = await catchUp(db.store, target);
    await db.store.append([domainWrite(streams.user(userId), 1, [UserUpdated({ userId, name: 'After' })], metadataAt(new Date()))]);
    const batch = await db.store.readAll({ after: from, limit: 100 });
    expect(batch).toHaveLength(1);
    const spies = (['get', 'mget', 'smembers'] as const).map((command) => vi.spyOn(redis, command));
    try {
      await target.applyBatch(toProjected(batch), from, batch.at(-1)!.position, batch.at(-1)!.eventId);
      const [gets, mgets, smembers] = spies;
      expect(gets).not.toHaveBeenCalled();
      expect(smembers).not.toHaveBeenCalled();
      // The user and the set came in the read ahead's pipeline; the three entries together, once.
      expect(mgets).toHaveBeenCalledTimes(1);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    for (const session of sessions) expect((await cached(session.token))?.user.name).toBe('After');
  });

  it("reads the users of a batch's sessions in one round trip, and a user the batch itself wrote from the batch", async () => {
    const from = await catchUp(db.store, target);
    const known = [randomUUID(), randomUUID(), randomUUID()];
    for (const [i, userId] of known.entries()) await register(userId, `Known ${i}`);
    const afterRegistrations = await catchUp(db.store, target);
    expect(afterRegistrations).toBeGreaterThan(from);
    const fresh = randomUUID();
    await register(fresh, 'Fresh');
    const sessions = [...(await Promise.all(known.map((userId) => signIn(userId)))), await signIn(fresh)];

    // The fresh user's registration and the four sign-ins, as one batch.
    const batch = await db.store.readAll({ after: afterRegistrations, limit: 100 });
    expect(batch).toHaveLength(5);
    const gets = vi.spyOn(redis, 'get');
    const mgets = vi.spyOn(redis, 'mget');
    try {
      await target.applyBatch(toProjected(batch), afterRegistrations, batch.at(-1)!.position, batch.at(-1)!.eventId);
      expect(mgets).toHaveBeenCalledTimes(1);
      expect(gets).not.toHaveBeenCalled();
    } finally {
      gets.mockRestore();
      mgets.mockRestore();
    }
    for (const [i, session] of sessions.entries()) {
      expect((await cached(session.token))?.user.name).toBe(i < known.length ? `Known ${i}` : 'Fresh');
    }
  });

  it('fences a batch from a stale checkpoint and writes nothing of it', async () => {
    const userId = randomUUID();
    await register(userId, 'Stale');
    const stale = await catchUp(db.store, target);
    const session = await signIn(userId);
    const batch = await db.store.readAll({ after: stale, limit: 100 });
    // Another holder got there first: the checkpoint is past `stale` now.
    const stored = (await reader.get(keys.checkpoint))!;
    const moved = `${stale + 1}:${(await db.store.eventIdAt(stale + 1))!}`;
    await reader.set(keys.checkpoint, moved);
    try {
      await expect(target.applyBatch(toProjected(batch), stale, batch.at(-1)!.position, batch.at(-1)!.eventId)).rejects.toBeInstanceOf(
        CheckpointFencedError,
      );
      expect(await cached(session.token)).toBeNull();
      expect(await reader.exists(keys.sessionToken(session.sessionId), keys.userSessions(userId))).toBe(0);
      expect(await reader.get(keys.checkpoint)).toBe(moved);
    } finally {
      await reader.set(keys.checkpoint, stored);
    }
    await catchUp(db.store, target);
    expect(await cached(session.token)).not.toBeNull();
  });

  it('fences a batch whose checkpoint moves while the batch is being built, writing nothing', async () => {
    const userId = randomUUID();
    await register(userId, 'Raced');
    const from = await catchUp(db.store, target);
    const session = await signIn(userId);
    const batch = await db.store.readAll({ after: from, limit: 100 });
    const checkpointKey = keys.checkpoint;
    const stored = (await reader.get(checkpointKey))!;
    const movedTo = `${from + 1}:${(await db.store.eventIdAt(from + 1))!}`;
    let moved = false;
    // Another writer moves the checkpoint after this batch began and before its writes are sent.
    const racing: RedisProjection = {
      ...projection,
      async apply(redisBatch, projected, generationKeys) {
        if (!moved) {
          moved = true;
          await reader.set(checkpointKey, movedTo);
        }
        await projection.apply(redisBatch, projected, generationKeys);
      },
    };
    const racer = new RedisProjectionTarget(redis, racing, layout, db.store);
    expect(await racer.readCheckpoint()).toBe(from);

    await expect(racer.applyBatch(toProjected(batch), from, batch.at(-1)!.position, batch.at(-1)!.eventId)).rejects.toBeInstanceOf(
      CheckpointFencedError,
    );

    expect(moved).toBe(true);
    expect(await cached(session.token)).toBeNull();
    expect(await reader.get(checkpointKey)).toBe(movedTo);
    await reader.set(checkpointKey, stored);
    await catchUp(db.store, target);
    expect(await cached(session.token)).not.toBeNull();
  });

  /** Every key of one generation with its value (sets sorted), under the generation's own names. */
  async function generationSnapshot(generationKeys: SessionCacheKeys): Promise<Record<string, unknown>> {
    const values: Record<string, unknown> = {};
    const tag = generationKeys.checkpoint.slice(generationKeys.checkpoint.indexOf('{'));
    for (const key of await allKeys()) {
      if (!key.includes(tag) || key === generationKeys.checkpoint) continue;
      values[key.replace(tag, '{generation}')] = (await reader.type(key)) === 'set' ? (await reader.smembers(key)).sort() : await reader.get(key);
    }
    return values;
  }

  it('a rebuild replays into a new generation beside the served one, swaps it in, and drops only the old generation', async () => {
    const neighbourKey = `${prefix}rate-limit:neighbour`;
    await reader.set(neighbourKey, '3', 'PX', 60_000);
    const head = await catchUp(db.store, target);
    const before = await generationSnapshot(keys);
    expect(Object.keys(before).length).toBeGreaterThan(10);

    const shadow = await target.createShadow();
    expect(await shadow.readCheckpoint()).toBe(0);
    expect(await catchUp(db.store, shadow, 3)).toBe(head);
    // Until the swap, readers are pointed at the served generation, which is untouched.
    expect(parsePointer(await reader.get(layout.pointerKey)).current).toBe(keys.generation);
    await shadow.promote();

    const served = parsePointer(await reader.get(layout.pointerKey)).current!;
    expect(served).not.toBe(keys.generation);
    const rebuilt = layout.generation(served);
    expect(await generationSnapshot(rebuilt)).toEqual(before);
    // The old generation is gone, keys and checkpoint; what is not the cache's (a rate-limit counter) stays.
    expect(await reader.exists(keys.checkpoint)).toBe(0);
    expect(await generationSnapshot(keys)).toEqual({});
    expect(await reader.get(neighbourKey)).toBe('3');

    // The live target, re-reading its checkpoint as a runner does on taking the lock, follows the pointer.
    expect(await target.readCheckpoint()).toBe(head);
    expect(target.generation).toBe(served);
    keys = rebuilt;
  });

  it('bounds the life of every key it writes, and needs no index to drop a revoked session', async () => {
    const userId = randomUUID();
    await register(userId, 'Bounded');
    const organizationId = randomUUID();
    const session = await signIn(userId);
    await select(session, userId, organizationId, null);
    await catchUp(db.store, target);
    for (const key of await allKeys()) {
      if (key === keys.checkpoint || key === layout.pointerKey || !key.includes(keys.generation)) continue;
      expect({ key, pttl: await reader.pttl(key) }).toEqual({ key, pttl: expect.any(Number) });
      expect(await reader.pttl(key)).toBeGreaterThan(0);
    }
    expect(await reader.pttl(keys.organizationSessions(organizationId))).toBeGreaterThan(DAY_MS);

    // The index a v1 revocation needed is lost; a v2 revocation names the hash and drops the session anyway.
    await reader.del(keys.sessionToken(session.sessionId));
    await db.store.append([
      domainWrite(
        streams.session(session.sessionId),
        'any',
        [SessionRevoked({ sessionId: session.sessionId, userId, tokenHash: hashToken(session.token), reason: 'revoked' })],
        metadataAt(updatedAt),
      ),
    ]);
    await catchUp(db.store, target);
    expect(await cached(session.token)).toBeNull();
    expect(await reader.sismember(keys.organizationSessions(organizationId), hashToken(session.token))).toBe(0);
  });

  it('caches a session whose user entry has expired with the user folded from the log as of the session', async () => {
    const userId = randomUUID();
    await register(userId, 'Before');
    await catchUp(db.store, target);
    await reader.del(keys.user(userId));
    const session = await signIn(userId);
    // A rename after the session, not yet applied: the cache must not show it before its own event.
    await db.store.append([domainWrite(streams.user(userId), 'any', [UserUpdated({ userId, name: 'After' })], metadataAt(updatedAt))]);
    const [signedIn] = await db.store.readAll({ after: (await db.store.headPosition()) - 2, limit: 1 });
    await target.applyBatch(toProjected([signedIn!]), (await target.readCheckpoint()), signedIn!.position, signedIn!.eventId);
    expect((await cached(session.token))?.user.name).toBe('Before');
    await catchUp(db.store, target);
    expect((await cached(session.token))?.user.name).toBe('After');
  });

  it('replays into a new generation, read by no one until it reaches the head, when its own is lost', async () => {
    const userId = randomUUID();
    await register(userId, 'Lost');
    const session = await signIn(userId);
    await catchUp(db.store, target);
    const lost = keys.generation;
    // As FLUSHALL or a restart without persistence leaves it: no pointer, no checkpoint.
    await reader.del(layout.pointerKey);
    await reader.del(keys.checkpoint);

    expect(await target.readCheckpoint()).toBe(0);
    const building = target.generation!;
    expect(building).not.toBe(lost);
    expect(parsePointer(await reader.get(layout.pointerKey))).toEqual({ current: null, building });
    const head = await catchUp(db.store, target);
    expect(parsePointer(await reader.get(layout.pointerKey)).current).toBeNull();
    await target.caughtUp();
    expect(parsePointer(await reader.get(layout.pointerKey))).toEqual({ current: building, building: null });
    keys = layout.generation(building);
    expect(await checkpointPosition()).toBe(head);
    expect(await cached(session.token)).not.toBeNull();
  });

  it('sweeps what a generation that lost its checkpoint left behind, and no generation that has one', async () => {
    await catchUp(db.store, target);
    const served = keys.generation;
    // Written by a projector that had not yet noticed Redis lose the checkpoint and pointer around them.
    const abandoned = layout.generation('abandoned');
    await Promise.all(Array.from({ length: 1200 }, (_, n) => reader.set(abandoned.session(`hash-${n}`), '{}', 'PX', DAY_MS)));
    await reader.set(abandoned.user('someone'), '{}', 'PX', DAY_MS);
    // A rebuild's shadow, being filled beside the served generation.
    const shadow = layout.generation('shadow');
    await reader.set(shadow.checkpoint, '0');
    await reader.set(shadow.session('hash-0'), '{}', 'PX', DAY_MS);
    const keysOf = async (generation: string): Promise<string[]> => {
      const found: string[] = [];
      await scanKeys(reader, layout.everyGeneration, async (batch) => {
        found.push(...batch.filter((key) => layout.generationOf(key) === generation));
      });
      return found;
    };
    const servedBefore = (await keysOf(served)).length;

    // A process taking the projection over sweeps at its first catch-up on the served generation.
    const successor = new RedisProjectionTarget(redis, projection, layout, db.store);
    await successor.readCheckpoint();
    await successor.caughtUp();
    await successor.swept();

    expect(await keysOf('abandoned')).toEqual([]);
    expect((await keysOf('shadow')).sort()).toEqual([shadow.checkpoint, shadow.session('hash-0')].sort());
    expect((await keysOf(served)).length).toBe(servedBefore);
    await reader.del(shadow.session('hash-0'));
    await reader.del(shadow.checkpoint);
  });

  it('does not take a generation built from another history (a restored database) as its own', async () => {
    await catchUp(db.store, target);
    const served = keys.generation;
    // A cache whose checkpoint names an event this log does not hold at that position.
    const position = await db.store.headPosition();
    await reader.set(keys.checkpoint, `${position}:${randomUUID()}`);
    await target.readCheckpoint();
    expect(target.generation).not.toBe(served);
    expect(parsePointer(await reader.get(layout.pointerKey))).toEqual({ current: null, building: target.generation });
    await catchUp(db.store, target);
    await target.caughtUp();
    expect(await reader.exists(keys.checkpoint)).toBe(0);
    keys = layout.generation(target.generation!);
  });
});
