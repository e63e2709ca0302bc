import type { FastifyInstance } from 'fastify';
import { createLogger, loadConfig, ProjectionRunner, type Config, type EventStore } from '@portcullis/platform';
import { buildApp } from '../../services/api/src/app.ts';
import type { ApiContext } from '../../services/api/src/context.ts';
import { sessionCookieSettings } from '../../services/api/src/http/session-cookies.ts';
import { RememberedSignIns } from '../../services/api/src/credentials/password-sign-in.ts';
import { ProjectionWaiter } from '../../services/api/src/projection-waiter.ts';
import { createProjectionTargets } from '../../services/projector/src/projections.ts';
import { createEventLogDatabase, type EventLogDatabase } from './event-log.ts';

export interface InProcessApi {
  readonly db: EventLogDatabase;
  readonly app: FastifyInstance;
  readonly config: Config;
  /**
   * Another api app on the same database and projections, with in-process memory of its own (remembered
   * sign-ins), as a second api process would have.
   */
  another(): Promise<FastifyInstance>;
  close(): Promise<void>;
}

/**
 * The api app for `inject`, on a fresh database with the real stores and the projections running in the
 * same process: route specs see real reads-after-writes without starting processes.
 */
export async function startInProcessApi(
  prefix: string,
  env: Record<string, string>,
  options: {
    clock?: () => Date;
    /** What the api sees of the store: a spec that counts the api's reads wraps the real one here. */
    storeSeenByApi?: (store: EventStore) => EventStore;
  } = {},
): Promise<InProcessApi> {
  const db = await createEventLogDatabase(prefix);
  const config = loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', ...env });
  const log = createLogger({ name: prefix, level: 'silent', format: 'json' });
  const projections = createProjectionTargets(config, db.pool);
  const runners = projections.targets.map(
    (target) => new ProjectionRunner({ store: db.store, target, databaseUrl: db.url, control: db.control, batchSize: 500, pollIntervalMs: 200, log }),
  );
  for (const runner of runners) runner.start();
  const waiter = new ProjectionWaiter({ pool: db.pool, databaseUrl: db.url, redis: null, timeoutMs: 5000, onTimeout: () => {} });
  await waiter.start();
  const contextOfOneApi = (): ApiContext => ({
    config,
    store: options.storeSeenByApi?.(db.store) ?? db.store,
    pool: db.pool,
    cache: null,
    waiter,
    rememberedSignIns: new RememberedSignIns(),
    log,
    cookies: sessionCookieSettings(config),
    // A spec about expiry moves this clock instead of waiting for time to pass.
    clock: options.clock ?? (() => new Date()),
  });
  const apps: FastifyInstance[] = [];
  const startApp = async (): Promise<FastifyInstance> => {
    const app = await buildApp(contextOfOneApi());
    apps.push(app);
    await app.ready();
    return app;
  };
  const app = await startApp();
  return {
    db,
    app,
    config,
    another: startApp,
    close: async () => {
      for (const started of apps) await started.close();
      await waiter.close();
      await Promise.all(runners.map((r) => r.stop()));
      await projections.close();
      await db.close();
    },
  };
}
