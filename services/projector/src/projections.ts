import type { Config, DatabasePool, ProjectionTarget, Redis } from '@portcullis/platform';
import {
  KafkaMailBus,
  PostgresProjectionTarget,
  RedisProjectionTarget,
  createLogger,
  createRedisClient,
  sessionCacheKeys,
  type MailBus,
} from '@portcullis/platform';
import { identityProjection } from './identity/identity.projection.ts';
import { MailRelayTarget } from './mail/mail-relay.ts';
import { organizationsProjection } from './organization/organizations.projection.ts';
import { sessionCacheProjection } from './session/session-cache.projection.ts';
import { sessionsProjection } from './session/sessions.projection.ts';

export interface ProjectionSet {
  readonly targets: readonly ProjectionTarget[];
  close(): Promise<void>;
}

/**
 * Every projection this deployment runs: the Postgres read models, the Redis cache when configured, and
 * the mail relay to Kafka when KAFKA_BROKERS is set (without it the mailer follows the log itself).
 */
export function createProjectionTargets(config: Config, pool: DatabasePool): ProjectionSet {
  const targets: ProjectionTarget[] = [
    new PostgresProjectionTarget(pool, identityProjection),
    new PostgresProjectionTarget(pool, sessionsProjection),
    new PostgresProjectionTarget(pool, organizationsProjection),
  ];
  const redisClients: Redis[] = [];
  if (config.redis) {
    const redis = createRedisClient(config.redis.url, { name: 'portcullis-projector' });
    redisClients.push(redis);
    targets.push(new RedisProjectionTarget(redis, sessionCacheProjection(sessionCacheKeys(config.redis.keyPrefix))));
  }
  let bus: MailBus | null = null;
  if (config.kafka) {
    bus = new KafkaMailBus({ ...config.kafka, log: createLogger({ name: 'mail-relay', level: config.logLevel }) });
    targets.push(new MailRelayTarget(pool, bus));
  }
  return {
    targets,
    close: async () => {
      await Promise.all(redisClients.map((r) => r.quit().catch(() => r.disconnect())));
      await bus?.close();
    },
  };
}
