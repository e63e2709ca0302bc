import {
  createDatabasePool,
  poolSizesOf,
  createLogger,
  startTelemetry,
  createTokenSealer,
  DevMailboxTransport,
  EventLogMailBus,
  KafkaMailBus,
  loadConfigOrExit,
  exitUnlessSchemaIsCurrent,
  onStopRequest,
  NotificationListener,
  openEventStore,
  exitUnlessEventStoreServes,
  protectPersonalData,
  ProjectionControl,
  SmtpTransport,
  type MailBus,
  sql,
  type MailTransport,
} from '@portcullis/platform';
import { DeliveryLog, MAIL_DUE_CHANNEL } from './delivery-log.ts';
import { DeliveryWorker } from './delivery-worker.ts';
import { countMail, observeMailQueue } from './mail-metrics.ts';
import { serveProcessMetrics } from '@portcullis/platform/telemetry/metrics-server';
import { registerProcess } from '@portcullis/platform/telemetry/process-registry';
import { observeDatabasePool, observeEventLoop } from '@portcullis/platform/telemetry/runtime-metrics';
import { followRetryRequests } from './retry-requests.ts';
import { loadMailTemplates, MailTemplateError, type MailTemplates } from './templates/mail-templates.ts';

/**
 * The mailer: takes mail jobs off the bus (the event log by default, a Kafka consumer group with
 * KAFKA_BROKERS) into its delivery log, and delivers them over SMTP (SMTP_URL) or into the dev mailbox.
 */
const config = loadConfigOrExit();
// Every connection names this process, so pg_stat_activity (and GET /ops/projections, for the locks it holds)
// tells which process holds what.
process.env.PGAPPNAME ??= `portcullis-mailer pid ${process.pid}`;
const log = createLogger({ name: 'mailer', level: config.logLevel, format: config.logFormat });
// First of all: a template that cannot render refuses the start, rather than dead-letter every mail of its kind.
let templates: MailTemplates;
try {
  templates = loadMailTemplates({ locale: config.mail.locale, directory: config.mail.templatesDir });
} catch (error) {
  if (!(error instanceof MailTemplateError)) throw error;
  log.fatal(error.message);
  process.exit(78); // EX_CONFIG, as a refused configuration
}
const telemetry = await startTelemetry('portcullis-mailer');
const stopObservingEventLoop = observeEventLoop();

// Before the database is asked anything: a log the process would misread is a configuration it refuses.
exitUnlessEventStoreServes(config, 'mailer', (refusal) => log.fatal(refusal));
await exitUnlessSchemaIsCurrent(config.databaseUrl, (refusal) => log.fatal(refusal));
const pools = poolSizesOf(config, 'mailer');
const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: pools.readModels });
const transport: MailTransport = config.mail.smtpUrl
  ? new SmtpTransport(config.mail.smtpUrl, { maxConnections: config.mailer.concurrency })
  : new DevMailboxTransport(config.databaseUrl);

const deliveries = new DeliveryLog(pool);
const worker = new DeliveryWorker(
  deliveries,
  transport,
  createTokenSealer(config.secrets),
  {
    from: config.mail.from,
    productName: config.mail.productName,
    authBase: `${config.baseUrl}${config.basePath}`,
    invitationUrl: config.organization.invitationUrl,
    ...config.mailer,
  },
  templates,
  log,
);

// One listening connection hears appends, rebuild requests and due mail: Postgres wakes each listener on every NOTIFY.
// With Kafka too, since operators' retry requests come through the log (see followRetryRequests).
const notifications = new NotificationListener(config.databaseUrl);
// A job's recipient and name are encrypted in the log under their subject's key (see protectPersonalData).
const protectedLog = await protectPersonalData(
  openEventStore(config, 'mailer', { maximumPoolSize: pools.eventStore, notifications, follows: true, log: (m, err) => log.warn({ err }, m) }),
  { databaseUrl: config.databaseUrl, secrets: config.secrets, pool, keysPoolSize: pools.dataKeys },
);
const store = protectedLog.store;
const control = new ProjectionControl(notifications, (err) => log.warn({ err }, 'mail consumer control listener lost; reconnecting'));
// Another mailer found the relay back and made the jobs waiting for it due: deliver them now, not at the next
// poll. A lost notice costs at most a poll interval.
void notifications.listen(MAIL_DUE_CHANNEL, { onNotification: () => worker.wake() });
await notifications.start();
const bus: MailBus = config.kafka
  ? new KafkaMailBus({ ...config.kafka, log })
  : new EventLogMailBus({ store, pool, databaseUrl: config.databaseUrl, log, pollIntervalMs: config.mailer.pollIntervalMs, control });
const group = config.kafka?.mailerGroup ?? 'portcullis-mailer';
const consumer = await bus.consume({
  group,
  handle: async (job) => {
    if (await deliveries.enqueue(job)) {
      countMail('queued', job.kind);
      worker.wake();
    }
  },
});
const retries = followRetryRequests({
  store,
  pool,
  databaseUrl: config.databaseUrl,
  group,
  control,
  log,
  pollIntervalMs: config.mailer.pollIntervalMs,
  revived: () => worker.wake(),
});
worker.start();
observeDatabasePool(pool, 'mailer');
observeMailQueue(pool);
const metricsServer = await serveProcessMetrics({
  telemetry,
  host: config.host,
  advertisedHost: config.advertisedHost,
  port: config.mailerMetricsPort,
  readiness: async () => {
    const postgres = await pool.oneFirst(sql.unsafe`SELECT 1`).then(
      () => ({ ok: true }),
      (error: unknown) => ({ ok: false, detail: error instanceof Error ? error.message : String(error) }),
    );
    return { ready: postgres.ok, checks: { postgres } };
  },
  onListenError: (error) =>
    log.error({ code: error.code }, `mailer metrics cannot listen on ${config.host}:${config.mailerMetricsPort} (${error.code}); set MAILER_METRICS_PORT (0 picks a free port)`),
});
const registration = registerProcess(pool, {
  service: 'mailer',
  metricsUrl: metricsServer?.metricsUrl ?? null,
  onError: (err) => log.warn({ err }, 'process registry heartbeat failed'),
});
log.info(
  { bus: bus.name, transport: transport.name, group, metrics: metricsServer?.metricsUrl, mailLocale: config.mail.locale, mailTemplatesOverridden: templates.overridden },
  'mailer started',
);

let stopping = false;
async function shutdown(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ reason }, 'mailer stopping');
  await consumer.stop();
  await retries.stop();
  await worker.stop();
  await registration.stop();
  await metricsServer?.close();
  stopObservingEventLoop();
  await bus.close();
  await transport.close();
  await store.close();
  await protectedLog.close();
  await notifications.close();
  await pool.end();
  await telemetry.shutdown();
  process.exit(0);
}
onStopRequest((reason) => void shutdown(reason));
