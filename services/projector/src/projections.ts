import type { Config, DatabasePool, ProjectionTarget } from '@portcullis/platform';
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
  const redis = config.redis ? createRedisClient(config.redis.url, { name: 'portcullis-projector' }) : null;
  const keys = config.redis ? sessionCacheKeys(config.redis.keyPrefix) : null;
  // With Redis, every checkpoint is announced on its channel, where the api hears the session cache's too;
  // the api then holds no LISTEN, which every append's NOTIFY would wake.
  const announce = redis && keys ? { announce: (notice: string) => redis.publish(keys.checkpointChannel, notice) } : {};
  const targets: ProjectionTarget[] = [
    new PostgresProjectionTarget(pool, identityProjection, announce),
    new PostgresProjectionTarget(pool, sessionsProjection, announce),
    new PostgresProjectionTarget(pool, organizationsProjection, announce),
  ];
  if (redis && keys) targets.push(new RedisProjectionTarget(redis, sessionCacheProjection(keys)));
  let bus: MailBus | null = null;
  if (config.kafka) {
    bus = new KafkaMailBus({ ...config.kafka, log: createLogger({ name: 'mail-relay', level: config.logLevel, format: config.logFormat }) });
    targets.push(new MailRelayTarget(pool, bus));
  }
  return {
    targets,
    close: async () => {
      await redis?.quit().catch(() => redis.disconnect());
      await bus?.close();
    },
  };
}
