import { randomBytes } from 'node:crypto';
import { hashToken } from '@portcullis/platform';
import { AuthClient, bearerHeader, cookieHeader } from '../lib/auth-client.ts';
import { pickFreePort } from '@portcullis/platform/free-port';
import { answersOk, spawnEntry, tail, waitUntil, type Child } from '../lib/children.ts';
import { CostMeter, type Cost, type CostSources } from '../lib/cost-meter.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { runLoad, signInLoad, type LoadFigures, type LoadOptions } from '../lib/load.ts';
import { startDeployment, type Deployment } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import { deleteKeysWithPrefix, redisReachable, sessionIsCached } from '../lib/redis-keys.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';
import { measureArgon2, type Argon2Figures } from './argon2.ts';
import { readsReport } from './reads-report.ts';

/**
 * The read side's figures (issue 19's "performance must not regress"): the bare-fastify ceiling, get-session
 * by cookie and bearer without and with Redis, and sign-in against the machine's argon2id ceiling.
 */

export interface Measured {
  readonly figures: LoadFigures;
  readonly cost: Cost;
}

export interface SessionFigures {
  readonly cookie: Measured;
  readonly bearer: Measured;
  readonly bearerNoRefresh?: Measured;
}

export interface SignInFigures {
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

class ReadBench {
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
    const port = await pickFreePort();
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
      const { url: redisUrl, keyPrefix } = options.redis;
      const tokenHash = hashToken(signedToken.slice(0, signedToken.lastIndexOf('.')));
      // Measure the cache-hit path only once the projection has put this session in Redis.
      await waitUntil(() => sessionIsCached({ redisUrl, keyPrefix, databaseUrl: this.databaseUrl, tokenHash }), {
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
    const load = signInLoad(deployment.baseUrl, this.signInUsers, { connections: settings.signInConnections, durationS: settings.durationS });
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
      rounds.push(await this.measure(`sign-in ${label} over ${this.signInUsers.length} users (round ${round} of ${settings.signInRounds})`, sources, load));
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


/** The ceiling, get-session without and with Redis, and sign-in (or sign-in alone); its report's lines. */
export async function runReads(teardown: Teardown, signInOnly: boolean): Promise<string> {
  const haveRedis = await redisReachable(settings.redisUrl);
  if (!haveRedis) log(`Redis at ${settings.redisUrl} is not reachable: the with-Redis variants are skipped`);

  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  log(`database ${database.name}`);
  const meter = await CostMeter.open({ adminUrl: settings.adminUrl, databaseName: database.name, redisUrl: haveRedis ? settings.redisUrl : null });
  teardown.add('close cost meter', () => meter.close());
  const bench = new ReadBench(teardown, meter, database.url);

  if (signInOnly) {
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
    return readsReport({ ceilings: [], signIn: only.signIn!, signInLabel: haveRedis ? 'Redis' : 'no Redis' });
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
  let withRedis: Awaited<ReturnType<ReadBench['phase']>> | undefined;
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

  return readsReport({ ceilings, withoutRedis: withoutRedis.sessions, withRedis: withRedis?.sessions, signIn, signInLabel: haveRedis ? 'Redis' : 'no Redis' });
}

