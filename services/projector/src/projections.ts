import type { Config, DatabasePool, Eraser, EventStore, HoldBack, ProjectionTarget } from '@portcullis/platform';
import { projectionNames, shownLateBesideSessionCache } from '@portcullis/contracts';
import {
  KafkaMailBus,
  PostgresProjectionTarget,
  RedisProjectionTarget,
  createLogger,
  createRedisClient,
  sessionCacheLayout,
  type MailBus,
} from '@portcullis/platform';
import { auditIndexProjectionFor } from './audit/audit-index.projection.ts';
import { erasureProjection } from './erasure/erasure.projection.ts';
import { identityProjection } from './identity/identity.projection.ts';
import { MailRelayTarget } from './mail/mail-relay.ts';
import { organizationsProjection } from './organization/organizations.projection.ts';
import { sessionCacheProjection } from './session/session-cache.projection.ts';
import { sessionsProjection } from './session/sessions.projection.ts';
import { userHistoryFrom } from './session/user-history.ts';

export interface ProjectionSet {
  readonly targets: readonly ProjectionTarget[];
  /** The Redis connection of the session cache, when there is one. */
  readonly redis: ReturnType<typeof createRedisClient> | null;
  /** Tells api processes something on the channel they hear checkpoints on, when that is Redis's. */
  readonly announce: ((notice: string) => Promise<unknown>) | null;
  close(): Promise<void>;
}

/**
 * While the session cache is kept, new sessions may wait to reach the session table (see
 * `shownLateBesideSessionCache`), for no longer than a fraction of what api processes allow the table to
 * trail before they stop believing it.
 */
function sessionTableHoldBack(config: Config, sessionCacheKept: boolean): { holdsBack?: HoldBack } {
  const ms = Math.min(config.projector.sessionTableGatherMs, Math.floor(config.sessionReadMaxLagMs / 4));
  const types = shownLateBesideSessionCache[projectionNames.sessions];
  return sessionCacheKept && ms > 0 && types ? { holdsBack: { types, ms } } : {};
}

/**
 * Every projection this deployment runs: the Postgres read models, the Redis cache when configured, and
 * the mail relay to Kafka when KAFKA_BROKERS is set (without it the mailer follows the log itself).
 */
export async function createProjectionTargets(
  config: Config,
  pool: DatabasePool,
  store: Pick<EventStore, 'logId' | 'eventIdAt' | 'readStream' | 'readAll' | 'headPosition'>,
  /** Where erasures are completed (see `erasureProjection`); absent in specs that do not erase. */
  eraser?: Eraser,
): Promise<ProjectionSet> {
  const redis = config.redis ? createRedisClient(config.redis.url, { name: 'portcullis-projector' }) : null;
  const layout = config.redis ? sessionCacheLayout(config.redis.keyPrefix, await store.logId()) : null;
  // With Redis, every checkpoint is announced on its channel, where the api hears the session cache's too;
  // the api then holds no LISTEN, which every append's NOTIFY would wake.
  const publish = redis && layout ? (notice: string) => redis.publish(layout.checkpointChannel, notice) : null;
  const announce = publish ? { announce: publish } : {};
  const targets: ProjectionTarget[] = [
    new PostgresProjectionTarget(pool, identityProjection, announce),
    new PostgresProjectionTarget(pool, sessionsProjection, { ...announce, ...sessionTableHoldBack(config, redis !== null) }),
    new PostgresProjectionTarget(pool, organizationsProjection, announce),
    // No api write waits for it (its name is none the api waits on): audit search may trail the log a batch.
    new PostgresProjectionTarget(pool, auditIndexProjectionFor(config), announce),
  ];
  if (eraser) targets.push(new PostgresProjectionTarget(pool, erasureProjection(eraser), announce));
  if (redis && layout) {
    const replay = { store, batchSize: config.projector.rebuildBatchSize, log: createLogger({ name: 'projector', level: config.logLevel, format: config.logFormat }) };
    targets.push(new RedisProjectionTarget(redis, sessionCacheProjection(userHistoryFrom(store)), layout, store, null, replay));
  }
  let bus: MailBus | null = null;
  if (config.kafka) {
    bus = new KafkaMailBus({ ...config.kafka, log: createLogger({ name: 'mail-relay', level: config.logLevel, format: config.logFormat }) });
    targets.push(new MailRelayTarget(pool, bus));
  }
  return {
    targets,
    redis,
    announce: publish,
    close: async () => {
      await redis?.quit().catch(() => redis.disconnect());
      await bus?.close();
    },
  };
}
