import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SessionAnswerJson } from '../support/auth.ts';
import { waitFor } from '../support/processes.ts';
import { redisServerAvailable, startPrivateRedis, type PrivateRedis } from '../support/redis-server.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean; degraded?: boolean; detail?: string }>;
}

/**
 * An api stays ready while it can serve: with its Redis gone (a private server the test kills) it answers
 * sessions from Postgres, so /readyz stays 200 and says degraded, rather than taking every replica out of
 * the load balancer at once.
 */
describe.skipIf(!redisServerAvailable() && process.env.CI !== 'true')('readiness with Redis gone', () => {
  let redis: PrivateRedis;
  let system: System;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    system = await startSystem({ env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'readiness:' } });
  });

  afterAll(async () => {
    await system?.stop();
    await redis?.stop();
  });

  const readiness = async () => new HttpClient(system.baseUrl).get<Readiness>('/readyz');

  it('stays ready, degraded to Postgres, and still answers get-session', async () => {
    const client = new HttpClient(system.authUrl);
    const { user } = await signUp(client);
    const before = await readiness();
    expect(before.status, before.text).toBe(200);
    expect(before.json).toMatchObject({ status: 'ready', checks: { redis: { ok: true } } });

    await redis.stop();
    await waitFor(async () => (await readiness()).json.checks.redis?.ok === false, { timeoutMs: 10_000, message: '/readyz to see Redis gone' });
    const after = await readiness();
    expect(after.status, after.text).toBe(200);
    expect(after.json.status).toBe('degraded');
    expect(after.json.checks.postgres).toEqual({ ok: true });
    expect(after.json.checks.projections?.ok).toBe(true);
    expect(after.json.checks.redis).toMatchObject({ ok: false, degraded: true });
    expect(after.json.checks.redis?.detail).toContain('answering from Postgres');

    const session = await client.get<SessionAnswerJson | null>('get-session');
    expect(session.status, session.text).toBe(200);
    expect(session.json?.user.id).toBe(user.id);
  });
});
