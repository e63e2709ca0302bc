import {
  BackgroundSnapshotter,
  carryAddressStreamsForward,
  CommandHandler,
  createDatabasePool,
  createRedisClient,
  isClusterUrl,
  passwordWorkUnderWay,
  poolSizesOf,
  openEventStore,
  openLogChain,
  protectPersonalData,
  sessionCacheEvictionProblem,
  sessionCacheLayout,
  type Config,
  type EventStore,
  type Logger,
} from '@portcullis/platform';
import { operatorSession } from './admin/admin-guard.ts';
import { socialProviders } from './social/providers/index.ts';
import type { ApiContext } from './context.ts';
import { sessionCookieSettings } from './http/session-cookies.ts';
import { confirmActiveSelection } from './organization/active-organization.ts';
import { carrySlugReservationsForward } from './organization/slug-reservation.ts';
import { removeMembershipsOf } from './organization/user-deletion.ts';
import { ReadModelProgress } from './read-models/read-model-progress.ts';
import { LocalSessionCache } from './session/local-session-cache.ts';
import { snapshotModelsOf } from './snapshot-models.ts';

/** A backstop for a missed invalidation, which the tracking protocol is there to rule out. */
const LOCAL_SESSION_CACHE_TTL_MS = 30_000;

export interface ApiContextOptions {
  readonly log: Logger;
  /** A spec about expiry moves this clock instead of waiting for time to pass. */
  readonly clock?: () => Date;
  /** What the api sees of the store: a spec that counts the api's reads wraps the real one here. */
  readonly storeSeenByApi?: (store: EventStore) => EventStore;
  readonly poolSize?: number;
  /** Attempts a conflicting command gets before its 409 (the handler's default unless given). */
  readonly commandAttempts?: number;
  /** How long the background snapshotter waits when no stream is marked (its default unless given). */
  readonly snapshotIdleMs?: number;
}

export interface RunningApiContext {
  readonly ctx: ApiContext;
  /** Keeps snapshots of streams grown long without commands (see `BackgroundSnapshotter`). */
  readonly snapshotter: BackgroundSnapshotter;
  close(): Promise<void>;
}

/**
 * Everything an api process serves with, assembled in one place for the server and for specs alike: the
 * store and read-model pools, the Redis cache (refusing a Redis that evicts), read-model progress, and
 * the command handler whose writes settle on it.
 */
export async function createApiContext(config: Config, options: ApiContextOptions): Promise<RunningApiContext> {
  const { log } = options;
  const pools = poolSizesOf(config, 'api');
  const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: options.poolSize ?? pools.readModels });
  const storedLog = openEventStore(config, 'api', {
    maximumPoolSize: pools.eventStore,
    log: (message, err) => log.warn({ err }, message),
  });
  // With Redis, other api processes hear an erasure there (they hold no LISTEN); its client comes below.
  let announceErasure: ((notice: string) => Promise<unknown>) | null = null;
  const protectedLog = await protectPersonalData(storedLog, {
    databaseUrl: config.databaseUrl,
    secrets: config.secrets,
    pool,
    keysPoolSize: pools.dataKeys,
    announceErasure: (notice) => announceErasure?.(notice) ?? Promise.resolve(),
    onErasureError: (err) => log.error({ err }, 'a deleted user could not be erased at once; the projector erases them when it reaches the deletion'),
  });
  const realStore = protectedLog.store;
  const store = options.storeSeenByApi?.(realStore) ?? realStore;
  const carried = await carryAddressStreamsForward({ stored: storedLog, protected: realStore }, pool);
  if (carried > 0) log.info({ carried }, 'address-named reservation streams carried to their keyed names');
  const slugs = await carrySlugReservationsForward(realStore, pool);
  if (slugs > 0) log.info({ slugs }, 'organization slugs stored before normalization reserved in their normalized form');
  let cache: ApiContext['cache'] = null;
  if (config.redis) {
    const redis = createRedisClient(config.redis.url, { name: 'portcullis-api', autoPipelining: true });
    const problem = await sessionCacheEvictionProblem(redis);
    if (problem) {
      redis.disconnect();
      await realStore.close();
      await protectedLog.close();
      await pool.end();
      throw new Error(problem);
    }
    const layout = sessionCacheLayout(config.redis.keyPrefix, await realStore.logId());
    // Tracking is per node, and the cache's generation lives on one node that a failover can move: with a
    // cluster, get-session reads Redis every time rather than hold answers it could not keep coherent.
    if (isClusterUrl(config.redis.url) && config.redis.localSessionCacheEntries > 0) {
      log.info('Redis Cluster: the in-process session cache is off; get-session reads Redis');
    }
    const local =
      config.redis.localSessionCacheEntries > 0 && !isClusterUrl(config.redis.url)
        ? new LocalSessionCache({
            redisUrl: config.redis.url,
            keyPrefix: layout.sessionKeyPrefix,
            maxEntries: config.redis.localSessionCacheEntries,
            ttlMs: LOCAL_SESSION_CACHE_TTL_MS,
            log,
          })
        : null;
    cache = { redis, layout, local };
    announceErasure = (notice) => redis.publish(layout.checkpointChannel, notice);
  }
  const progress = new ReadModelProgress({
    pool,
    databaseUrl: config.databaseUrl,
    store: realStore,
    redis: cache && config.redis ? { client: cache.redis, url: config.redis.url, layout: cache.layout, held: cache.local ?? undefined } : null,
    timeoutMs: config.readYourWritesTimeoutMs,
    maxLagMs: config.sessionReadMaxLagMs,
    log,
    onKeysErased: (subjectIds) => protectedLog.personalData.keys.forget(subjectIds),
  });
  await progress.start();
  const clock = options.clock ?? (() => new Date());
  const commands = new CommandHandler({
    store,
    clock,
    onSnapshotError: (err) => log.warn({ err }, 'a snapshot could not be kept; the next load folds further'),
    settle: (position, types, settlement) => progress.settle(position, types, settlement),
    othersUnderWay: passwordWorkUnderWay,
    ...(options.commandAttempts !== undefined ? { maxAttempts: options.commandAttempts } : {}),
  });
  // Through the store itself, not a spec's view of it: its reads are no command's.
  const snapshotter = new BackgroundSnapshotter({
    pool,
    store: realStore,
    modelsOf: snapshotModelsOf,
    onError: (err, streamId) => log.warn({ err, streamId }, 'a stream could not be snapshotted in the background; its next load folds further'),
    ...(options.snapshotIdleMs !== undefined ? { idleMs: options.snapshotIdleMs } : {}),
  });
  snapshotter.start();
  const ctx: ApiContext = {
    config,
    store,
    personalData: protectedLog.personalData,
    pool,
    // Over the log as stored: the chain covers the ciphertext, and checking it opens nothing.
    chain: openLogChain(config, pool, storedLog),
    cache,
    progress,
    commands,
    log,
    cookies: sessionCookieSettings(config),
    socialProviders: socialProviders(config.social),
    clock,
    identity: { userDeletion: [removeMembershipsOf] },
    activeSelectionCheck: (userId, selection) => confirmActiveSelection(realStore, userId, selection),
    // Called once the context exists, as it resolves the caller's session through it.
    operatorSession: (request, reply) => operatorSession(ctx, request, reply),
  };
  return {
    ctx,
    snapshotter,
    close: async () => {
      await snapshotter.stop();
      await progress.close();
      await realStore.close();
      await protectedLog.close();
      await cache?.local?.close();
      await cache?.redis.quit().catch(() => cache?.redis.disconnect());
      await pool.end();
    },
  };
}
