import type { Config, DatabasePool, ProjectionTarget, Redis } from '@portcullis/platform';
import { PostgresProjectionTarget, RedisProjectionTarget, createRedisClient, sessionCacheKeys } from '@portcullis/platform';
import { identityProjection } from './identity/identity.projection.ts';
import { sessionCacheProjection } from './session/session-cache.projection.ts';
import { sessionsProjection } from './session/sessions.projection.ts';

export interface ProjectionSet {
  readonly targets: readonly ProjectionTarget[];
  close(): Promise<void>;
}

/** Every projection this deployment runs: the Postgres read models, and the Redis cache when configured. */
export function createProjectionTargets(config: Config, pool: DatabasePool): ProjectionSet {
  const targets: ProjectionTarget[] = [
    new PostgresProjectionTarget(pool, identityProjection),
    new PostgresProjectionTarget(pool, sessionsProjection),
  ];
  const redisClients: Redis[] = [];
  if (config.redis) {
    const redis = createRedisClient(config.redis.url, { name: 'portcullis-projector' });
    redisClients.push(redis);
    targets.push(new RedisProjectionTarget(redis, sessionCacheProjection(sessionCacheKeys(config.redis.keyPrefix)), pool));
  }
  return {
    targets,
    close: async () => {
      await Promise.all(redisClients.map((r) => r.quit().catch(() => r.disconnect())));
    },
  };
}
