import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { DEFAULT_ARGON2ID_COST, hashPassword, migrate, PostgresEventStore } from '@portcullis/platform';
import { startPrivateRedis } from '../../../tests/support/redis-server.ts';
import { TestSmtpServer } from '../../../tests/support/smtp.ts';
import { AuthClient } from '../lib/auth-client.ts';
import { waitUntil } from '../lib/children.ts';
import { percentiles } from '../lib/closed-loop.ts';
import { CostMeter, type Cost, type CostSources } from '../lib/cost-meter.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { HttpTarget, type HttpAnswer } from '../lib/http-session.ts';
import { runLoad } from '../lib/load.ts';
import { appendSignedUpUsers } from '../lib/log-prefill.ts';
import { startDeployment, waitForProjections, type Deployment } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import type { Teardown } from '../lib/teardown.ts';
import { measureArgon2 } from '../reads/argon2.ts';
import { settings } from '../settings.ts';
import { createOrganization, inBatches, signUp } from '../writes/actors.ts';
import { costsFilePath } from '../capacity/files.ts';
import { costsFileSchema, type AppendCeiling, type CostsFile, type OperationCost, type OperationKey } from './costs-file.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Sessions written straight to the log: what sign-out ends, and what the Redis memory per session is read from. */
const PREFILLED_SESSIONS = 6_000;
const CEILING_CONNECTIONS = [1, 4, 16, 64];

interface Counters {
  head: number;
  appends: number;
  logBytes: number;
  mails: number;
}

/**
 * The `costs` group: each key operation on one deployment (api, projector, mailer, a Redis and an SMTP sink of
 * the group's own, Postgres shared), its CPU by process, Postgres transactions and WAL, log growth, Redis
 * commands and mails per operation; the memory a cached session takes; the log's append ceiling on a database
 * of its own. Written to bench/results/costs.json for `npm run capacity`.
 */
