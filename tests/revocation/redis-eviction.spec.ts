import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { spawnService } from '../support/processes.ts';
import { redisServerAvailable, startPrivateRedis, type PrivateRedis } from '../support/redis-server.ts';
import { serviceEntries } from '../../scripts/build.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

/**
 * The session cache must not lose what it has applied behind its back: a Redis that evicts keys is refused
 * at start, by the api and by the projector, with one sentence saying what to set.
 */
describe.skipIf(!redisServerAvailable() && process.env.CI !== 'true')('a Redis that evicts keys', () => {
  let redis: PrivateRedis;
  let database: TestDatabase;

  beforeAll(async () => {
    redis = await startPrivateRedis({ args: ['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru'] });
    database = await createTestDatabase('redis_eviction', { migrated: true });
  });

  afterAll(async () => {
    await redis?.stop();
    await database?.drop();
  });

  it('is refused by the api and by the projector at start', async () => {
    const port = await pickFreePort();
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: database.url,
      AUTH_SECRET: randomBytes(32).toString('base64url'),
      PORT: String(port),
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      REDIS_URL: redis.url,
    };
    for (const [name, entry] of [
      ['api', serviceEntries.api.built],
      ['projector', serviceEntries.projector.built],
    ] as const) {
      const service = spawnService({ name, entry, env });
      const exit = await service.exited;
      expect({ name, code: exit.code }).toEqual({ name, code: 78 });
      expect(service.output()).toContain('maxmemory-policy allkeys-lru');
      expect(service.output()).toContain('noeviction');
    }
  });
});
