import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { STAGING_ROOT, stagingFolderOf } from '../../services/platform/src/embedded-postgres.ts';
import { repoRoot, spawnShellCommand, type ServiceProcess } from '../support/processes.ts';
import { stagedPostgresData, stopPostgresServersIn } from '../support/staged-postgres.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

const run = promisify(execFile);

/** The first line of the README's first shell block, without its comment: what a newcomer types first. */
async function readmeFirstCommand(checkout: string): Promise<string> {
  const readme = await readFile(path.join(checkout, 'README.md'), 'utf8');
  const block = /```sh\n([^\n]*)\n/.exec(readme);
  if (!block) throw new Error('README.md has no ```sh block');
  return block[1]!.replace(/#.*$/, '').trim();
}

/**
 * A newcomer's shell: nothing of the test runner's npm (its npm_config_* would point npm at this
 * repository), vite or Portcullis settings, and none of the database, Redis or secret. npm is told to
 * use what is installed without asking the registry when it can: node_modules comes prepared.
 */
function newcomerEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(name) || name.startsWith('PORTCULLIS_') || name.startsWith('VITEST')) continue;
    if (['INIT_CWD', 'BASE_URL', 'MODE', 'DEV', 'PROD', 'SSR', 'NODE_ENV', 'DATABASE_URL', 'REDIS_URL', 'AUTH_SECRET', 'LOG_LEVEL', 'LOG_FORMAT'].includes(name)) continue;
    env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '').split(':').filter((dir) => !dir.includes(`${path.sep}node_modules${path.sep}.bin`)).join(':');
  return { ...env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...extra };
}

/** Files and directories under `dir` that anyone may write to. */
async function worldWritable(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const entryPath = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (((await lstat(entryPath)).mode & 0o002) !== 0) found.push(entryPath);
    if (entry.isDirectory()) found.push(...(await worldWritable(entryPath)));
  }
  return found;
}

/**
 * The newcomer's first minute, as the issue tells it: `git clone` into a private directory (0700, as
 * `mktemp -d` makes one; under /root it would be the same), then the README's first command, as whoever
 * runs the tests (root in CI, where Postgres must run as another user). Then sign up, sign in, read the
 * session, look at the start page, and Ctrl-C.
 */
