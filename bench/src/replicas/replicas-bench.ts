import { randomBytes } from 'node:crypto';
import { sessionReadModelNames } from '@portcullis/contracts';
import { DEFAULT_ARGON2ID_COST, hashPassword, PostgresEventStore } from '@portcullis/platform';
import { pickFreePort } from '@portcullis/platform/free-port';
import { answersOk, spawnEntry, waitUntil, type Child } from '../lib/children.ts';
import { percentiles, runClosedLoop, type Operation } from '../lib/closed-loop.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { expectOk, HttpTarget, type HttpSession } from '../lib/http-session.ts';
import { runLoad, type LoadFigures } from '../lib/load.ts';
import { appendSignedUpUsers } from '../lib/log-prefill.ts';
import { startDeployment, waitForProjections } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import { deleteKeysWithPrefix } from '../lib/redis-keys.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';
import { reportChildLogs } from '../writes/write-bench.ts';
import { ENDING_WATCH_INTERVAL_MS, replicasReport, type EndingSeen, type Takeover } from './replicas-report.ts';

const ENDING_WATCH_LIMIT_MS = 10_000;
const PROXY_ENTRY = 'bench/src/replicas/proxy-process.ts';

export interface ReplicaFigures {
  readonly getSession: {
    readonly oneApi: LoadFigures;
    /** Both apis loaded at once, each directly with half the connections: what two replicas serve without the proxy's hop. */
    readonly bothDirect: readonly LoadFigures[];
    readonly proxy: LoadFigures;
    readonly sharePerApi: readonly number[];
  };
  readonly endings: readonly EndingSeen[];
  readonly takeover: Takeover;
}

/**
 * Several replicas (issue 46): two api processes behind a round-robin proxy (the one the system test uses),
 * two projectors and two mailers, one Postgres and one Redis. Measures get-session through the proxy beside
 * one api alone; sign-outs through the proxy, each watched on both apis until both answer no session; and a
 * projector killed (SIGKILL) under sign-in load, until its standby holds its projections and has caught up.
 */
export async function runReplicas(teardown: Teardown): Promise<string> {
  const runId = randomBytes(4).toString('hex');
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  const keyPrefix = `bench:${runId}:replicas:`;
  teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
  const serverApiKey = randomBytes(24).toString('hex');
  const proxyPort = await pickFreePort();
  const publicUrl = `http://127.0.0.1:${proxyPort}`;

  log(`replicas: starting api 1 + projector 1 behind ${publicUrl} on ${database.name}`);
  const deployment = await startDeployment({
    databaseUrl: database.url,
    secret: randomBytes(32).toString('hex'),
    redis: { url: settings.redisUrl, keyPrefix },
    rateLimit: settings.rateLimit,
    serverApiKey,
    proxy: { publicUrl, trustedProxies: '127.0.0.1' },
  });
  teardown.add('stop Portcullis (replicas)', () => deployment.stop());
  const apiB = await deployment.startAnotherApi();
  const standby = deployment.startWorker('projector');
  const mailers = [deployment.startWorker('mailer'), deployment.startWorker('mailer')];
  const proxy = spawnEntry('proxy', PROXY_ENTRY, process.env, { args: [String(proxyPort), deployment.baseUrl, apiB.baseUrl] });
  teardown.add('stop the proxy (replicas)', () => proxy.stop());
  const children = [deployment.api, apiB.child, deployment.projector, standby, ...mailers, proxy];
  await waitUntil(() => answersOk(`${publicUrl}/readyz`), { what: `the proxy at ${publicUrl}`, timeoutMs: 30_000, children });
  const operator = { 'x-api-key': serverApiKey };
  await waitUntil(async () => (await registered(deployment.baseUrl, operator)).length === 6, {
    what: 'two apis, two projectors and two mailers in the process registry',
    timeoutMs: 60_000,
    children,
  });

  const store = new PostgresEventStore({ databaseUrl: database.url, maximumPoolSize: 2 });
  teardown.add('close the bench event store (replicas)', () => store.close());
  const password = `bench-password-${runId}`;
  log(`replicas: writing ${settings.replicaEndings} users with a session each to the log, and signing up ${settings.signInUsers} to sign in`);
  const ended = await appendSignedUpUsers(store, { count: settings.replicaEndings, label: `${runId}-ended`, passwordHash: await hashPassword(password, DEFAULT_ARGON2ID_COST), withSessions: true });
  await waitForProjections(deployment, 5 * 60_000);

  const proxied = new HttpTarget('proxy', `${publicUrl}/api/auth`);
  const apis = [new HttpTarget('api 1', deployment.authUrl), new HttpTarget('api 2', apiB.authUrl)];
  teardown.add('close api connections (replicas)', async () => {
    for (const target of [proxied, ...apis]) target.close();
  });
  // Signed up over HTTP: an address is found by its keyed name, which only the api writes.
  const signers = Array.from({ length: settings.signInUsers }, (_, n) => ({ name: `Signer ${n}`, email: `${runId}-signer-${n}@example.com`, password }));
  const tokens: string[] = [];
  for (const signer of signers) tokens.push(expectOk<{ token: string }>(await proxied.session().post('/sign-up/email', signer), 'sign-up').token);

  const getSession = await measureGetSession(deployment.baseUrl, publicUrl, apiB.baseUrl, tokens[0]!, operator);
  const endings = await watchEndings(proxied, apis, ended.map((user) => user.token!));
  const takeover = await killTheHolder({
    opsUrl: deployment.baseUrl,
    operator,
    holder: deployment.projector,
    standby,
    signIns: signers.map(({ email }) => ({ email, password })),
    proxied,
    store,
  });
  reportChildLogs(children);
  return replicasReport({ getSession, endings, takeover });
}

