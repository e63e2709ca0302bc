import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, uniqueEmail } from '../support/auth.ts';
import { createTestDatabase, postgresAdminUrl, type TestDatabase } from '../support/postgres.ts';
import { spawnService, waitFor, type ServiceProcess } from '../support/processes.ts';
import { redisServerAvailable, startPrivateRedis, type PrivateRedis } from '../support/redis-server.ts';
import { HttpClient } from '../support/system.ts';
import { serviceEntries } from '../../scripts/build.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

interface Running {
  readonly authUrl: string;
  stop(): Promise<void>;
}

/**
 * The Redis cache belongs to the log it was built from. A Redis left by another log, or by this log's
 * later history (a database restored from an older backup), must not answer for this one: no session of
 * the other history is served, and every session of this one is.
 */
describe.skipIf(!redisServerAvailable() && process.env.CI !== 'true')('the session cache is tied to its log', () => {
  const prefix = 'identity:';
  const secret = randomBytes(32).toString('base64url');
  let redis: PrivateRedis;
  const databases: TestDatabase[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
  });

  afterAll(async () => {
    for (const database of databases) await database.drop();
    await redis?.stop();
  });

  /** The api and a projector on `databaseUrl`, against the test's Redis, ready. */
  async function run(databaseUrl: string): Promise<Running> {
    const port = await pickFreePort();
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      AUTH_SECRET: secret,
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'warn',
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      AUTH_RATE_LIMIT_ENABLED: 'false',
    };
    const services: ServiceProcess[] = [
      spawnService({ name: 'projector', entry: serviceEntries.projector.built, env }),
      spawnService({ name: 'api', entry: serviceEntries.api.built, env }),
    ];
    const stop = async (): Promise<void> => {
      await Promise.all(services.map((s) => s.stop()));
    };
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, {
        timeoutMs: 60_000,
        message: 'the system to be ready',
      });
    } catch (error) {
      await stop();
      throw new Error(`${String(error)}\n${services.map((s) => s.output().slice(-2000)).join('\n')}`);
    }
    return { authUrl: `http://127.0.0.1:${port}/api/auth`, stop };
  }

  async function answered(authUrl: string, token: string): Promise<boolean> {
    const response = await fetch(`${authUrl}/get-session`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    return (await response.json()) !== null;
  }

  /** A copy of a database as it is now: a backup, restored later into a database of its own. */
  async function backupOf(source: TestDatabase): Promise<TestDatabase> {
    const copy = await createTestDatabase('identity_backup');
    databases.push(copy);
    const admin = new pg.Client({ connectionString: postgresAdminUrl() });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE ${admin.escapeIdentifier(copy.name)}`);
      await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(copy.name)} TEMPLATE ${admin.escapeIdentifier(source.name)}`);
    } finally {
      await admin.end();
    }
    return copy;
  }

  it('serves no session of another log or of a later history, and every session of its own', { timeout: 300_000 }, async () => {
    const first = await createTestDatabase('identity_first', { migrated: true });
    databases.push(first);
    let system = await run(first.url);
    const early = await signUp(new HttpClient(system.authUrl), { email: uniqueEmail('early') });
    const endedLater = await signUp(new HttpClient(system.authUrl), { email: uniqueEmail('ended-later') });
    await system.stop();

    // The backup, taken here; the first database goes on, and so does its Redis cache.
    const backup = await backupOf(first);
    system = await run(first.url);
    const later = await signUp(new HttpClient(system.authUrl), { email: uniqueEmail('later') });
    expect((await fetch(`${system.authUrl}/revoke-sessions`, { method: 'POST', headers: { authorization: `Bearer ${endedLater.token}`, origin: new URL(system.authUrl).origin } })).status).toBe(200);
    for (const token of [early.token, later.token]) expect(await answered(system.authUrl, token)).toBe(true);
    expect(await answered(system.authUrl, endedLater.token)).toBe(false);
    await system.stop();

    // A new, empty database beside the same Redis: none of the first log's sessions exist here.
    const fresh = await createTestDatabase('identity_fresh', { migrated: true });
    databases.push(fresh);
    system = await run(fresh.url);
    for (const token of [early.token, later.token]) expect(await answered(system.authUrl, token)).toBe(false);
    const own = await signUp(new HttpClient(system.authUrl), { email: uniqueEmail('own') });
    expect(await answered(system.authUrl, own.token)).toBe(true);
    await system.stop();

    // The backup restored, beside a Redis built from the first log's later history (the same log id).
    system = await run(backup.url);
    expect(await answered(system.authUrl, later.token), 'a session created after the backup').toBe(false);
    expect(await answered(system.authUrl, early.token), 'a session the backup holds').toBe(true);
    expect(await answered(system.authUrl, endedLater.token), 'ended after the backup: live in this history').toBe(true);
    // Revocations of this history take effect, cache or no cache.
    expect((await fetch(`${system.authUrl}/sign-out`, { method: 'POST', headers: { authorization: `Bearer ${early.token}`, origin: new URL(system.authUrl).origin } })).status).toBe(200);
    expect(await answered(system.authUrl, early.token)).toBe(false);
    const restoredOwn = await signUp(new HttpClient(system.authUrl), { email: uniqueEmail('restored-own') });
    expect(await answered(system.authUrl, restoredOwn.token)).toBe(true);
    await system.stop();
  });
});
