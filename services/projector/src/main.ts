import {
  Chainer,
  createDatabasePool,
  poolSizesOf,
  createLogger,
  startTelemetry,
  loadConfigOrExit,
  exitUnlessSchemaIsCurrent,
  onStopRequest,
  NotificationListener,
  openEventStore,
  exitUnlessEventStoreServes,
  protectPersonalData,
  ProjectionControl,
  ProjectionRunner,
  sessionCacheEvictionProblem,
  SharedLogReader,
  sql,
} from '@portcullis/platform';
import { serveProcessMetrics } from '@portcullis/platform/telemetry/metrics-server';
import { registerProcess } from '@portcullis/platform/telemetry/process-registry';
import { observeProjections } from '@portcullis/platform/telemetry/projection-metrics';
import { observeDatabasePool, observeEventLoop, observeRedis } from '@portcullis/platform/telemetry/runtime-metrics';
import { rebuildableProjectionNames, sessionReadModelNames } from '@portcullis/contracts';
import { createProjectionTargets } from './projections.ts';
import { RebuildRequests } from './rebuild-requests.ts';

const config = loadConfigOrExit();
// Every connection names this process, so pg_stat_activity (and GET /ops/projections, for the locks it holds)
// tells which process holds what.
process.env.PGAPPNAME ??= `portcullis-projector pid ${process.pid}`;
const log = createLogger({ name: 'projector', level: config.logLevel, format: config.logFormat });
const telemetry = await startTelemetry('portcullis-projector');
const stopObservingEventLoop = observeEventLoop();

// Before the database is asked anything: a log the process would misread is a configuration it refuses.
exitUnlessEventStoreServes(config, 'projector', (refusal) => log.fatal(refusal));
await exitUnlessSchemaIsCurrent(config.databaseUrl, (refusal) => log.fatal(refusal));
// The projector writes read models and checkpoints only, which the log can always rebuild.
const pools = poolSizesOf(config, 'projector');
const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: pools.readModels, asynchronousCommit: true });
// One listening connection for appends and rebuild requests: Postgres wakes each listener on every NOTIFY.
const notifications = new NotificationListener(config.databaseUrl);
// An erasure the api could not finish is finished here, and told where the api processes hear it: with
// Redis, on the channel the projections below announce on.
let announceErasure: ((notice: string) => Promise<unknown>) | null = null;
// It only reads the log, one batch at a time for all its projections (SharedLogReader).
const storedLog = openEventStore(config, 'projector', { maximumPoolSize: pools.eventStore, notifications, follows: true, log: (message, err) => log.warn({ err }, message) });
const protectedLog = await protectPersonalData(
  storedLog,
  { databaseUrl: config.databaseUrl, secrets: config.secrets, pool, keysPoolSize: pools.dataKeys, announceErasure: (notice) => announceErasure?.(notice) ?? Promise.resolve() },
);
const store = protectedLog.store;
const projections = await createProjectionTargets(config, pool, store, protectedLog.eraser);
announceErasure = projections.announce;
if (projections.redis) {
  const problem = await sessionCacheEvictionProblem(projections.redis);
  if (problem) {
    log.fatal(problem);
    process.exit(78);
  }
}
const reader = new SharedLogReader(store);
const control = new ProjectionControl(notifications, (err) => log.warn({ err }, 'projection control listener lost; reconnecting'));
await notifications.start();
/**
 * How long a projection that no session answer depends on may hold its checkpoint back while the log brings
 * it nothing: each move is a write, a notice and a wake-up of every api, for nothing any reader needs.
 */
const IDLE_CHECKPOINT_DEFER_MS = 1000;
const runners = projections.targets.map(
  (target) =>
    new ProjectionRunner({
      store: reader,
      target,
      databaseUrl: config.databaseUrl,
      batchSize: config.projector.batchSize,
      pollIntervalMs: config.projector.pollIntervalMs,
      lingerMs: config.projector.lingerMs,
      ...(sessionReadModelNames.has(target.name) ? {} : { checkpointDeferMs: IDLE_CHECKPOINT_DEFER_MS }),
      leaseMs: config.projector.leaseMs,
      control,
      log,
    }),
);
for (const runner of runners) runner.start();
// A log that does not chain itself (KurrentDB) is chained here, as a projection of the log as stored (the
// ciphertext, not what protectPersonalData opens), into the chain table `audit verify` and `audit head` read.
// Postgres's log chains itself in the append, so there is nothing to follow.
const chainer =
  config.eventStoreUrl === null
    ? null
    : new Chainer({
        store: storedLog,
        pool,
        databaseUrl: config.databaseUrl,
        batchSize: config.projector.batchSize,
        pollIntervalMs: config.projector.pollIntervalMs,
        leaseMs: config.projector.leaseMs,
        log,
      });
chainer?.start();
const followers = chainer ? [...runners, chainer] : runners;
// Rebuilds operators ask for over HTTP: the api only records them, a projector runs them.
const rebuilds = new RebuildRequests({
  pool,
  databaseUrl: config.databaseUrl,
  store,
  targets: projections.targets.filter((t) => t.createShadow !== undefined && rebuildableProjectionNames.has(t.name)),
  batchSize: config.projector.rebuildBatchSize,
  notifications,
  leaseMs: config.projector.leaseMs,
  log,
});
await rebuilds.start();
observeDatabasePool(pool, 'projector');
if (projections.redis) observeRedis(projections.redis, 'projector');
// The stored log: the lag gauges read positions and instants only, and a read through the protected one
// would also make this process forget the keys of a deletion no projection has applied yet.
observeProjections(storedLog, followers);
const metricsServer = await serveProcessMetrics({
  telemetry,
  host: config.host,
  advertisedHost: config.advertisedHost,
  port: config.projectorMetricsPort,
  readiness: async () => {
    const postgres = await pool.oneFirst(sql.unsafe`SELECT 1`).then(
      () => ({ ok: true }),
      (error: unknown) => ({ ok: false, detail: error instanceof Error ? error.message : String(error) }),
    );
    const held = followers.filter((follower) => follower.isHolder).map((follower) => follower.name);
    // A standby holding nothing is ready: it is there to take over.
    return { ready: postgres.ok, checks: { postgres, projections: { ok: true, detail: held.length > 0 ? `holds ${held.join(', ')}` : 'standby' } } };
  },
  onListenError: (error) =>
    log.error({ code: error.code }, `projector metrics cannot listen on ${config.host}:${config.projectorMetricsPort} (${error.code}); set PROJECTOR_METRICS_PORT (0 picks a free port)`),
});
const registration = registerProcess(pool, {
  service: 'projector',
  metricsUrl: metricsServer?.metricsUrl ?? null,
  projections: () => runners.filter((runner) => runner.isHolder).map((runner) => runner.name),
  onError: (err) => log.warn({ err }, 'process registry heartbeat failed'),
});
log.info({ projections: runners.map((r) => r.name), metrics: metricsServer?.metricsUrl }, 'projector started');

let stopping = false;
async function shutdown(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ reason }, 'projector stopping');
  await rebuilds.stop();
  await Promise.all([...runners.map((r) => r.stop()), chainer?.stop()]);
  await registration.stop();
  await metricsServer?.close();
  stopObservingEventLoop();
  await notifications.close();
  await projections.close();
  await store.close();
  await protectedLog.close();
  await pool.end();
  log.info('projector stopped');
  await telemetry.shutdown();
  process.exit(0);
}
onStopRequest((reason) => void shutdown(reason));
