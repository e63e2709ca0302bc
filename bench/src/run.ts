import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { hashToken } from '@portcullis/platform';
import { AuthClient, bearerHeader, cookieHeader } from './lib/auth-client.ts';
import { answersOk, freePort, spawnEntry, tail, waitUntil, type Child } from './lib/children.ts';
import { CostMeter, type Cost, type NamedProcess } from './lib/cost-meter.ts';
import { createBenchDatabase } from './lib/database.ts';
import { runLoad, type LoadFigures, type LoadOptions } from './lib/load.ts';
import { startDeployment, type Deployment } from './lib/portcullis.ts';
import { deleteKeysWithPrefix, keyExists, redisReachable } from './lib/redis-keys.ts';
import { renderTable, type Row } from './lib/report.ts';

function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

const settings = {
  durationS: numberFromEnv('BENCH_DURATION_S', 10),
  warmupS: numberFromEnv('BENCH_WARMUP_S', 2),
  // A steady state needs V8 to have optimised the sign-in path, and the projector's per-batch code runs only
  // about fifteen times a second under sign-in load: after 10 s, perf still caught TurboFan compiling in
  // both processes, and the api's and projector's CPU per sign-in were 5-15% above what they settle at.
  signInWarmupS: numberFromEnv('BENCH_SIGN_IN_WARMUP_S', 40),
  // A freshly started api answered get-session at 55-75 µs of CPU each in its first seconds under load and
  // settled at 35-50 µs after that; the first variant measured must not pay for the others' warm-up.
  sessionWarmupS: numberFromEnv('BENCH_SESSION_WARMUP_S', 20),
  // One sign-in figure swings by several points with the host's load; the median of rounds, each against
  // the verify runs either side of it, does not hang on one unlucky stretch.
  signInRounds: Math.max(1, Math.round(numberFromEnv('BENCH_SIGN_IN_ROUNDS', 3))),
  argon2S: numberFromEnv('BENCH_ARGON2_S', 5),
  connections: numberFromEnv('BENCH_CONNECTIONS', 64),
  signInConnections: numberFromEnv('BENCH_SIGN_IN_CONNECTIONS', 8),
  signInUsers: Math.max(1, numberFromEnv('BENCH_SIGN_IN_USERS', 16)),
  adminUrl: process.env.BENCH_DATABASE_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  // The refresh-free variant isolates what the refresh check costs a plain get-session.
  diagnostics: process.env.BENCH_DIAGNOSTICS !== '0',
  rateLimit: process.env.BENCH_RATE_LIMIT === 'off' ? ('off' as const) : ('counting' as const),
  // Iterating on sign-in needs only its figure: no ceiling or get-session runs, several minutes shorter.
  signInOnly: onlyFromEnv(),
};

function onlyFromEnv(): boolean {
  const raw = process.env.BENCH_ONLY ?? '';
  if (raw === '' || raw === 'all') return false;
  if (raw === 'sign-in') return true;
  throw new Error(`BENCH_ONLY must be "all" or "sign-in", got "${raw}"`);
}

const GOALS = {
  sessionShareOfCeiling: 0.5,
  sessionP99Ms: 10,
  signInShareOfArgon2: 0.85,
};

/** Undo actions, run newest first, exactly once, on success, failure or interrupt. */
class Teardown {
  private readonly steps: { what: string; run: () => Promise<unknown> }[] = [];
  private running: Promise<void> | undefined;

