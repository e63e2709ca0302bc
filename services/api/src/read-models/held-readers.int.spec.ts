import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRedisClient, type Redis } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { deleteRedisKeys, describeWithRedis, testRedisUrl, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';
import type { ApiContext } from '../context.ts';
import { HeldReaders } from './held-readers.ts';

const ORIGIN = 'http://localhost:3000';

describeWithRedis('a revocation and the sessions another api process holds', () => {
  const prefix = uniqueRedisPrefix();
  let api: InProcessApi;
  let other: FastifyInstance;
  let otherCtx: ApiContext;

  beforeAll(async () => {
    api = await startInProcessApi('held_readers', {
      BASE_URL: ORIGIN,
      AUTH_SECRET: 'held-readers-secret-held-readers-secret-0',
      AUTH_RATE_LIMIT_ENABLED: 'false',
      REDIS_URL: testRedisUrl()!,
      REDIS_KEY_PREFIX: prefix,
      // The bound a revocation waits out when a process holding sessions does not confirm it.
      AUTH_SESSION_READ_MAX_LAG_MS: '400',
    });
    other = await api.another();
    otherCtx = api.contextOf(other);
  });

  afterAll(async () => {
    await api?.close();
    await deleteRedisKeys(testRedisUrl()!, prefix);
  });

  async function signUp(email: string): Promise<string> {
    const response = await api.app.inject({
      method: 'POST',
      url: '/api/auth/sign-up/email',
      headers: { origin: ORIGIN },
      payload: { name: 'Held', email, password: 'correct horse battery' },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ token: string }>().token;
  }

  const sessionOn = async (app: FastifyInstance, token: string) =>
    (await app.inject({ url: '/api/auth/get-session', headers: { authorization: `Bearer ${token}` } })).json<{ session: unknown } | null>();

  /** Until the other process answers the session from what it holds in process. */
  async function heldByOther(token: string): Promise<void> {
    await waitFor(async () => {
      expect(await sessionOn(other, token)).not.toBeNull();
      return otherCtx.progress.trusted('held') && (otherCtx.cache?.local?.size ?? 0) > 0;
    }, { timeoutMs: 15_000, message: 'the other process holding the session' });
  }

  it('is not answered while a process holding the session has not heard it: the other never answers it after', async () => {
    const token = await signUp(`held-stalled-${Date.now()}@example.com`);
    await heldByOther(token);
    // The other process's invalidations stop reaching it, as when it reads the next request off its socket
    // before the push that waits on another (a busy event loop): its held entry is now stale.
    const subscriber = (otherCtx.cache!.local as unknown as { subscriber: Redis }).subscriber;
    subscriber.stream.pause();
    try {
      const signedOut = await api.app.inject({ method: 'POST', url: '/api/auth/sign-out', headers: { authorization: `Bearer ${token}`, origin: ORIGIN } });
      expect(signedOut.statusCode).toBe(200);
      expect(await sessionOn(other, token)).toBeNull();
    } finally {
      subscriber.stream.resume();
    }
  });

  it('is answered once every process holding sessions confirms it, and none answers it after', async () => {
    const token = await signUp(`held-live-${Date.now()}@example.com`);
    await heldByOther(token);
    const signedOut = await api.app.inject({ method: 'POST', url: '/api/auth/sign-out', headers: { authorization: `Bearer ${token}`, origin: ORIGIN } });
    expect(signedOut.statusCode).toBe(200);
    expect(await sessionOn(other, token)).toBeNull();
    expect(await sessionOn(api.app, token)).toBeNull();
  });

  it('lets a process that heard a position say so in the round trip that asks who has not', async () => {
    const redis = createRedisClient(testRedisUrl()!, { name: 'held-readers-spec' });
    try {
      const keys = { members: `${prefix}spec-held:members`, positions: `${prefix}spec-held:positions` };
      const a = new HeldReaders(redis, keys, 'a', 10_000);
      const b = new HeldReaders(redis, keys, 'b', 10_000);
      await a.register(5);
      await b.register(3);
      expect((await a.behind(8)).sort()).toEqual(['a', 'b']);
      expect(await a.registerAndBehind(10, 8)).toEqual(['b']);
      expect(await b.behind(10)).toEqual(['b']);
    } finally {
      redis.disconnect();
    }
  });
});

