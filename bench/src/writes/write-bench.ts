import { randomBytes } from 'node:crypto';
import { spawnEntry, tail, type Child } from '../lib/children.ts';
import { runClosedLoop, type LoopFigures } from '../lib/closed-loop.ts';
import { CostMeter, type Cost, type CostSources, type CostWindow } from '../lib/cost-meter.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { HttpTarget } from '../lib/http-session.ts';
import { startDeployment } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import { deleteKeysWithPrefix } from '../lib/redis-keys.ts';
import type { Teardown } from '../lib/teardown.ts';
import { startBetterAuthPeer } from '../peer/better-auth-peer.ts';
import { settings } from '../settings.ts';
import { provisionActors, type Actor } from './actors.ts';
import { writeScenarios, type ReadBack, type WriteScenario } from './write-scenarios.ts';
import { writesReport, type HashCost } from './writes-report.ts';

/** Members an organization may have, on both servers: out of reach, as the rate limits are. */
export const UNREACHABLE_MEMBERSHIP_LIMIT = 1_000_000;

type ServerName = 'Portcullis' | 'better-auth';

/** One server under test, with what its CPU is charged to. */
interface ServerUnderTest {
  readonly name: ServerName;
  readonly http: HttpTarget;
  readonly meter: CostMeter;
  readonly sources: CostSources;
  /** The process whose threads other than its main one hash passwords (libuv's threadpool runs them). */
  readonly hashingProcess: string;
  readonly children: readonly Child[];
  actors: readonly Actor[];
}

interface ReadYourWrites {
  readonly fresh: number;
  readonly stale: number;
  readonly failed: number;
}

export interface ScenarioFigures {
  readonly scenario: WriteScenario;
  readonly server: ServerName;
  readonly hashingProcess: string;
  readonly clients: number;
  readonly loop: LoopFigures;
  readonly cost: Cost;
  readonly readYourWrites: ReadYourWrites;
}

/**
 * Issue 23's write scenarios against Portcullis and better-auth 1.7, both running through the whole group,
 * each on a database and Redis prefix of its own. For every scenario and client count the two are measured
 * one after the other, the order alternating, with the same clients, warm-up and window.
 */
export async function runWrites(teardown: Teardown): Promise<string> {
  const runId = randomBytes(4).toString('hex');
  const secret = randomBytes(32).toString('hex');
  const servers = [await startPortcullis(teardown, runId, secret), await startPeer(teardown, runId, secret)];
  const mostClients = Math.max(...settings.writeClients);
  for (const server of servers) {
    log(`writes: signing up ${mostClients} clients at ${server.name}, each with an organization`);
    server.actors = await provisionActors(server.http, `${runId}-${server.name === 'Portcullis' ? 'pc' : 'ba'}`, mostClients);
  }

  const results: ScenarioFigures[] = [];
  let hashCost: HashCost | undefined;
  for (const [scenarioIndex, scenario] of writeScenarios.entries()) {
    if (scenario.key === 'change-password') hashCost = await measureHashCost();
    for (const [levelIndex, clients] of settings.writeClients.entries()) {
      const order = (scenarioIndex + levelIndex) % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) results.push(await measureScenario(scenario, server, clients, runId));
    }
  }
  for (const server of servers) reportChildLogs(server.children);
  return writesReport(results, hashCost);
}

async function measureScenario(scenario: WriteScenario, server: ServerUnderTest, clients: number, runId: string): Promise<ScenarioFigures> {
  const label = `${runId}-${scenario.key}-${clients}`;
  const work = await scenario.prepare({ target: server.http, actors: server.actors.slice(0, clients), label });
  log(`writes: ${scenario.name} at ${server.name}, ${clients} client(s), ${settings.warmupS} s + ${scenario.durationS} s`);
  let opening: Promise<CostWindow> | undefined;
  let closing: Promise<(ops: number) => Cost> | undefined;
  const loop = await runClosedLoop({
    operations: work.map((w) => w.step),
    warmupS: settings.warmupS,
    durationS: scenario.durationS,
    window: {
      opened: () => {
        opening = server.meter.open(server.sources);
      },
      closed: () => {
        closing = opening!.then((window) => window.close());
      },
    },
  });
  const cost = (await closing!)(loop.ok);
  if (loop.failed > 0) log(`warning: ${scenario.name} at ${server.name} (${clients}): ${loop.failed} failed (${JSON.stringify(loop.statuses)})${loop.firstError ? `; ${loop.firstError}` : ''}`);
  if (loop.cutShort) log(`note: ${scenario.name} at ${server.name} (${clients}): a client ran out of prepared work after ${loop.windowS.toFixed(1)} s`);

  // The same clients at once, each writing and reading back: read-your-writes under this scenario's load.
  const counts = { fresh: 0, stale: 0, failed: 0 };
  await Promise.all(
    work.map(async (w) => {
      for (let check = 0; check < scenario.readYourWritesChecks; check += 1) {
        const seen: ReadBack = await w.readYourWrite().catch((): ReadBack => 'failed');
        if (seen !== 'exhausted') counts[seen] += 1;
      }
    }),
  );
  if (counts.stale > 0) log(`warning: ${scenario.name} at ${server.name} (${clients}): ${counts.stale} reads did not show the write before them`);
  return { scenario, server: server.name, hashingProcess: server.hashingProcess, clients, loop, cost, readYourWrites: counts };
}

