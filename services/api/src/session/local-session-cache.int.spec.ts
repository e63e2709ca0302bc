import { afterAll, beforeAll, expect, it } from 'vitest';
import { unbannedUser, type CachedSession } from '@portcullis/contracts';
import { createLogger, createRedisClient, type Redis } from '@portcullis/platform';
import { waitFor } from '../../../../tests/support/processes.ts';
import { deleteRedisKeys, describeWithRedis, testRedisUrl, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';
import { LocalSessionCache } from './local-session-cache.ts';

function cachedSession(name: string, expiresInMs = 3_600_000): CachedSession {
  const now = new Date().toISOString();
  return {
    session: {
      id: 's-1',
      userId: 'u-1',
      expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
      createdAt: now,
      updatedAt: now,
      ipAddress: null,
      userAgent: null,
      activeOrganizationId: null,
      activeTeamId: null,
      impersonatedBy: null,
      rememberMe: true,
    },
    user: { id: 'u-1', email: 'a@example.com', name, image: null, emailVerified: false, createdAt: now, updatedAt: now, ...unbannedUser },
  };
}

/**
 * The in-process session cache against real Redis: hits cost no Redis read, and any write to a cached key by
 * anyone (here a separate connection, as the projector is) drops the entry before the writer's next step.
 */
describeWithRedis('local session cache (real Redis, tracking invalidations)', () => {
  const url = testRedisUrl()!;
  const prefix = uniqueRedisPrefix();
  const keyPrefix = `${prefix}session:`;
  let writer: Redis;
  let cache: LocalSessionCache;
  let loads: string[];

  const load = async (key: string): Promise<string | null> => {
    loads.push(key);
    return writer.get(key);
  };
  const decode = (raw: string | null): CachedSession | null => (raw === null ? null : (JSON.parse(raw) as CachedSession));

  beforeAll(async () => {
    writer = createRedisClient(url, { name: 'local-cache-spec-writer' });
    cache = new LocalSessionCache({ redisUrl: url, keyPrefix, maxEntries: 3, ttlMs: 60_000, log: createLogger({ name: 'spec', level: 'silent', format: 'json' }) });
    await waitFor(() => cache.isLive, { timeoutMs: 10_000, message: 'the local cache to arm tracking' });
  });

  afterAll(async () => {
    await cache?.close();
    await writer?.quit();
    await deleteRedisKeys(url, prefix);
  });

  it('answers repeated reads from the process, and a write to the key drops the entry at once', async () => {
    loads = [];
    const key = `${keyPrefix}a`;
    await writer.set(key, JSON.stringify(cachedSession('Ada')));
    expect((await cache.lookup(key, load, decode))?.user.name).toBe('Ada');
    expect((await cache.lookup(key, load, decode))?.user.name).toBe('Ada');
    expect(loads).toEqual([key]);

    // As the projector rewrites a session (a user rename): the push arrives before the write's reply does.
    await writer.set(key, JSON.stringify(cachedSession('Ada Lovelace')));
    await waitFor(() => cache.size === 0, { timeoutMs: 5000, message: 'the invalidation to arrive' });
    expect((await cache.lookup(key, load, decode))?.user.name).toBe('Ada Lovelace');

    // As a revocation deletes it: the next read finds nothing.
    await writer.del(key);
    await waitFor(() => cache.size === 0, { timeoutMs: 5000, message: 'the invalidation to arrive' });
    expect(await cache.lookup(key, load, decode)).toBeNull();
    expect(loads).toEqual([key, key, key]);
  });

  it('hears a notice published after a write only once that write has dropped the entry', async () => {
    const key = `${keyPrefix}ordered`;
    const channel = `${prefix}checkpoints`;
    const invalidated = cache.invalidationsReceived;
    await writer.set(key, JSON.stringify(cachedSession('Before')));
    // This write's own invalidation first, so that the read below is kept.
    await waitFor(() => cache.invalidationsReceived > invalidated, { timeoutMs: 5000, message: 'the first invalidation' });
    await cache.lookup(key, load, decode);
    expect(cache.size).toBeGreaterThan(0);

    // What the entry looked like to the waiter at the moment each notice arrived.
    const seen: { notice: string; cached: boolean }[] = [];
    await cache.listen(channel, (notice) => seen.push({ notice, cached: cache.size > 0 }));
    // As the projector does: its batch's write, then, once Redis has answered it, the checkpoint notice.
    await writer.set(key, JSON.stringify(cachedSession('After')));
    await writer.publish(channel, 'session-cache:7');
    await waitFor(() => seen.length === 1, { timeoutMs: 5000, message: 'the notice to arrive' });
    expect(seen).toEqual([{ notice: 'session-cache:7', cached: false }]);
  });

  it('keeps nothing read while the key was being changed, and no misses', async () => {
    loads = [];
    const key = `${keyPrefix}b`;
    await writer.set(key, JSON.stringify(cachedSession('Old')));
    // The read gets the old value, then the key changes and its invalidation is handled before the read returns.
    const racing = await cache.lookup(
      key,
      async (k) => {
        const raw = await writer.get(k);
        const before = cache.invalidationsReceived;
        await writer.set(k, JSON.stringify(cachedSession('New')));
        await waitFor(() => cache.invalidationsReceived > before, { timeoutMs: 5000, message: 'the invalidation to arrive' });
        return raw;
      },
      decode,
    );
    expect(racing?.user.name).toBe('Old');
    // Had the stale answer been kept, this would still say 'Old' without a load.
    expect((await cache.lookup(key, load, decode))?.user.name).toBe('New');
    expect(loads).toEqual([key]);

    expect(await cache.lookup(`${keyPrefix}unknown`, load, decode)).toBeNull();
    expect(await cache.lookup(`${keyPrefix}unknown`, load, decode)).toBeNull();
    expect(loads).toEqual([key, `${keyPrefix}unknown`, `${keyPrefix}unknown`]);
  });

  it('holds at most maxEntries, and never past the session expiry', async () => {
    for (const name of ['c1', 'c2', 'c3', 'c4']) {
      await writer.set(`${keyPrefix}${name}`, JSON.stringify(cachedSession(name)));
      await cache.lookup(`${keyPrefix}${name}`, load, decode);
    }
    expect(cache.size).toBeLessThanOrEqual(3);

    loads = [];
    const key = `${keyPrefix}expired`;
    await writer.set(key, JSON.stringify(cachedSession('Gone', -1000)));
    await cache.lookup(key, load, decode);
    await cache.lookup(key, load, decode);
    expect(loads).toEqual([key, key]);
  });

  it('reads Redis every time while the invalidation channel is down, and re-arms when it is back', async () => {
    const key = `${keyPrefix}d`;
    await writer.set(key, JSON.stringify(cachedSession('Dee')));
    await cache.lookup(key, load, decode);
    // Cut the subscriber's connection from the server side, as a Redis failover would.
    const id = cache.trackingTarget;
    expect(id).not.toBeNull();
    loads = [];
    await writer.call('CLIENT', 'KILL', 'ID', id!);
    await waitFor(() => !cache.isLive, { timeoutMs: 5000, message: 'the cache to notice' });
    expect(cache.size).toBe(0);
    await cache.lookup(key, load, decode);
    await waitFor(() => cache.isLive, { timeoutMs: 10_000, message: 'the cache to re-arm' });
    await cache.lookup(key, load, decode);
    await cache.lookup(key, load, decode);
    // One read while down, one to fill again once live, then hits.
    expect(loads.length).toBeLessThanOrEqual(3);
    expect(loads.length).toBeGreaterThanOrEqual(2);
    await writer.set(key, JSON.stringify(cachedSession('Dee 2')));
    await waitFor(async () => (await cache.lookup(key, load, decode))?.user.name === 'Dee 2', {
      timeoutMs: 5000,
      message: 'the re-armed channel to invalidate',
    });
  });

  it('aims tracking at its own reconnected subscriber, never at a half-open connection that had its name', async () => {
    const key = `${keyPrefix}impostor`;
    const killed = cache.trackingTarget!;
    const names = String(await writer.call('CLIENT', 'LIST', 'ID', killed));
    const oldName = /name=(\S+)/.exec(names)![1]!;
    // A connection the server still lists under the subscriber's old name, subscribed, whose reads nobody
    // makes: what a half-open connection looks like from the server after a network failure.
    const impostor = createRedisClient(url, { name: oldName, protocol: 2 });
    const impostorId = String(await impostor.call('CLIENT', 'ID'));
    await impostor.subscribe('__redis__:invalidate');
    try {
      await writer.call('CLIENT', 'KILL', 'ID', killed);
      await waitFor(() => cache.isLive && cache.trackingTarget !== killed, { timeoutMs: 10_000, message: 'the cache to re-arm' });
      expect(cache.trackingTarget).not.toBe(impostorId);
      await writer.set(key, JSON.stringify(cachedSession('Ivy')));
      expect((await cache.lookup(key, load, decode))?.user.name).toBe('Ivy');
      await writer.set(key, JSON.stringify(cachedSession('Ivy 2')));
      await waitFor(async () => (await cache.lookup(key, load, decode))?.user.name === 'Ivy 2', {
        timeoutMs: 5000,
        message: 'the invalidation to reach this process, not the impostor',
      });
    } finally {
      impostor.disconnect();
    }
  });

  it('hears a round trip only after every invalidation Redis had queued before it', async () => {
    const key = `${keyPrefix}round-trip`;
    await writer.set(key, JSON.stringify(cachedSession('Rory')));
    await cache.lookup(key, load, decode);
    expect(cache.size).toBeGreaterThan(0);
    await writer.del(key);
    expect(await cache.roundTrip()).toBe(true);
    expect(cache.held(key)).toBeUndefined();
  });
});