export async function runCosts(teardown: Teardown): Promise<string> {
  const loadBefore = os.loadavg();
  const runId = randomBytes(4).toString('hex');
  const redis = await startPrivateRedis();
  teardown.add('stop the private Redis (costs)', () => redis.stop());
  const smtp = await TestSmtpServer.start();
  teardown.add('stop the SMTP sink (costs)', () => smtp.stop());
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  const keyPrefix = `bench:${runId}:costs:`;

  log(`costs: starting api + projector + mailer on ${database.name}, Redis ${redis.url}`);
  const deployment = await startDeployment({
    databaseUrl: database.url,
    secret: randomBytes(32).toString('hex'),
    redis: { url: redis.url, keyPrefix },
    rateLimit: settings.rateLimit,
    smtpUrl: `smtp://127.0.0.1:${smtp.port}`,
    signUpMail: true,
  });
  teardown.add('stop Portcullis (costs)', () => deployment.stop());
  const mailer = deployment.startWorker('mailer');
  const meter = await CostMeter.open({ adminUrl: settings.adminUrl, databaseName: database.name, redisUrl: redis.url, databaseUrl: database.url });
  teardown.add('close the cost meter (costs)', () => meter.close());
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  teardown.add('close the costs connection', () => db.end());
  const http = new HttpTarget('Portcullis', deployment.authUrl);
  teardown.add('close the costs http agent', async () => http.close());

  const sources: CostSources = {
    pids: [deployment.api.pid, deployment.projector.pid, mailer.pid],
    backends: true,
    redis: true,
    wal: true,
    redisCommands: true,
    named: [
      { label: 'api', pid: deployment.api.pid },
      { label: 'projector', pid: deployment.projector.pid },
      { label: 'mailer', pid: mailer.pid },
    ],
  };
  const counters = async (): Promise<Counters> => {
    const { rows } = await db.query<{ head: string; bytes: string }>(
      `SELECT (SELECT position FROM event_log_head)::text AS head, pg_total_relation_size('events')::text AS bytes`,
    );
    return { head: Number(rows[0]!.head), appends: 0, logBytes: Number(rows[0]!.bytes), mails: smtp.mails.length };
  };
  const appendsSince = async (head: number): Promise<{ events: number; appends: number }> => {
    // One append records all its events at one clock_timestamp(): its distinct times count the appends.
    const { rows } = await db.query<{ events: string; appends: string }>(
      'SELECT count(*)::text AS events, count(DISTINCT recorded_at)::text AS appends FROM events WHERE position > $1',
      [head],
    );
    return { events: Number(rows[0]!.events), appends: Number(rows[0]!.appends) };
  };
  const children = [deployment.api, deployment.projector, mailer];
  /** Mail is delivered after the answer: the window stays open until the sink has every mail queued so far. */
  const mailsDelivered = async (): Promise<void> => {
    const { rows } = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM events WHERE type = 'mail.job_queued.v1'`);
    const queued = Number(rows[0]!.n);
    await waitUntil(async () => smtp.mails.length >= queued, { what: `${queued} mails at the SMTP sink`, timeoutMs: 120_000, children });
  };

  const operation = async (name: string, clients: number, run: (durationS: number) => Promise<{ ok: number; failed: number; latencies: number[] }>): Promise<OperationCost> => {
    log(`costs: ${name}, ${clients} client(s), ${settings.warmupS} s + ${settings.durationS} s`);
    if (settings.warmupS > 0) await run(settings.warmupS);
    await mailsDelivered();
    const before = await counters();
    const window = await meter.open(sources);
    const started = performance.now();
    const result = await run(settings.durationS);
    const windowS = (performance.now() - started) / 1000;
    await mailsDelivered();
    const cost = withoutBackground((await window.close())(result.ok), background, windowS / result.ok);
    const after = await counters();
    const appended = await appendsSince(before.head);
    if (result.ok === 0) throw new Error(`costs: ${name} had no successful operation`);
    if (result.failed > 0) log(`warning: costs: ${name} had ${result.failed} failed operations`);
    return operationCost(name, clients, { ok: result.ok, windowS, cost, appended, logBytes: after.logBytes - before.logBytes, mails: after.mails - before.mails });
  };

  // Sessions of the log's own, each with its bearer token: sign-out ends them, one each.
  log(`costs: writing ${PREFILLED_SESSIONS} users with a session each to the log`);
  const password = `bench-password-${runId}`;
  const store = new PostgresEventStore({ databaseUrl: database.url, maximumPoolSize: 2 });
  teardown.add('close the costs event store', () => store.close());
  const memoryBefore = await usedMemory(redis.url);
  const prefilled = await appendSignedUpUsers(store, { count: PREFILLED_SESSIONS, label: `${runId}-prefilled`, passwordHash: await hashPassword(password, DEFAULT_ARGON2ID_COST), withSessions: true });
  await waitForProjections(deployment, 5 * 60_000);
  const sessionMemory = await measureSessionMemory(redis.url, memoryBefore, db, PREFILLED_SESSIONS);

  log('costs: signing up 16 clients, each with an organization');
  const actors = await inBatches(
    Array.from({ length: 16 }, (_, i) => i),
    4,
    async (index) => {
      const account = await signUp(http, `${runId}-actor${index}`);
      return { ...account, homeOrganizationId: await createOrganization(account.session, `${runId}-home${index}`) };
    },
  );
  await mailsDelivered();
  const signed = await signedTokenOf(deployment, actors[0]!.email, actors[0]!.password);

  const getSession = (headers: Record<string, string>) => async (durationS: number) => {
    // get-session answers 200 with null for a token it does not know: a 2xx alone proves no session was read.
    await new AuthClient(deployment.authUrl).expectSession(headers, actors[0]!.email);
    const figures = await runLoad({ url: `${deployment.authUrl}/get-session`, headers, connections: settings.connections, durationS });
    return { ok: figures.ok, failed: figures.failed, latencies: [figures.p50Ms] };
  };
  // What the processes do with no load at all (heartbeats, the process registry, the api's minute figures,
  // the projector's polls): per second, taken off each window, since on a busy host a window holds few operations.
  const idleS = Math.max(2, settings.durationS);
  log(`costs: ${idleS} s of no load, for the background taken off each figure`);
  const idleWindow = await meter.open(sources);
  await new Promise((resolve) => setTimeout(resolve, idleS * 1000));
  const background: Cost = scaled((await idleWindow.close())(1), 1 / idleS);
  const operations: Partial<Record<OperationKey, OperationCost>> = {};
  // The api keeps session answers in process: the first seconds are its cache's and V8's warm-up.
  await getSession({ cookie: `better-auth.session_token=${encodeURIComponent(signed)}` })(settings.sessionWarmupS / 2);
  operations['get-session-cookie'] = await operation('get-session (cookie, Redis)', settings.connections, getSession({ cookie: `better-auth.session_token=${encodeURIComponent(signed)}` }));
  operations['get-session-bearer'] = await operation('get-session (bearer, Redis)', settings.connections, getSession({ authorization: `Bearer ${signed}` }));

  let signInTurn = 0;
  operations['sign-in'] = await operation('sign-in (email and password)', settings.signInConnections, (durationS) =>
    closedLoop(settings.signInConnections, durationS, async () => {
      const actor = actors[signInTurn++ % actors.length]!;
      return http.session().post('/sign-in/email', { email: actor.email, password: actor.password });
    }),
  );
  let signUps = 0;
  operations['sign-up'] = await operation('sign-up (with its verification mail)', settings.signInConnections, (durationS) =>
    closedLoop(settings.signInConnections, durationS, async () => {
      const n = signUps++;
      return http.session().post('/sign-up/email', { name: `Bench ${n}`, email: `${runId}-signup-${n}@example.com`, password: `${password}-${n}` });
    }),
  );
  let ended = 0;
  operations['sign-out'] = await operation('sign-out (bearer)', 16, (durationS) =>
    closedLoop(16, durationS, async () => {
      const user = prefilled[ended++];
      if (!user) throw new Error(`sign-out used up the ${PREFILLED_SESSIONS} prefilled sessions: raise PREFILLED_SESSIONS`);
      return http.session().useBearer(user.token!).post('/sign-out', {});
    }),
  );
  const active = new Map<number, string | null>();
  let toggles = 0;
  operations['set-active'] = await operation('organization set-active', actors.length, (durationS) =>
    closedLoopPerClient(actors.length, durationS, async (client) => {
      const actor = actors[client]!;
      const next = (active.get(client) ?? null) === null ? actor.homeOrganizationId : null;
      const answer = await actor.session.post('/organization/set-active', { organizationId: next });
      if (answer.status === 200) active.set(client, next);
      toggles += 1;
      return answer;
    }),
  );
  let renames = 0;
  operations['update-user'] = await operation('update-user (name)', actors.length, (durationS) =>
    closedLoopPerClient(actors.length, durationS, (client) => actors[client]!.session.post('/update-user', { name: `${runId} ${client} ${++renames}` })),
  );
  log(`costs: ${toggles} toggles, ${renames} renames, ${signUps} sign-ups, ${ended} sign-outs`);
  await deployment.stop();

  const argon2 = await measureArgon2('both');
  const appendCeiling = await measureAppendCeiling(teardown);
  const diskFlush = await measureDiskFlush();

  const file: CostsFile = costsFileSchema.parse({
    measuredAt: new Date().toISOString(),
    commit: gitCommit(),
    host: {
      cores: os.availableParallelism(),
      cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
      node: process.version,
      loadAverageBefore: loadBefore.map(round1),
      loadAverageAfter: os.loadavg().map(round1),
      ...(await serverFacts(db, redis.url)),
      note: process.env.BENCH_HOST_NOTE || 'a shared host: other sessions ran tests and builds on the same cores while this ran',
    },
    settings: { warmupS: settings.warmupS, durationS: settings.durationS },
    operations,
    argon2: {
      concurrency: argon2.concurrency,
      verificationsPerSecond: argon2.verificationsPerSecond,
      verifyCpuMs: argon2.verifyCpuMs,
      hashesPerSecond: argon2.hashesPerSecond ?? 0,
    },
    sessionMemory,
    appendCeiling,
    diskFlush,
  });
  await mkdir(path.dirname(costsFilePath), { recursive: true });
  await writeFile(costsFilePath, `${JSON.stringify(file, null, 2)}\n`);
  return costsReport(file);
}

/** Every figure of `cost` times `factor`. */
function scaled(cost: Cost, factor: number): Cost {
  const by = (n: number | null | undefined): number => (n ?? 0) * factor;
  return {
    cpuMsPerOp: by(cost.cpuMsPerOp),
    pgTransactionsPerOp: by(cost.pgTransactionsPerOp),
    parts: cost.parts.map((p) => ({ part: p.part, cpuMsPerOp: by(p.cpuMsPerOp) })),
    walBytesPerOp: by(cost.walBytesPerOp),
    serverWalBytesPerOp: by(cost.serverWalBytesPerOp),
    redisCommandsPerOp: by(cost.redisCommandsPerOp),
    redisCommandsByName: Object.fromEntries(Object.entries(cost.redisCommandsByName ?? {}).map(([name, n]) => [name, by(n)])),
  };
}

/**
 * A window's cost per operation less the background's (per second) over the `secondsPerOp` each operation
 * had of the window; never below zero (the background itself moves a little).
 */
export function withoutBackground(cost: Cost, background: Cost, secondsPerOp: number): Cost {
  const less = (n: number | null | undefined, b: number | null | undefined): number => Math.max(0, (n ?? 0) - (b ?? 0) * secondsPerOp);
  const backgroundPart = (part: string): number => background.parts.find((p) => p.part === part)?.cpuMsPerOp ?? 0;
  const names = cost.redisCommandsByName ?? {};
  const redisCommandsByName = Object.fromEntries(
    Object.entries(names)
      .map(([name, n]) => [name, less(n, background.redisCommandsByName?.[name])] as const)
      .filter(([, n]) => n > 0),
  );
  return {
    cpuMsPerOp: less(cost.cpuMsPerOp, background.cpuMsPerOp),
    pgTransactionsPerOp: less(cost.pgTransactionsPerOp, background.pgTransactionsPerOp),
    parts: cost.parts.map((p) => ({ part: p.part, cpuMsPerOp: less(p.cpuMsPerOp, backgroundPart(p.part)) })),
    walBytesPerOp: less(cost.walBytesPerOp, background.walBytesPerOp),
    serverWalBytesPerOp: less(cost.serverWalBytesPerOp, background.serverWalBytesPerOp),
    redisCommandsPerOp: Object.values(redisCommandsByName).reduce((sum, n) => sum + n, 0),
    redisCommandsByName,
  };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot }).toString().trim();
  } catch {
    return 'unknown';
  }
}

async function serverFacts(db: pg.Client, redisUrl: string): Promise<{ postgres: string; synchronousCommit: string; redis: string }> {
  const { rows } = await db.query<{ version: string; sync: string }>(`SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS sync`);
  const client = new Redis(redisUrl);
  try {
    const info = await client.info('server');
    return { postgres: rows[0]!.version, synchronousCommit: rows[0]!.sync, redis: /^redis_version:(\S+)/m.exec(info)?.[1] ?? 'unknown' };
  } finally {
    client.disconnect();
  }
}

async function signedTokenOf(deployment: Deployment, email: string, passwordText: string): Promise<string> {
  const response = await fetch(`${deployment.authUrl}/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(deployment.authUrl).origin },
    body: JSON.stringify({ email, password: passwordText }),
  });
  await response.arrayBuffer();
  const signed = response.headers.get('set-auth-token');
  if (!response.ok || !signed) throw new Error(`sign-in for the get-session token answered ${response.status}`);
  return signed;
}