async function startPortcullis(teardown: Teardown, runId: string, secret: string): Promise<ServerUnderTest> {
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  const keyPrefix = `bench:${runId}:writes:`;
  teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
  log(`writes: starting Portcullis (api + projector) on ${database.name}`);
  const deployment = await startDeployment({
    databaseUrl: database.url,
    secret,
    redis: { url: settings.redisUrl, keyPrefix },
    rateLimit: settings.rateLimit,
    membershipLimit: UNREACHABLE_MEMBERSHIP_LIMIT,
  });
  teardown.add('stop Portcullis (writes)', () => deployment.stop());
  const meter = await CostMeter.open({ adminUrl: settings.adminUrl, databaseName: database.name, redisUrl: settings.redisUrl });
  teardown.add('close Portcullis cost meter', () => meter.close());
  const http = new HttpTarget('Portcullis', deployment.authUrl);
  teardown.add('close Portcullis connections', async () => http.close());
  return {
    name: 'Portcullis',
    http,
    meter,
    sources: {
      pids: [deployment.api.pid, deployment.projector.pid],
      backends: true,
      redis: true,
      named: [
        { label: 'api', pid: deployment.api.pid },
        { label: 'projector', pid: deployment.projector.pid },
      ],
    },
    hashingProcess: 'api',
    children: [deployment.api, deployment.projector],
    actors: [],
  };
}

async function startPeer(teardown: Teardown, runId: string, secret: string): Promise<ServerUnderTest> {
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  const keyPrefix = `bench:${runId}:peer:`;
  teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
  log(`writes: starting better-auth on ${database.name}`);
  const peer = await startBetterAuthPeer({
    databaseUrl: database.url,
    secret,
    redis: { url: settings.redisUrl, keyPrefix },
    rateLimit: settings.rateLimit,
    membershipLimit: UNREACHABLE_MEMBERSHIP_LIMIT,
  });
  teardown.add('stop better-auth', () => peer.stop());
  const meter = await CostMeter.open({ adminUrl: settings.adminUrl, databaseName: database.name, redisUrl: settings.redisUrl });
  teardown.add('close better-auth cost meter', () => meter.close());
  const http = new HttpTarget('better-auth', peer.authUrl);
  teardown.add('close better-auth connections', async () => http.close());
  return {
    name: 'better-auth',
    http,
    meter,
    sources: { pids: [peer.child.pid], backends: true, redis: true, named: [{ label: 'better-auth', pid: peer.child.pid }] },
    hashingProcess: 'better-auth',
    children: [peer.child],
    actors: [],
  };
}

async function measureHashCost(): Promise<HashCost> {
  log('writes: measuring what the two hashes of a change of password cost alone (argon2id, scrypt)');
  const child = spawnEntry('password-hash-cost', 'bench/src/writes/password-hash-cost.ts', { ...process.env, BENCH_HASH_S: String(settings.argon2S * 2) });
  const { code } = await child.exited;
  if (code !== 0) throw new Error(`password-hash-cost exited with ${code}\n${tail(child.output())}`);
  return JSON.parse(child.output().trim().split('\n').at(-1) ?? '') as HashCost;
}

/** Warnings and errors the servers logged: what a load did to them beyond the status codes. */
export function reportChildLogs(children: readonly Child[]): void {
  for (const child of children) {
    const lines = child.lineCount();
    if (lines > 0) log(`${child.name} wrote ${lines} log lines at warn or worse; the last ones:\n${tail(child.output(), 8)}`);
  }
}