describe('a fresh clone in a private directory', () => {
  let home = '';
  let staging = '';
  let running: ServiceProcess | null = null;

  afterAll(async () => {
    await running?.stop();
    if (staging) {
      await stopPostgresServersIn(staging);
      await rm(staging, { recursive: true, force: true });
    }
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('starts with the README first command, signs up, signs in, reads the session and stops on Ctrl-C', { timeout: 300_000 }, async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'portcullis-clone-'));
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    const checkout = path.join(home, 'portcullis');
    // The committed state at HEAD, as a clone gets it.
    const { stdout: head } = await run('git', ['-C', repoRoot, 'rev-parse', 'HEAD']);
    await run('git', ['clone', '--quiet', '--no-checkout', repoRoot, checkout]);
    await run('git', ['-C', checkout, 'checkout', '--quiet', head.trim()]);
    staging = await stagingFolderOf(checkout);
    // What `npm install` would download, hard-linked from this repository's own install; it then has
    // nothing to fetch, and the run stays fast and offline.
    await run('cp', ['-al', path.join(repoRoot, 'node_modules'), path.join(checkout, 'node_modules')]);

    const command = await readmeFirstCommand(checkout);
    expect(command).toBe('npm install && npm start');
    const port = await pickFreePort();
    const pgPort = await pickFreePort();
    running = spawnShellCommand({
      name: 'fresh-clone',
      command,
      cwd: checkout,
      env: newcomerEnvironment({ PORT: String(port), PORTCULLIS_EMBEDDED_PG_PORT: String(pgPort) }),
    });
    await running.waitForOutput(/\[portcullis\] ready: http:\/\/localhost:\d+\/api\/auth/, 240_000);
    const output = running.output();

    const standIn = await stagedPostgresData(path.join(checkout, '.data'));
    if (process.getuid?.() === 0) {
      // Postgres runs as an unprivileged user, which cannot enter `home`: its binaries and data are in the
      // checkout's staging folder, only root may write there, and the data is that user's alone.
      expect(output).toContain(`cannot enter ${home}, so Postgres runs from ${staging}`);
      expect(standIn).toMatch(new RegExp(`^${staging}/postgres-[0-9a-f]+$`));
      expect(output).toContain(`its data is in ${standIn} (noted in .data/postgres-location)`);
      for (const dir of [STAGING_ROOT, staging, path.join(staging, 'binaries')]) {
        const info = await stat(dir);
        expect({ dir, uid: info.uid, mode: info.mode & 0o777 }).toEqual({ dir, uid: 0, mode: 0o755 });
      }
      const data = await stat(standIn!);
      expect(data.uid).not.toBe(0);
      expect(data.mode & 0o777).toBe(0o700);
      expect(await worldWritable(staging)).toEqual([]);
    } else {
      expect(standIn).toBeNull();
    }

    // What a browser on BASE_URL's origin (http://localhost:$PORT by default) sends.
    const api = `http://127.0.0.1:${port}`;
    const post = (url: string, body: unknown): Promise<Response> =>
      fetch(`${api}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: `http://localhost:${port}` },
        body: JSON.stringify(body),
      });
    const credentials = { email: 'newcomer@example.com', password: 'a newcomer password' };
    const signUp = await post('/api/auth/sign-up/email', { name: 'Newcomer', ...credentials });
    expect(signUp.status).toBe(200);
    const signIn = await post('/api/auth/sign-in/email', credentials);
    expect(signIn.status).toBe(200);
    const sessionCookie = signIn.headers.getSetCookie().find((cookie) => cookie.startsWith('better-auth.session_token='));
    expect(sessionCookie).toBeDefined();
    const session = await fetch(`${api}/api/auth/get-session`, { headers: { cookie: sessionCookie!.split(';')[0]! } });
    expect(session.status).toBe(200);
    expect(((await session.json()) as { user: { email: string } }).user.email).toBe(credentials.email);

    // `/` leads to the ops console, which the start built; the bootstrap admin it printed signs in there.
    const root = await fetch(`${api}/`, { redirect: 'manual' });
    expect({ status: root.status, location: root.headers.get('location') }).toEqual({ status: 302, location: '/console/' });
    const consolePage = await (await fetch(`${api}/console/`)).text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(consolePage)?.[1];
    expect((await fetch(`${api}${script}`)).status).toBe(200);
    await running.waitForOutput(/ops console: http:\/\/localhost:\d+\/console\/ {2}\(sign in as admin@portcullis\.localhost; its first password is in \.data\/bootstrap-admin-password\)/, 10_000);
    const adminPassword = (await readFile(path.join(checkout, '.data', 'bootstrap-admin-password'), 'utf8')).trim();
    const adminSignIn = await post('/api/auth/sign-in/email', { email: 'admin@portcullis.localhost', password: adminPassword });
    expect(adminSignIn.status).toBe(200);
    const adminCookie = adminSignIn.headers.getSetCookie().find((cookie) => cookie.startsWith('better-auth.session_token='))!.split(';')[0]!;
    const overview = await fetch(`${api}/ops/overview`, { headers: { cookie: adminCookie } });
    expect(overview.status).toBe(200);

    const startPage = await fetch(`${api}/start`);
    expect(startPage.status).toBe(200);
    expect(startPage.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await startPage.text();
    for (const link of ['/console/', '/api/auth/ok', '/readyz', '/ops/mailbox', '/readme']) expect(html).toContain(`href="${link}"`);
    expect(await (await fetch(`${api}/readme`)).text()).toBe(await readFile(path.join(checkout, 'README.md'), 'utf8'));

    // Ctrl-C: the terminal signals the whole process group.
    const started = running;
    running = null;
    started.kill('SIGINT');
    const exit = await started.exited;
    const all = started.output();
    expect(all).toMatch(/\[portcullis\] stopping\n[\s\S]*\[portcullis\] stopped\n/);
    // npm answers an interrupted script with 130 (or dies of the signal); what it ran stopped cleanly above.
    expect(exit.code === 0 || exit.code === 130 || exit.signal === 'SIGINT', JSON.stringify(exit)).toBe(true);
    expect(all).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    if (standIn) expect(existsSync(path.join(standIn, 'postmaster.pid'))).toBe(false);
  });
});