  add(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of [...this.steps].reverse()) {
        try {
          await step.run();
        } catch (error) {
          console.error(`teardown: ${step.what} failed: ${(error as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

const log = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};

interface Measured {
  readonly figures: LoadFigures;
  readonly cost: Cost;
}

interface CostSources {
  readonly pids: readonly number[];
  readonly backends: boolean;
  readonly redis: boolean;
  readonly named?: readonly NamedProcess[];
}

interface Argon2Figures {
  readonly concurrency: number;
  readonly verificationsPerSecond: number;
  readonly verifyCpuMs: number;
  readonly hashesPerSecond?: number;
}

interface SessionFigures {
  readonly cookie: Measured;
  readonly bearer: Measured;
  readonly bearerNoRefresh?: Measured;
}

interface SignInFigures {
  /** The first argon2 run, with the hash figure; verify runs follow each round. */
  readonly argon2First: Argon2Figures;
  /** `rounds.length + 1` verify runs: round i is bracketed by runs i and i + 1. */
  readonly verifyRuns: readonly Argon2Figures[];
  readonly rounds: readonly Measured[];
}

interface BenchUser {
  readonly name: string;
  readonly email: string;
  readonly password: string;
}

function makeUser(label: string, runId: string): BenchUser {
  return { name: `Bench ${label}`, email: `bench-${label}-${runId}@example.com`, password: `bench-password-${runId}-${label}` };
}

function describeStatuses(figures: LoadFigures): string {
  return Object.entries(figures.statusCodes)
    .map(([code, count]) => `${code}×${count}`)
    .join(' ');
}

class Bench {
  readonly runId = randomBytes(4).toString('hex');
  private readonly secret = randomBytes(32).toString('hex');
  private readonly primary = makeUser('primary', this.runId);
  private readonly signInUsers = Array.from({ length: settings.signInUsers }, (_, i) => makeUser(`user${i}`, this.runId));

  constructor(
    private readonly teardown: Teardown,
    private readonly meter: CostMeter,
    private readonly databaseUrl: string,
  ) {}

  /** A short unmeasured run first, so JIT, pools and caches are warm when measuring starts. */
  async measure(what: string, sources: CostSources, options: LoadOptions): Promise<Measured> {
    log(`measuring ${what}`);
    if (settings.warmupS > 0) await runLoad({ ...options, durationS: settings.warmupS });
    const { result, cost } = await this.meter.measure(sources, () => runLoad(options));
    if (result.ok === 0) throw new Error(`${what}: no successful answers (${describeStatuses(result)})`);
    if (result.failed > 0) log(`warning: ${what} had ${result.failed} failed requests (${describeStatuses(result)})`);
    return { figures: result, cost };
  }

  async startBareFastify(): Promise<{ url: string; child: Child }> {
    const port = await freePort();
    const child = spawnEntry('bare-fastify', 'bench/src/bare-fastify.ts', { ...process.env, PORT: String(port) });
    this.teardown.add('stop bare fastify', () => child.stop());
    const url = `http://127.0.0.1:${port}/`;
    await waitUntil(() => answersOk(url), { what: 'bare fastify', timeoutMs: 30_000, children: [child] });
    return { url, child };
  }

  /**
   * One deployment's figures: get-session variants, then `between` (a ceiling run, so that one brackets
   * these variants), then sign-in if asked.
   */
  async phase(options: {
    label: string;
    redis: { url: string; keyPrefix: string } | null;
    signUp: boolean;
    diagnostics: boolean;
    sessions: boolean;
    signIn: boolean;
    between: () => Promise<void>;
  }): Promise<{ sessions?: SessionFigures; signIn?: SignInFigures }> {
    log(`starting api + projector ${options.label}`);
    const deployment = await startDeployment({
      databaseUrl: this.databaseUrl,
      secret: this.secret,
      redis: options.redis,
      rateLimit: settings.rateLimit,
    });
    this.teardown.add(`stop api + projector ${options.label}`, () => deployment.stop());
    const client = new AuthClient(deployment.authUrl);
    if (options.signUp) for (const user of [this.primary, ...this.signInUsers]) await client.signUp(user);
    const { signedToken } = await client.signIn(this.primary);
    if (options.redis) {
      const token = signedToken.slice(0, signedToken.lastIndexOf('.'));
      // Measure the cache-hit path only once the projection has put this session in Redis.
      await waitUntil(() => keyExists(options.redis!.url, `${options.redis!.keyPrefix}session:${hashToken(token)}`), {
        what: 'the session to reach the Redis cache',
        timeoutMs: 30_000,
        children: [deployment.api, deployment.projector],
      });
    }
    const sources: CostSources = {
      pids: [deployment.api.pid, deployment.projector.pid],
      backends: true,
      redis: options.redis !== null,
      named: [
        { label: 'api', pid: deployment.api.pid },
        { label: 'projector', pid: deployment.projector.pid },
      ],
    };
    const sessions = options.sessions
      ? await this.measureSessions(deployment, signedToken, options.diagnostics, sources, options.label)
      : undefined;
    await options.between();
    const signIn = options.signIn ? await this.measureSignIn(deployment, sources, options.label) : undefined;
    this.reportChildLogs(deployment, options.label);
    await deployment.stop();
    return { ...(sessions ? { sessions } : {}), ...(signIn ? { signIn } : {}) };
  }

  private async measureSessions(
    deployment: Deployment,
    signedToken: string,
    diagnostics: boolean,
    sources: CostSources,
    label: string,
  ): Promise<SessionFigures> {
    const client = new AuthClient(deployment.authUrl);
    const url = `${deployment.authUrl}/get-session`;
    const run = async (variant: string, headers: Record<string, string>, target = url): Promise<Measured> => {
      await client.expectSession(headers, this.primary.email);
      const measured = await this.measure(`get-session ${label}, ${variant}`, sources, {
        url: target,
        headers,
        connections: settings.connections,
        durationS: settings.durationS,
      });
      // get-session answers 200 with null for an unknown token, so a 2xx alone does not prove a session was read.
      await client.expectSession(headers, this.primary.email);
      return measured;
    };
    if (settings.sessionWarmupS > 0) {
      log(`warming up get-session ${label} for ${settings.sessionWarmupS} s (cookie, then bearer)`);
      for (const headers of [cookieHeader(signedToken), bearerHeader(signedToken)]) {
        await runLoad({ url, headers, connections: settings.connections, durationS: settings.sessionWarmupS / 2 });
      }
    }
    const cookie = await run('cookie', cookieHeader(signedToken));
    const bearer = await run('bearer', bearerHeader(signedToken));
    const bearerNoRefresh = diagnostics
      ? await run('bearer, disableRefresh', bearerHeader(signedToken), `${url}?disableRefresh=true`)
      : undefined;
    return { cookie, bearer, ...(bearerNoRefresh ? { bearerNoRefresh } : {}) };
  }

  /**
   * argon2 is measured before and after each sign-in round, so drifting machine load shows and lands on both
   * sides of each round's ratio.
   */
  private async measureSignIn(deployment: Deployment, sources: CostSources, label: string): Promise<SignInFigures> {
    const bodies = this.signInUsers.map((u) => JSON.stringify({ email: u.email, password: u.password }));
    let next = 0;
    const load: LoadOptions = {
      url: deployment.baseUrl,
      connections: settings.signInConnections,
      durationS: settings.durationS,
      requests: [
        {
          method: 'POST',
          path: '/api/auth/sign-in/email',
          headers: { 'content-type': 'application/json' },
          // Rotating users spreads the appends over many session streams, as real traffic would.
          setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length]! }),
        },
      ],
    };
    // autocannon drops its connections without waiting for answers; a sign-in of our own queues behind the
    // argon2 work they left on the api's threadpool, so once it returns that work no longer competes.
    const drain = (): Promise<unknown> => new AuthClient(deployment.authUrl).signIn(this.primary);
    // The ceiling first, then the warm-up right before the measurement: while the api idles through the
    // ceiling's seconds, a major GC clears objects its optimised code depends on ("weak objects"), and V8
    // would recompile the sign-in path inside the measured seconds, on the same two cores. Later rounds idle
    // only through one verify run, and `measure` loads them unmeasured first.
    const argon2First = await measureArgon2('both');
    if (settings.signInWarmupS > 0) {
      log(`warming up sign-in ${label} for ${settings.signInWarmupS} s`);
      await runLoad({ ...load, durationS: settings.signInWarmupS });
      await drain();
    }
    const verifyRuns: Argon2Figures[] = [argon2First];
    const rounds: Measured[] = [];
    for (let round = 1; round <= settings.signInRounds; round += 1) {
      rounds.push(await this.measure(`sign-in ${label} over ${bodies.length} users (round ${round} of ${settings.signInRounds})`, sources, load));
      await drain();
      verifyRuns.push(await measureArgon2('verify'));
    }
    return { argon2First, verifyRuns, rounds };
  }

  /** Child log lines at warn or worse are worth a look (e.g. read-your-writes timeouts under load). */
  private reportChildLogs(deployment: Deployment, label: string): void {
    for (const child of [deployment.api, deployment.projector]) {
      const lines = child.lineCount();
      if (lines > 0) log(`${label}: ${child.name} wrote ${lines} warn+ log lines; last ones:\n${tail(child.output(), 5)}`);
    }
  }
}

