import { createLogger, startTelemetry, loadConfigOrExit, exitUnlessSchemaIsCurrent, exitUnlessEventStoreServes, onStopRequest } from '@portcullis/platform';
import { createApiContext } from './api-context.ts';
import { buildApp } from './app.ts';
import { RequestTracer } from '@portcullis/platform/telemetry/request-span';
import { handedOverRequestSampling } from '@portcullis/platform/telemetry/sampling';
import { bootstrapAdmin } from './admin/bootstrap-admin.command.ts';
import { advertisedHost, authorityOf } from '@portcullis/platform/telemetry/advertised-host';
import { registerProcess } from '@portcullis/platform/telemetry/process-registry';
import { observeDatabasePool, observeEventLoop, observePasswordHashing, observeRedis } from '@portcullis/platform/telemetry/runtime-metrics';

const config = loadConfigOrExit();
const log = createLogger({ name: 'api', level: config.logLevel, format: config.logFormat });
const telemetry = await startTelemetry('portcullis-api');
const stopObservingEventLoop = observeEventLoop();
observePasswordHashing();

// Before the database is asked anything: a log the process would misread is a configuration it refuses.
exitUnlessEventStoreServes(config, 'api', (refusal) => log.fatal(refusal));
await exitUnlessSchemaIsCurrent(config.databaseUrl, (refusal) => log.fatal(refusal));
const running = await createApiContext(config, { log }).catch((error: unknown) => {
  log.fatal(error instanceof Error ? error.message : String(error));
  process.exit(78);
});
const bootstrapped = await bootstrapAdmin(running.ctx);
if (bootstrapped) log.info({ userId: bootstrapped.id }, `bootstrap admin ${bootstrapped.email} registered (AUTH_BOOTSTRAP_ADMIN_EMAIL)`);
const requestSampling = handedOverRequestSampling();
const app = await buildApp(running.ctx, { requestTracer: requestSampling && new RequestTracer(requestSampling) });
const address = await app.listen({ host: config.host, port: config.port }).catch((error: NodeJS.ErrnoException) => {
  // A taken or forbidden address is an operator's to fix; the stack trace would only bury the one line that says so.
  if (!['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'].includes(error.code ?? '')) throw error;
  log.fatal({ code: error.code }, `api cannot listen on ${config.host}:${config.port} (${error.code}); set HOST and PORT to a free address`);
  process.exit(1);
});
log.info({ address, basePath: config.basePath }, `api listening on ${address}${config.basePath}`);
observeDatabasePool(running.ctx.pool, 'api');
if (running.ctx.cache) observeRedis(running.ctx.cache.redis, 'api');
// Where the overview and an operator find this process' figures.
const registration = registerProcess(running.ctx.pool, {
  service: 'api',
  metricsUrl: `http://${authorityOf(advertisedHost(config.host, config.advertisedHost), Number(new URL(address).port))}/metrics`,
  onError: (err) => log.warn({ err }, 'process registry heartbeat failed'),
});

let stopping = false;
async function shutdown(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ reason }, 'api stopping');
  await registration.stop();
  await app.close();
  stopObservingEventLoop();
  await running.close();
  await telemetry.shutdown();
  process.exit(0);
}
onStopRequest((reason) => void shutdown(reason));