/** `clients` lanes sending `op` back to back for `durationS`; every operation sent is waited for and counted. */
function closedLoop(clients: number, durationS: number, op: () => Promise<HttpAnswer>): Promise<{ ok: number; failed: number; latencies: number[] }> {
  return closedLoopPerClient(clients, durationS, () => op());
}

async function closedLoopPerClient(clients: number, durationS: number, op: (client: number) => Promise<HttpAnswer>): Promise<{ ok: number; failed: number; latencies: number[] }> {
  const ends = performance.now() + durationS * 1000;
  let ok = 0;
  let failed = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < ends) {
        const sent = performance.now();
        const answer = await op(client).catch(() => null);
        if (answer && answer.status >= 200 && answer.status <= 299) {
          ok += 1;
          latencies.push(performance.now() - sent);
        } else failed += 1;
      }
    }),
  );
  return { ok, failed, latencies };
}

function operationCost(
  name: string,
  clients: number,
  m: { ok: number; windowS: number; cost: Cost; appended: { events: number; appends: number }; logBytes: number; mails: number },
): OperationCost {
  const part = (label: string): number => m.cost.parts.filter((p) => p.part.startsWith(`${label} `) || p.part === label).reduce((sum, p) => sum + p.cpuMsPerOp, 0);
  const cpu = {
    api: part('api'),
    apiMainThread: m.cost.parts.find((p) => p.part === 'api main thread')?.cpuMsPerOp ?? 0,
    projector: part('projector'),
    mailer: part('mailer'),
    postgres: part('postgres'),
    redis: part('redis'),
    total: m.cost.cpuMsPerOp ?? 0,
  };
  return {
    name,
    clients,
    ops: m.ok,
    windowS: m.windowS,
    opsPerSecond: m.ok / m.windowS,
    cpuMsPerOp: cpu,
    pgTransactionsPerOp: m.cost.pgTransactionsPerOp ?? 0,
    walBytesPerOp: m.cost.walBytesPerOp ?? 0,
    serverWalBytesPerOp: m.cost.serverWalBytesPerOp ?? 0,
    eventsPerOp: m.appended.events / m.ok,
    appendsPerOp: m.appended.appends / m.ok,
    logBytesPerOp: m.logBytes / m.ok,
    redisCommandsPerOp: m.cost.redisCommandsPerOp ?? 0,
    redisCommandsByName: m.cost.redisCommandsByName ?? {},
    mailsPerOp: m.mails / m.ok,
  };
}

