import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inheritedEnv, repoRoot, spawnService, spawnShellCommand, waitFor, type ServiceProcess } from '../support/processes.ts';
import { removeStagedPostgresData, stagedPostgresData } from '../support/staged-postgres.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

/**
 * `npm start` on a machine with nothing configured: embedded Postgres, migrations, projector and api as
 * supervised processes; and a restart keeps what the first run stored.
 */
describe('npm start (embedded default)', () => {
  let dataDir = '';
  let running: ServiceProcess | null = null;

  afterAll(async () => {
    await running?.stop();
    if (!dataDir) return;
    await removeStagedPostgresData(dataDir);
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Nothing configured: the embedded default, in this suite's data folder. */
  function startEnvironment(port: number, pgPort: number): Record<string, string> {
    return {
      PORT: String(port),
      PORTCULLIS_DATA_DIR: dataDir,
      PORTCULLIS_EMBEDDED_PG_PORT: String(pgPort),
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      REDIS_URL: '',
      AUTH_SECRET: '',
      NODE_ENV: 'development',
    };
  }

  async function start(port: number, pgPort: number): Promise<ServiceProcess> {
    const service = spawnService({ name: 'npm-start', entry: 'scripts/start.ts', env: startEnvironment(port, pgPort) });
    await service.waitForOutput(/ready: http:\/\/localhost:\d+\/api\/auth/, 120_000);
    return service;
  }

  it('serves sign-up, survives a restart with users and sessions intact, and stops cleanly', async () => {
    // 0700, as mkdtemp makes it: run as root, the unprivileged user Postgres runs as cannot enter it.
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'portcullis-start-'));
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    const port = await pickFreePort();
    const pgPort = await pickFreePort();
    const auth = `http://127.0.0.1:${port}/api/auth`;

    running = await start(port, pgPort);
    expect(running.output()).toMatch(/AUTH_SECRET not set/);
    if (process.getuid?.() === 0) {
      // The data went where that user can reach it, and the data folder says where.
      const standIn = await stagedPostgresData(dataDir);
      expect(standIn).not.toBeNull();
      expect(running.output()).toContain(`its data is in ${standIn}`);
    }
    const signUp = await fetch(`${auth}/sign-up/email`, {
      method: 'POST',
      // What a browser on the app's origin (BASE_URL defaults to http://localhost:$PORT) sends.
      headers: { 'content-type': 'application/json', origin: `http://localhost:${port}` },
      body: JSON.stringify({ name: 'Restart', email: 'restart@example.com', password: 'long enough password' }),
    });
    expect(signUp.status).toBe(200);
    const { token } = (await signUp.json()) as { token: string };

    const first = running;
    running = null;
    first.kill('SIGINT');
    const exit = await first.exited;
    expect(exit.code).toBe(0);
    expect(first.output()).toMatch(/stopped/);

    running = await start(port, pgPort);
    const session = await fetch(`${auth}/get-session`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await session.json()) as { user: { email: string } }).user.email).toBe('restart@example.com');
    const signIn = await fetch(`${auth}/sign-in/email`, {
      method: 'POST',
      // What a browser on the app's origin (BASE_URL defaults to http://localhost:$PORT) sends.
      headers: { 'content-type': 'application/json', origin: `http://localhost:${port}` },
      body: JSON.stringify({ email: 'restart@example.com', password: 'long enough password' }),
    });
    expect(signIn.status).toBe(200);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, {
      timeoutMs: 10_000,
      message: 'readyz after restart',
    });
  });

  it('leaves nothing running when npm start itself is killed outright (SIGKILL)', async () => {
    await running?.stop();
    dataDir ||= await mkdtemp(path.join(os.tmpdir(), 'portcullis-start-'));
    const port = await pickFreePort();
    const started = await start(port, await pickFreePort());
    running = started;
    // What it started: the services, Postgres (a process group of its own) and the watcher beside it.
    const children = await childrenOf(started.pid);
    const postgresData = (await stagedPostgresData(dataDir)) ?? path.join(dataDir, 'postgres');
    const postgres = Number.parseInt((await readFile(path.join(postgresData, 'postmaster.pid'), 'utf8')).split('\n')[0]!, 10);
    expect(children).toContain(postgres);
    expect(children.length).toBeGreaterThanOrEqual(4);

    started.kill('SIGKILL');
    expect((await started.exited).signal).toBe('SIGKILL');
    running = null;
    await everyProcessEnded(children, port);
  });

  it('stops, saying why, when a process refuses its configuration (exit 78), instead of restarting it', async () => {
    await running?.stop();
    dataDir ||= await mkdtemp(path.join(os.tmpdir(), 'portcullis-start-'));
    const port = await pickFreePort();
    const env = { ...startEnvironment(port, await pickFreePort()), MAIL_TEMPLATES_DIR: path.join(dataDir, 'no-such-templates') };
    const started = spawnService({ name: 'npm-start-refused', entry: 'scripts/start.ts', env });
    running = started;
    const exit = await started.exited;
    running = null;
    expect(exit.code).toBe(1);
    expect(started.output()).toMatch(/MAIL_TEMPLATES_DIR/);
    expect(started.output()).toMatch(/mailer refused its configuration \(exit 78/);
    expect(started.output()).not.toMatch(/restarting in/);
    // Postgres, which it had started, was stopped with it.
    const postgresData = (await stagedPostgresData(dataDir)) ?? path.join(dataDir, 'postgres');
    const postmaster = await readFile(path.join(postgresData, 'postmaster.pid'), 'utf8').catch(() => null);
    if (postmaster !== null) await everyProcessEnded([Number.parseInt(postmaster.split('\n')[0]!, 10)], port);
    else await everyProcessEnded([], port);
  });

  it('stops everything when only npm is sent SIGTERM, as an orchestrator stops it', async () => {
    await running?.stop();
    dataDir ||= await mkdtemp(path.join(os.tmpdir(), 'portcullis-start-'));
    const port = await pickFreePort();
    // npm's own variables describe the npm running the tests.
    const env = Object.fromEntries(Object.entries(inheritedEnv()).filter(([name]) => !/^npm_/i.test(name)));
    Object.assign(env, startEnvironment(port, await pickFreePort()));
    // `exec`: the command's process is npm itself, so a signal to its pid reaches npm alone.
    const npm = spawnShellCommand({ name: 'npm-start-term', command: 'exec npm start', cwd: repoRoot, env });
    running = npm;
    await npm.waitForOutput(/ready: http:\/\/localhost:\d+\/api\/auth/, 120_000);
    // npm's shell, the start script, the services, Postgres and its watcher.
    const started = await descendantsOf(npm.pid);
    expect(started.length).toBeGreaterThanOrEqual(6);
    // No build tool outlives the build: esbuild's service process would sit beside the system for as long as it runs.
    const commands = await Promise.all(started.map(commandOf));
    expect(commands.filter((command) => command.includes('esbuild'))).toEqual([]);

    process.kill(npm.pid, 'SIGTERM');
    await npm.exited;
    running = null;
    await everyProcessEnded(started, port);
  });
});

async function childrenOf(pid: number): Promise<number[]> {
  const listed = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).trim();
  return listed === '' ? [] : listed.split(/\s+/).map(Number);
}

/** The command line a process runs (empty once it has ended). */
async function commandOf(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ').trim();
}

async function descendantsOf(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (const child of await childrenOf(pid)) found.push(child, ...(await descendantsOf(child)));
  return found;
}

/** Ended once gone or a zombie (an orphan waits to be reaped by whatever adopted it). */
async function ended(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat === null || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** Waits for every process `npm start` started to end, and checks nothing answers on its port any more. */
async function everyProcessEnded(pids: readonly number[], port: number): Promise<void> {
  await waitFor(async () => (await Promise.all(pids.map(ended))).every(Boolean), {
    timeoutMs: 30_000,
    message: `every process npm start started (${pids.join(', ')}) to end`,
  });
  await expect(fetch(`http://127.0.0.1:${port}/api/auth/ok`)).rejects.toThrow();
}
