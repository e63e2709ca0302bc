import {
  createDatabasePool,
  createLogger,
  createRedisClient,
  loadConfigOrExit,
  migrate,
  PostgresEventStore,
  sessionCacheKeys,
} from '@portcullis/platform';
import { buildApp } from './app.ts';
import { RememberedSignIns } from './credentials/password-sign-in.ts';
import { sessionCookieSettings } from './http/session-cookies.ts';
import type { ApiContext } from './context.ts';
import { ProjectionWaiter } from './projection-waiter.ts';
import { LocalSessionCache } from './session/local-session-cache.ts';

/** A backstop for a missed invalidation, which the tracking protocol is there to rule out. */
const LOCAL_SESSION_CACHE_TTL_MS = 30_000;

const config = loadConfigOrExit();
const log = createLogger({ name: 'api', level: config.logLevel, format: config.logFormat });

await migrate(config.databaseUrl);
const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: 20 });
const store = new PostgresEventStore({ databaseUrl: config.databaseUrl, log: (message, err) => log.warn({ err }, message) });
const cache = config.redis
  ? (() => {
      const keys = sessionCacheKeys(config.redis.keyPrefix);
      return {
        redis: createRedisClient(config.redis.url, { name: 'portcullis-api', autoPipelining: true }),
        keys,
        local:
          config.redis.localSessionCacheEntries > 0
            ? new LocalSessionCache({
                redisUrl: config.redis.url,
                keyPrefix: keys.session(''),
                maxEntries: config.redis.localSessionCacheEntries,
                ttlMs: LOCAL_SESSION_CACHE_TTL_MS,
                log,
              })
            : null,
      };
    })()
  : null;
const waiter = new ProjectionWaiter({
  pool,
  databaseUrl: config.databaseUrl,
  redis: cache && config.redis ? { client: cache.redis, url: config.redis.url, keys: cache.keys, notices: cache.local ?? undefined } : null,
  timeoutMs: config.readYourWritesTimeoutMs,
  onTimeout: (position, positions) =>
    log.warn({ position, positions }, 'projections did not catch up in time; answering without read-your-writes'),
});
await waiter.start();

const ctx: ApiContext = {
  config,
  store,
  pool,
  cache,
  waiter,
  rememberedSignIns: new RememberedSignIns(),
  log,
  cookies: sessionCookieSettings(config),
  clock: () => new Date(),
};
const app = await buildApp(ctx);
const address = await app.listen({ host: config.host, port: config.port }).catch((error: NodeJS.ErrnoException) => {
  // A taken or forbidden address is an operator's to fix; the stack trace would only bury the one line that says so.
  if (!['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'].includes(error.code ?? '')) throw error;
  log.fatal({ code: error.code }, `api cannot listen on ${config.host}:${config.port} (${error.code}); set HOST and PORT to a free address`);
  process.exit(1);
});
log.info({ address, basePath: config.basePath }, `api listening on ${address}${config.basePath}`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'api stopping');
  await app.close();
  await waiter.close();
  await store.close();
  await cache?.local?.close();
  await cache?.redis.quit().catch(() => cache.redis.disconnect());
  await pool.end();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