async function usedMemory(redisUrl: string): Promise<number> {
  const client = new Redis(redisUrl);
  try {
    return Number(/^used_memory:(\d+)/m.exec(await client.info('memory'))?.[1] ?? 0);
  } finally {
    client.disconnect();
  }
}

/** The private Redis holds only this deployment's cache: its keys and its memory growth are the sessions'. */
async function measureSessionMemory(redisUrl: string, usedBefore: number, db: pg.Client, sessions: number): Promise<CostsFile['sessionMemory']> {
  const client = new Redis(redisUrl);
  try {
    let keyBytes = 0;
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'COUNT', 1000);
      cursor = next;
      const pipeline = client.pipeline();
      for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', '0');
      for (const [, bytes] of (await pipeline.exec()) ?? []) keyBytes += Number(bytes ?? 0);
    } while (cursor !== '0');
    const usedAfter = Number(/^used_memory:(\d+)/m.exec(await client.info('memory'))?.[1] ?? 0);
    const { rows } = await db.query<{ bytes: string; n: string }>(`SELECT pg_total_relation_size('session')::text AS bytes, (SELECT count(*) FROM session)::text AS n`);
    return {
      sessions,
      redisKeyBytesPerSession: keyBytes / sessions,
      redisUsedMemoryPerSession: (usedAfter - usedBefore) / sessions,
      readModelBytesPerSession: Number(rows[0]!.bytes) / Number(rows[0]!.n),
    };
  } finally {
    client.disconnect();
  }
}