async function measureArgon2(mode: 'verify' | 'both'): Promise<Argon2Figures> {
  log(`measuring argon2id ceiling (${mode === 'both' ? 'verify + hash' : 'verify'})`);
  const concurrency = os.availableParallelism();
  const child = spawnEntry('argon2-ceiling', 'bench/src/argon2-ceiling.ts', {
    ...process.env,
    BENCH_ARGON2_CONCURRENCY: String(concurrency),
    BENCH_ARGON2_S: String(settings.argon2S),
    BENCH_ARGON2_MODE: mode,
    // argon2 runs on the libuv threadpool (4 threads by default); it must not be what limits the lanes.
    UV_THREADPOOL_SIZE: String(Math.max(4, concurrency)),
  });
  const { code } = await child.exited;
  if (code !== 0) throw new Error(`argon2 ceiling exited with ${code}\n${tail(child.output())}`);
  return JSON.parse(child.output().trim().split('\n').at(-1) ?? '') as Argon2Figures;
}

async function main(teardown: Teardown): Promise<void> {
  const haveRedis = await redisReachable(settings.redisUrl);
  if (!haveRedis) log(`Redis at ${settings.redisUrl} is not reachable: the with-Redis variants are skipped`);

  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  log(`database ${database.name}`);
  const meter = await CostMeter.open({ adminUrl: settings.adminUrl, databaseName: database.name, redisUrl: haveRedis ? settings.redisUrl : null });
  teardown.add('close cost meter', () => meter.close());
  const bench = new Bench(teardown, meter, database.url);

  if (settings.signInOnly) {
    const keyPrefix = `bench:${bench.runId}:`;
    if (haveRedis) teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
    const only = await bench.phase({
      label: haveRedis ? 'with Redis' : 'without Redis',
      redis: haveRedis ? { url: settings.redisUrl, keyPrefix } : null,
      signUp: true,
      diagnostics: false,
      sessions: false,
      signIn: true,
      between: async () => {},
    });
    printReport({ ceilings: [], signIn: only.signIn!, signInLabel: haveRedis ? 'Redis' : 'no Redis' });
    return;
  }

  const bare = await bench.startBareFastify();
  const ceilings: Measured[] = [];
  const measureCeiling = async (): Promise<void> => {
    ceilings.push(
      await bench.measure(`bare fastify ceiling (run ${ceilings.length + 1})`, { pids: [bare.child.pid], backends: false, redis: false }, {
        url: bare.url,
        connections: settings.connections,
        durationS: settings.durationS,
      }),
    );
  };

  await measureCeiling();
  const withoutRedis = await bench.phase({
    label: 'without Redis',
    redis: null,
    signUp: true,
    diagnostics: false,
    sessions: true,
    signIn: !haveRedis,
    between: measureCeiling,
  });
  let withRedis: Awaited<ReturnType<Bench['phase']>> | undefined;
  if (haveRedis) {
    const keyPrefix = `bench:${bench.runId}:`;
    teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
    withRedis = await bench.phase({
      label: 'with Redis',
      redis: { url: settings.redisUrl, keyPrefix },
      signUp: false,
      diagnostics: settings.diagnostics,
      sessions: true,
      signIn: true,
      between: measureCeiling,
    });
  }
  const signIn = (withRedis ?? withoutRedis).signIn!;

  printReport({ ceilings, withoutRedis: withoutRedis.sessions, withRedis: withRedis?.sessions, signIn, signInLabel: haveRedis ? 'Redis' : 'no Redis' });
}