async function measureGetSession(
  apiUrl: string,
  proxyUrl: string,
  otherApiUrl: string,
  token: string,
  operator: Record<string, string>,
): Promise<ReplicaFigures['getSession']> {
  const headers = { authorization: `Bearer ${token}` };
  const load = (url: string, durationS: number, connections = settings.connections): Promise<LoadFigures> =>
    runLoad({ url: `${url}/api/auth/get-session`, connections, durationS, headers });
  const both = (durationS: number): Promise<LoadFigures[]> =>
    Promise.all([apiUrl, otherApiUrl].map((url) => load(url, durationS, Math.ceil(settings.connections / 2))));
  log(`replicas: get-session warm-up, ${settings.sessionWarmupS} s through the proxy (both apis)`);
  await load(proxyUrl, settings.sessionWarmupS);
  log(`replicas: get-session on api 1 alone, on both directly, then through the proxy, ${settings.durationS} s each`);
  await load(apiUrl, settings.warmupS);
  const oneApi = await load(apiUrl, settings.durationS);
  await both(settings.warmupS);
  const bothDirect = await both(settings.durationS);
  const before = await Promise.all([apiUrl, otherApiUrl].map((url) => getSessionsServed(url, operator)));
  await load(proxyUrl, settings.warmupS);
  const proxy = await load(proxyUrl, settings.durationS);
  const after = await Promise.all([apiUrl, otherApiUrl].map((url) => getSessionsServed(url, operator)));
  const served = after.map((n, i) => n - before[i]!);
  const total = served.reduce((sum, n) => sum + n, 0);
  return { oneApi, bothDirect, proxy, sharePerApi: served.map((n) => (total === 0 ? Number.NaN : n / total)) };
}

