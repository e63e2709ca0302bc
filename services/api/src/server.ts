import { createLogger, startTelemetry, loadConfigOrExit, migrate, onStopRequest } from '@portcullis/platform';
import { createApiContext } from './api-context.ts';
import { buildApp } from './app.ts';

const config = loadConfigOrExit();
const log = createLogger({ name: 'api', level: config.logLevel, format: config.logFormat });
const telemetry = startTelemetry('portcullis-api');

await migrate(config.databaseUrl);
const running = await createApiContext(config, { log }).catch((error: unknown) => {
  log.fatal(error instanceof Error ? error.message : String(error));
  process.exit(78);
});
const app = await buildApp(running.ctx);
const address = await app.listen({ host: config.host, port: config.port }).catch((error: NodeJS.ErrnoException) => {
  // A taken or forbidden address is an operator's to fix; the stack trace would only bury the one line that says so.
  if (!['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'].includes(error.code ?? '')) throw error;
  log.fatal({ code: error.code }, `api cannot listen on ${config.host}:${config.port} (${error.code}); set HOST and PORT to a free address`);
  process.exit(1);
});
log.info({ address, basePath: config.basePath }, `api listening on ${address}${config.basePath}`);

let stopping = false;
async function shutdown(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ reason }, 'api stopping');
  await app.close();
  await running.close();
  await telemetry.shutdown();
  process.exit(0);
}
onStopRequest((reason) => void shutdown(reason));