function printReport(r: {
  ceilings: readonly Measured[];
  withoutRedis?: SessionFigures | undefined;
  withRedis?: SessionFigures | undefined;
  signIn: SignInFigures;
  signInLabel: string;
}): void {
  const rate = (m: Measured | undefined): number => m?.figures.requestsPerSecond ?? Number.NaN;
  // Each variant is compared with the ceiling runs just before and after it, so slow drift in the
  // machine's load affects both sides of the ratio alike.
  const bracket = (first: number): { value: number; label: string } => {
    const pair = r.ceilings.slice(first, first + 2);
    return { value: pair.reduce((sum, m) => sum + rate(m), 0) / pair.length, label: `ceiling runs ${first + 1}-${first + pair.length}` };
  };
  const loadRow = (scenario: string, m: Measured, connections: number, extra: Partial<Row> = {}): Row => ({
    scenario,
    connections,
    rate: m.figures.requestsPerSecond,
    p50Ms: m.figures.p50Ms,
    p99Ms: m.figures.p99Ms,
    failed: m.figures.failed,
    cpuMsPerOp: m.cost.cpuMsPerOp,
    pgTransactionsPerOp: m.cost.pgTransactionsPerOp,
    ...extra,
  });
  const sessionRow = (scenario: string, m: Measured, ceiling: { value: number; label: string }, withGoal: boolean): Row => {
    const ratio = m.figures.requestsPerSecond / ceiling.value;
    const passed = ratio >= GOALS.sessionShareOfCeiling && m.figures.p99Ms < GOALS.sessionP99Ms;
    return loadRow(scenario, m, settings.connections, {
      ratio,
      ratioOf: ceiling.label,
      ...(withGoal ? { goal: { passed, text: `>= ${GOALS.sessionShareOfCeiling * 100}%, p99 < ${GOALS.sessionP99Ms} ms` } } : {}),
    });
  };

  const rows: Row[] = r.ceilings.map((m, i) => loadRow(`ceiling: bare fastify GET / (run ${i + 1})`, m, settings.connections));
  if (r.withoutRedis) {
    const noRedisCeiling = bracket(0);
    rows.push(sessionRow('get-session, no Redis, cookie', r.withoutRedis.cookie, noRedisCeiling, false));
    rows.push(sessionRow('get-session, no Redis, bearer', r.withoutRedis.bearer, noRedisCeiling, false));
  }
  if (r.withRedis) {
    const redisCeiling = bracket(1);
    rows.push(sessionRow('get-session, Redis, cookie', r.withRedis.cookie, redisCeiling, true));
    rows.push(sessionRow('get-session, Redis, bearer', r.withRedis.bearer, redisCeiling, true));
    if (r.withRedis.bearerNoRefresh) {
      rows.push(sessionRow('(diagnostic) Redis, bearer, ?disableRefresh=true', r.withRedis.bearerNoRefresh, redisCeiling, false));
    }
  }
  const { argon2First, verifyRuns, rounds } = r.signIn;
  const lanes = argon2First.concurrency;
  if (argon2First.hashesPerSecond !== undefined) rows.push({ scenario: `argon2id hash, ${lanes} lanes`, rate: argon2First.hashesPerSecond });
  verifyRuns.forEach((run, i) => {
    rows.push({ scenario: `argon2id verify, ${lanes} lanes (run ${i + 1})`, rate: run.verificationsPerSecond, cpuMsPerOp: run.verifyCpuMs });
  });
  const signInRatios = rounds.map(
    (round, i) => round.figures.requestsPerSecond / ((verifyRuns[i]!.verificationsPerSecond + verifyRuns[i + 1]!.verificationsPerSecond) / 2),
  );
  // The lower middle for an even count: a tie never rounds the figure up.
  const medianRound = [...signInRatios.keys()].sort((a, b) => signInRatios[a]! - signInRatios[b]!)[Math.floor((rounds.length - 1) / 2)]!;
  const signInRatio = signInRatios[medianRound]!;
  rounds.forEach((round, i) => {
    const judged = i === medianRound;
    rows.push(
      loadRow(`sign-in, ${r.signInLabel}, ${settings.signInUsers} users (round ${i + 1})`, round, settings.signInConnections, {
        ratio: signInRatios[i]!,
        ratioOf: `argon2 verify runs ${i + 1}-${i + 2}`,
        ...(judged
          ? { goal: { passed: signInRatio >= GOALS.signInShareOfArgon2, text: `>= ${GOALS.signInShareOfArgon2 * 100}%, median round` } }
          : {}),
      }),
    );
  });
  // The goal is judged against verification, the work a sign-in does; hashing (the words) is shown too.
  const medianRate = rounds[medianRound]!.figures.requestsPerSecond;
  const signInOfHashing = argon2First.hashesPerSecond === undefined ? null : medianRate / argon2First.hashesPerSecond;
  const signedIn = rounds.reduce((sum, round) => sum + round.figures.ok, 0);
  const pooledParts = rounds[0]!.cost.parts.map(({ part }) => ({
    part,
    cpuMsPerOp: rounds.reduce((sum, round) => sum + (round.cost.parts.find((p) => p.part === part)?.cpuMsPerOp ?? 0) * round.figures.ok, 0) / signedIn,
  }));
  const verifyAloneMs = verifyRuns.reduce((sum, run) => sum + run.verifyCpuMs, 0) / verifyRuns.length;

  const cpus = os.cpus();
  console.log('');
  console.log(`Portcullis bench, ${new Date().toISOString()}`);
  console.log(
    `machine: ${os.availableParallelism()} cores (${cpus[0]?.model.trim() ?? 'unknown cpu'}), node ${process.version}, ${os.platform()} ${os.release()}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    `settings: ${settings.durationS} s per figure after ${settings.warmupS} s warm-up (sign-in: ${settings.signInWarmupS} s first, then ${settings.signInRounds} round(s)); argon2 ${settings.argon2S} s per figure; ` +
      `rate limiting ${settings.rateLimit === 'off' ? 'off' : 'counting (limits out of reach)'}`,
  );
  console.log('');
  console.log(renderTable(rows));
  console.log('');
  console.log('ratio: get-session against the mean of the ceiling runs just before and after it; each sign-in round against the mean of');
  console.log(`  the argon2 verify runs just before and after it; the sign-in goal is judged on the median of ${rounds.length} round(s).`);
  console.log('cpu ms/op: CPU of the server side per successful request (the server process(es), their Postgres backends, and');
  console.log('  Redis server-wide when used), from /proc: a second view of the work per request, steadier than req/s on a shared');
  console.log('  machine but still inflated by contention and by background work when throughput is low.');
  console.log('pg tx/op: Postgres transactions per request in the bench database (each autocommit statement is one).');
  if (signInOfHashing !== null) console.log(`median sign-in round against the argon2 hash figure instead of verify: ${(signInOfHashing * 100).toFixed(1)}%.`);
  const parts = pooledParts.map((p) => `${p.part} ${p.cpuMsPerOp.toFixed(2)}`).join(', ');
  if (parts) console.log(`sign-in cpu ms/op by part, all rounds: ${parts} (argon2 verify alone: ${verifyAloneMs.toFixed(2)}).`);
  console.log('Latencies are autocannon\'s, truncated to whole ms. Goals are informational: a MISS never fails the run.');
}

const teardown = new Teardown();
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // Ctrl-C reaches the whole process group, and tsx passes its own copy on: a second signal must not kill
  // the teardown it would interrupt (that left the database and the bare-fastify child behind).
  process.on(signal, () => {
    if (interrupted) return log(`${signal}: already tearing down`);
    interrupted = true;
    log(`${signal}: tearing down`);
    void teardown.run().finally(() => process.exit(130));
  });
}

try {
  await main(teardown);
} catch (error) {
  if (!interrupted) {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  }
} finally {
  await teardown.run();
}