/**
 * Appends at saturation, straight through the Postgres adapter on a migrated database no service reads: one
 * event per append (a sign-in's size) from 1 to 64 connections, then ten per append. Each append holds the
 * log head's row lock from its first statement to its commit, so this is the log's ceiling on this host.
 */
async function measureAppendCeiling(teardown: Teardown): Promise<AppendCeiling[]> {
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  await migrate(database.url);
  const meter = await CostMeter.open({ adminUrl: settings.adminUrl, databaseName: database.name, redisUrl: null, databaseUrl: database.url });
  teardown.add('close the ceiling meter', () => meter.close());
  const durationS = Math.max(2, settings.durationS / 2);
  const data = { sessionId: randomUUID(), userId: randomUUID(), tokenHash: randomBytes(32).toString('hex'), expiresAt: new Date().toISOString(), ipAddress: '127.0.0.1', userAgent: 'portcullis-bench' };
  const metadata = { occurredAt: new Date().toISOString(), actorId: null, ipAddress: '127.0.0.1', userAgent: 'portcullis-bench', requestId: randomUUID(), correlationId: randomUUID(), causationId: null, traceparent: null };
  const figures: AppendCeiling[] = [];
  let n = 0;
  const variants = [...CEILING_CONNECTIONS.map((connections) => ({ connections, eventsPerAppend: 1 })), { connections: 16, eventsPerAppend: 10 }];
  for (const { connections, eventsPerAppend } of variants) {
    log(`costs: append ceiling, ${connections} connection(s), ${eventsPerAppend} event(s) an append, ${durationS} s`);
    const store = new PostgresEventStore({ databaseUrl: database.url, maximumPoolSize: connections });
    const latencies: number[] = [];
    const lanes = async (seconds: number, record: boolean): Promise<void> => {
      const ends = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (performance.now() < ends) {
            const sent = performance.now();
            await store.append([
              { streamId: `ceiling-${n++}`, expectedVersion: 'no_stream', events: Array.from({ length: eventsPerAppend }, () => ({ type: 'session.created.v2', data, metadata })) },
            ]);
            if (record) latencies.push(performance.now() - sent);
          }
        }),
      );
    };
    await lanes(1, false);
    const window = await meter.open({ pids: [], backends: true, redis: false, wal: true });
    const started = performance.now();
    await lanes(durationS, true);
    const seconds = (performance.now() - started) / 1000;
    const cost = (await window.close())(latencies.length);
    await store.close();
    figures.push({
      connections,
      eventsPerAppend,
      appendsPerSecond: latencies.length / seconds,
      eventsPerSecond: (latencies.length * eventsPerAppend) / seconds,
      p50Ms: percentiles(latencies).p50Ms,
      postgresCpuMsPerAppend: cost.parts.find((p) => p.part === 'postgres')?.cpuMsPerOp ?? 0,
      walBytesPerAppend: cost.walBytesPerOp ?? 0,
    });
  }
  return figures;
}

