import type { FastifyInstance } from 'fastify';
import { createLogger, loadConfig, ProjectionRunner, type Config, type EventStore, type Logger } from '@portcullis/platform';
import { createApiContext, type RunningApiContext } from '../../services/api/src/api-context.ts';
import type { ApiContext } from '../../services/api/src/context.ts';
import { buildApp } from '../../services/api/src/app.ts';
import { createProjectionTargets } from '../../services/projector/src/projections.ts';
import { createEventLogDatabase, TEST_AUTH_SECRET, type EventLogDatabase } from './event-log.ts';

export interface InProcessApi {
  readonly db: EventLogDatabase;
  readonly app: FastifyInstance;
  readonly config: Config;
  /**
   * Another api app on the same database and projections, with in-process memory of its own (remembered
   * sign-ins, kept states), as a second api process would have; `env` changes its settings (ADMIN_USER_IDS
   * naming users signed up on the first, say).
   */
  another(options?: { env?: Record<string, string>; commandAttempts?: number }): Promise<FastifyInstance>;
  /** The context an app of this api runs on (its caches, its progress), for specs that reach into one. */
  contextOf(app: FastifyInstance): ApiContext;
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
    /** Where the api and the projections log (a spec reading what they wrote); silent JSON otherwise. */
    log?: Logger;
  } = {},
): Promise<InProcessApi> {
  const db = await createEventLogDatabase(prefix, env.AUTH_SECRET ? { secret: env.AUTH_SECRET } : {});
  const config = loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', AUTH_CHECK_ANSWERS: 'true', AUTH_SECRET: TEST_AUTH_SECRET, ...env });
  const log =
    options.log ?? createLogger({ name: prefix, level: (process.env.PORTCULLIS_TEST_API_LOG_LEVEL) ?? 'silent', format: 'json' });
  const projections = await createProjectionTargets(config, db.pool, db.store, db.eraser);
  const runners = projections.targets.map(
    (target) => new ProjectionRunner({ store: db.store, target, databaseUrl: db.url, control: db.control, batchSize: 500, pollIntervalMs: 200, log }),
  );
  for (const runner of runners) runner.start();
  const contexts: RunningApiContext[] = [];
  const apps: FastifyInstance[] = [];
  const startApp = async ({ env: overrides = {}, commandAttempts }: { env?: Record<string, string>; commandAttempts?: number } = {}): Promise<FastifyInstance> => {
    const appConfig = Object.keys(overrides).length === 0 ? config : loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', AUTH_CHECK_ANSWERS: 'true', AUTH_SECRET: TEST_AUTH_SECRET, ...env, ...overrides });
    const running = await createApiContext(appConfig, { log, poolSize: 4, ...options, ...(commandAttempts !== undefined ? { commandAttempts } : {}) });
    contexts.push(running);
    const app = await buildApp(running.ctx);
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
    contextOf: (app) => {
      const index = apps.indexOf(app);
      if (index < 0) throw new Error('not an app of this api');
      return contexts[index]!.ctx;
    },
    close: async () => {
      for (const started of apps) await started.close();
      for (const running of contexts) await running.close();
      await Promise.all(runners.map((r) => r.stop()));
      await projections.close();
      await db.close();
    },
  };
}