/** get-session requests an api has answered, from its /metrics. */
async function getSessionsServed(apiUrl: string, operator: Record<string, string>): Promise<number> {
  const response = await fetch(`${apiUrl}/metrics`, { headers: operator });
  const text = await response.text();
  if (!response.ok) throw new Error(`${apiUrl}/metrics answered ${response.status}`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('http_server_request_duration_count{') && line.includes('http_route="/api/auth/get-session"')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * Each token held by both apis (a get-session on each first), then signed out through the proxy (the apis
 * take the sign-outs in turn) while both are asked for it every `ENDING_WATCH_INTERVAL_MS`, until both
 * answer null.
 */
async function watchEndings(proxied: HttpTarget, apis: readonly HttpTarget[], tokens: readonly string[]): Promise<EndingSeen[]> {
  log(`replicas: ${tokens.length} sign-outs through the proxy, each watched on both apis`);
  const seen: EndingSeen[] = [];
  for (const [i, token] of tokens.entries()) {
    const onEach = apis.map((api) => api.session().useBearer(token));
    for (const session of onEach) {
      if (!(await answersSession(session))) throw new Error(`${session.target.name} does not answer session ${i} before its sign-out`);
    }
    const sent = performance.now();
    let answeredAt: number | null = null;
    let status = 0;
    const signOut = proxied
      .session()
      .useBearer(token)
      .post('/sign-out', {})
      .then((answer) => {
        answeredAt = performance.now();
        status = answer.status;
      });
    let staleAnswers = 0;
    const visibleMs = await Promise.all(
      onEach.map(async (session) => {
        while (performance.now() - sent < ENDING_WATCH_LIMIT_MS) {
          const asked = performance.now();
          const answeredBeforeAsking = answeredAt !== null;
          if (!(await answersSession(session))) return performance.now() - sent;
          if (answeredBeforeAsking) staleAnswers += 1;
          const pause = asked + ENDING_WATCH_INTERVAL_MS - performance.now();
          if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
        }
        return Number.NaN;
      }),
    );
    await signOut;
    seen.push({ everyApiMs: Math.max(...visibleMs), signOutMs: answeredAt! - sent, staleAnswers, signOutStatus: status, timedOut: visibleMs.some(Number.isNaN) });
  }
  return seen;
}

async function answersSession(session: HttpSession): Promise<boolean> {
  const answer = await session.get('/get-session');
  if (answer.status !== 200) throw new Error(`get-session answered ${answer.status}: ${answer.body.slice(0, 200)}`);
  return answer.json() !== null;
}

interface Registered {
  readonly service: string;
  readonly pid: number;
  readonly up: boolean;
}

async function registered(opsUrl: string, operator: Record<string, string>): Promise<Registered[]> {
  const response = await fetch(`${opsUrl}/ops/overview`, { headers: operator });
  if (!response.ok) throw new Error(`GET /ops/overview answered ${response.status}`);
  const body = (await response.json()) as { health: { processes: Registered[] } };
  return body.health.processes.filter((p) => p.up);
}

interface ProjectionsView {
  readonly head: number;
  readonly projections: readonly { readonly name: string; readonly checkpoint: number | null; readonly holder: { readonly applicationName: string } | null }[];
}

async function projectionsView(opsUrl: string, operator: Record<string, string>): Promise<ProjectionsView> {
  const response = await fetch(`${opsUrl}/ops/projections`, { headers: operator });
  if (!response.ok) throw new Error(`GET /ops/projections answered ${response.status}`);
  return (await response.json()) as ProjectionsView;
}

const holderPid = (holder: { readonly applicationName: string } | null): number | null =>
  Number(/^portcullis-projector pid (\d+)$/.exec(holder?.applicationName ?? '')?.[1] ?? Number.NaN) || null;

/**
 * Sign-ins through the proxy from `settings.signInConnections` clients; after the warm-up and half the window,
 * the projector holding the projections is killed (SIGKILL). Takeover: until the standby holds every
 * projection the dead one held; caught up: until the session read models among them have applied the log as it
 * stood at the kill (the others may trail it by a second when no event concerns them).
 */
async function killTheHolder(options: {
  opsUrl: string;
  operator: Record<string, string>;
  holder: Child;
  standby: Child;
  signIns: readonly { email: string; password: string }[];
  proxied: HttpTarget;
  store: PostgresEventStore;
}): Promise<Takeover> {
  const before = await projectionsView(options.opsUrl, options.operator);
  const held = before.projections.filter((p) => holderPid(p.holder) === options.holder.pid).map((p) => p.name);
  if (held.length === 0) throw new Error(`projector 1 (pid ${options.holder.pid}) holds nothing: ${JSON.stringify(before.projections.map((p) => [p.name, p.holder]))}`);
  let next = 0;
  const latencies: { at: number; ms: number }[] = [];
  const operations: Operation[] = Array.from({ length: settings.signInConnections }, () => async () => {
    const user = options.signIns[next++ % options.signIns.length]!;
    const startedAt = performance.now();
    const answer = await options.proxied.session().post('/sign-in/email', user);
    latencies.push({ at: startedAt, ms: performance.now() - startedAt });
    return { ok: answer.status === 200, status: String(answer.status) };
  });
  log(`replicas: sign-ins through the proxy for ${settings.warmupS + settings.durationS} s, projector 1 (holding ${held.join(', ')}) killed halfway`);
  const loop = runClosedLoop({ operations, warmupS: settings.warmupS, durationS: settings.durationS });
  await new Promise((resolve) => setTimeout(resolve, (settings.warmupS + settings.durationS / 2) * 1000));
  const headAtKill = await options.store.headPosition();
  const killedAt = performance.now();
  process.kill(options.holder.pid, 'SIGKILL');
  let takeoverMs = Number.NaN;
  let caughtUpMs = Number.NaN;
  await waitUntil(
    async () => {
      const view = await projectionsView(options.opsUrl, options.operator);
      const mine = view.projections.filter((p) => held.includes(p.name));
      if (Number.isNaN(takeoverMs) && mine.every((p) => holderPid(p.holder) === options.standby.pid)) takeoverMs = performance.now() - killedAt;
      // The session read models: what a sign-in waits for, and whose checkpoints never trail the log for long.
      const sessions = mine.filter((p) => sessionReadModelNames.has(p.name));
      if (!Number.isNaN(takeoverMs) && sessions.every((p) => (p.checkpoint ?? 0) >= headAtKill)) caughtUpMs = performance.now() - killedAt;
      return !Number.isNaN(caughtUpMs);
    },
    { what: `projector 2 to hold ${held.join(', ')} and reach position ${headAtKill}`, timeoutMs: 60_000, intervalMs: 10, children: [options.standby] },
  );
  const figures = await loop;
  const around = (from: number, to: number): number[] => latencies.filter((l) => l.at >= from && l.at < to).map((l) => l.ms);
  const windowMs = 2_000;
  return {
    projections: held.length,
    takeoverMs,
    caughtUpMs,
    signIns: figures.ok,
    failed: figures.failed,
    signInsPerSecond: figures.opsPerSecond,
    before: percentiles(around(killedAt - windowMs, killedAt)),
    after: percentiles(around(killedAt, killedAt + windowMs)),
  };
}