/** pg_test_fsync's fdatasync of one 8 kB write, in a directory of its own under the temporary directory. */
async function measureDiskFlush(): Promise<CostsFile['diskFlush']> {
  const candidates = [...(process.env.PATH ?? '').split(':'), ...(await readdir('/usr/lib/postgresql').catch(() => [] as string[])).map((v) => `/usr/lib/postgresql/${v}/bin`)];
  const binary = candidates.map((dir) => path.join(dir, 'pg_test_fsync')).find((file) => existsSync(file));
  if (!binary) {
    log('costs: pg_test_fsync not found, the disk flush is not measured');
    return null;
  }
  const directory = await mkdtemp(path.join(os.tmpdir(), 'portcullis-fsync-'));
  try {
    log('costs: the disk flush (pg_test_fsync)');
    const output = execFileSync(binary, ['-s', '1', '-f', path.join(directory, 'test')], { timeout: 120_000 }).toString();
    const usecs = /^\s*fdatasync\s+[\d.]+ ops\/sec\s+(\d+) usecs\/op/m.exec(output)?.[1];
    if (!usecs) throw new Error(`pg_test_fsync printed no fdatasync line:\n${output}`);
    return { method: 'fdatasync', msPerFlush: Number(usecs) / 1000, directory: os.tmpdir() };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

function costsReport(file: CostsFile): string {
  const lines = [
    `## Costs per operation (written to bench/results/costs.json; \`npm run capacity\` turns it into docs/capacity.md)`,
    '',
    '| operation | ops/s | cpu ms/op api / projector / mailer / postgres / redis | pg xacts/op | WAL B/op | events/op | Redis cmds/op | mails/op |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const op of Object.values(file.operations)) {
    const c = op.cpuMsPerOp;
    lines.push(
      `| ${op.name} | ${op.opsPerSecond.toFixed(0)} | ${[c.api, c.projector, c.mailer, c.postgres, c.redis].map((v) => v.toFixed(3)).join(' / ')} | ${op.pgTransactionsPerOp.toFixed(2)} | ${op.walBytesPerOp.toFixed(0)} | ${op.eventsPerOp.toFixed(2)} | ${op.redisCommandsPerOp.toFixed(2)} | ${op.mailsPerOp.toFixed(2)} |`,
    );
  }
  lines.push('', `argon2id: ${file.argon2.verifyCpuMs.toFixed(1)} ms of CPU a verification; a cached session: ${file.sessionMemory.redisUsedMemoryPerSession.toFixed(0)} bytes of Redis`);
  lines.push('', '| append ceiling: connections | events/append | appends/s | p50 ms |', '|--:|--:|--:|--:|');
  for (const c of file.appendCeiling) lines.push(`| ${c.connections} | ${c.eventsPerAppend} | ${c.appendsPerSecond.toFixed(0)} | ${c.p50Ms.toFixed(1)} |`);
  if (file.diskFlush) lines.push('', `disk flush (${file.diskFlush.method}, ${file.diskFlush.directory}): ${file.diskFlush.msPerFlush.toFixed(2)} ms`);
  return lines.join('\n');
}
