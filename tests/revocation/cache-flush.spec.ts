import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedisClient, hashToken, parseCacheCheckpoint, parsePointer, PostgresEventStore, sessionCacheLayout, type SessionCacheLayout } from '@portcullis/platform';
import { DEFAULT_PASSWORD, signIn, signUp } from '../support/auth.ts';
import { waitFor } from '../support/processes.ts';
import { describeWithRedis } from '../support/redis.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

/**
 * The Redis session cache lost under the api's feet (FLUSHALL, a restart without persistence): the api reads
 * Postgres and the log meanwhile, the projector replays the log into a new generation, and what the lost one
 * left behind (keys a projector wrote between the loss of its checkpoint and its noticing) is swept away.
 */
describeWithRedis('the session cache flushed (real processes, Redis cache)', () => {
  let system: System;
  let store: PostgresEventStore;
  let redis: Redis;
  let layout: SessionCacheLayout;
  let prefix: string;

  beforeAll(async () => {
    system = await startSystem({ redis: true });
    store = new PostgresEventStore({ databaseUrl: system.env.DATABASE_URL! });
    redis = createRedisClient(system.env.REDIS_URL!, { name: 'test-cache-flush' });
    prefix = system.env.REDIS_KEY_PREFIX!;
    layout = sessionCacheLayout(prefix, await store.logId());
  });

  afterAll(async () => {
    redis?.disconnect();
    await store?.close();
    await system?.stop();
  });

  async function sessionOf(token: string): Promise<{ session: { token: string } } | null> {
    const response = await fetch(`${system.authUrl}/get-session`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as { session: { token: string } } | null;
  }

  async function served(): Promise<string | null> {
    return parsePointer(await redis.get(layout.pointerKey)).current;
  }

  /**
   * Every key under the system's prefix but `kept`, found then deleted in one command: Redis lost them at
   * once. What is kept stands for what a projector that had not yet noticed the loss wrote after it.
   */
  async function flush(kept: readonly string[]): Promise<void> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...found.filter((key) => !kept.includes(key)));
    } while (cursor !== '0');
    await redis.unlink(...keys);
  }

  async function keysOfGeneration(generation: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', layout.everyGeneration, 'COUNT', 1000);
      cursor = next;
      keys.push(...found.filter((key) => layout.generationOf(key) === generation));
    } while (cursor !== '0');
    return keys;
  }

  it('reads every write back, never answers a session ended meanwhile, and leaves nothing of the lost generation', async () => {
    const client = (): HttpClient => new HttpClient(system.authUrl);
    const kept = await signUp(client());
    const ended = await signUp(client());
    const lost = await served();
    expect(lost).not.toBeNull();
    const lostKeys = layout.generation(lost!);
    const leftover = [lostKeys.session(hashToken(ended.token)), lostKeys.user(ended.user.id)];
    await waitFor(async () => (await redis.exists(...leftover)) === leftover.length, { timeoutMs: 20_000, message: 'the cache to hold the session to end' });

    // Left behind: an entry saying the session about to end is live, in a generation without a checkpoint.
    await flush(leftover);
    expect(await redis.exists(lostKeys.checkpoint)).toBe(0);

    // Writes while the cache is rebuilt read back what they wrote.
    const again = await signIn(client(), { email: kept.user.email, password: DEFAULT_PASSWORD });
    expect((await sessionOf(again.token))?.session.token).toBe(again.token);
    const newcomer = await signUp(client());
    expect((await sessionOf(newcomer.token))?.session.token).toBe(newcomer.token);
    const signOut = await fetch(`${system.authUrl}/sign-out`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ended.token}`, 'content-type': 'application/json', origin: system.baseUrl },
      body: '{}',
    });
    expect(signOut.status).toBe(200);
    expect(await sessionOf(ended.token)).toBeNull();

    // A new generation, replayed from the log, is served once it has applied all of the above.
    const head = await store.headPosition();
    let rebuilt: string | null = null;
    await waitFor(
      async () => {
        rebuilt = await served();
        if (rebuilt === null || rebuilt === lost) return false;
        return (parseCacheCheckpoint(await redis.get(layout.generation(rebuilt).checkpoint))?.position ?? 0) >= head;
      },
      { timeoutMs: 60_000, message: 'a new generation of the cache to be served at the head' },
    );
    const rebuiltKeys = layout.generation(rebuilt!);
    expect(await redis.exists(rebuiltKeys.session(hashToken(again.token)))).toBe(1);
    expect(await redis.exists(rebuiltKeys.session(hashToken(newcomer.token)))).toBe(1);
    expect(await redis.exists(rebuiltKeys.session(hashToken(ended.token)))).toBe(0);
    expect(await sessionOf(ended.token)).toBeNull();
    for (const token of [kept.token, again.token, newcomer.token]) expect((await sessionOf(token))?.session.token).toBe(token);

    // The lost generation's leftovers are swept in the background.
    await waitFor(async () => (await keysOfGeneration(lost!)).length === 0, { timeoutMs: 30_000, message: 'the lost generation to be swept' });
    expect(await keysOfGeneration(lost!)).toEqual([]);
    expect(await sessionOf(ended.token)).toBeNull();
  });
});
