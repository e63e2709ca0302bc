import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { parseCacheCheckpoint, parsePointer, sessionCacheLayout } from '@portcullis/platform';
import { projectionNames } from '@portcullis/contracts';
import { DEFAULT_PASSWORD, signIn, signUp, uniqueEmail } from '../support/auth.ts';
import { appendBulkHistory, type BulkSession } from '../support/bulk-history.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { spawnService, waitFor, type ServiceProcess } from '../support/processes.ts';
import { startPrivateRedis, redisServerAvailable, type PrivateRedis } from '../support/redis-server.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';
import { PostgresEventStore } from '@portcullis/platform';
import { serviceEntries } from '../../scripts/build.ts';

const PREFIX = 'chaos:';
/** At least 100k events before the chaos starts, so that every replay takes long enough to matter. */
const BULK_USERS = 7200;
const HTTP_USERS = 30;
const HAMMERS = 4;

interface Hammered {
  requests: number;
  /** Every answer that served a revoked token as a session: must stay empty. */
  readonly resurrected: string[];
}

/**
 * Revocation is absolute, whatever happens to projections and caches. Against real processes (two
 * projectors, the api, the mailer) on a log of over 100k events, with a Redis of the test's own: sessions
 * are ended every way the api ends them, and while get-session is hammered with every ended token from
 * several clients, the read models are rebuilt, Redis is flushed and restarted, a projector is killed and
 * another frozen. Not one ended token may be answered as a session, and every live one must answer again
 * once the system is ready.
 */
describe.skipIf(!redisServerAvailable() && process.env.CI !== 'true')('revocation under chaos (real processes, >100k events)', () => {
  let redis: PrivateRedis;
  let system: MailSystem;
  let store: PostgresEventStore;
  let reader: Redis;
  const projectors: ServiceProcess[] = [];
  const live: { label: string; token: string }[] = [];
  const ended: { label: string; token: string }[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    system = await startMailSystem({
      env: {
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: PREFIX,
        AUTH_RESET_PASSWORD_REVOKE_SESSIONS: 'true',
        PROJECTOR_LEASE_MS: '2000',
        AUTH_SESSION_READ_MAX_LAG_MS: '1000',
        AUTH_READ_YOUR_WRITES_TIMEOUT_MS: '2000',
      },
    });
    projectors.push(system.projector, spawnService({ name: 'projector-2', entry: serviceEntries.projector.built, env: { ...system.env } }));
    store = new PostgresEventStore({ databaseUrl: system.env.DATABASE_URL! });
    reader = new Redis(redis.url, { maxRetriesPerRequest: 1, retryStrategy: () => 200 });
    reader.on('error', () => {});
  }, 180_000);

  afterAll(async () => {
    for (const projector of projectors.slice(1)) await projector.stop();
    await system?.stop();
    await store?.close();
    reader?.disconnect();
    await redis?.stop();
  });

  const client = (): HttpClient => new HttpClient(system.authUrl);

  /** get-session as a bearer client: the session answered, or null. */
  async function sessionOf(token: string): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${system.authUrl}/get-session`, { headers: { authorization: `Bearer ${token}` } });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
  }

  /** Every read model, the Redis cache included (a served generation), at the log's head as it is now. */
  async function readyAgain(what: string): Promise<void> {
    const head = await store.headPosition();
    const logId = await store.logId();
    const layout = sessionCacheLayout(PREFIX, logId);
    await waitFor(
      async () => {
        const rows = await system.query<{ name: string; position: string }>('SELECT name, position FROM projection_checkpoints');
        const stored = new Map(rows.map((r) => [r.name, Number(r.position)]));
        const postgres = [projectionNames.identity, projectionNames.sessions, projectionNames.organizations].every((n) => (stored.get(n) ?? 0) >= head);
        const { current } = parsePointer(await reader.get(layout.pointerKey).catch(() => null));
        if (!postgres || current === null) return false;
        const checkpoint = parseCacheCheckpoint(await reader.get(layout.generation(current).checkpoint).catch(() => null));
        // Ready, not merely degraded: Redis answers the api again too.
        return (checkpoint?.position ?? 0) >= head && ((await (await fetch(`${system.baseUrl}/readyz`)).json()) as { status: string }).status === 'ready';
      },
      { timeoutMs: 240_000, intervalMs: 250, message: `every read model back at the head ${head} after ${what}` },
    );
  }

  async function expectEveryLiveSessionAnswers(after: string): Promise<void> {
    for (const { label, token } of live) {
      const { status, body } = await sessionOf(token);
      expect({ after, label, status, answered: body !== null }).toEqual({ after, label, status: 200, answered: true });
    }
  }

  /** Clients asking for every ended token, round and round, until told to stop. */
  function hammer(): { stop(): Promise<Hammered> } {
    const result: Hammered = { requests: 0, resurrected: [] };
    let running = true;
    const loops = Array.from({ length: HAMMERS }, async (_, h) => {
      for (let i = h; running; i += HAMMERS) {
        const { label, token } = ended[i % ended.length]!;
        try {
          const { status, body } = await sessionOf(token);
          result.requests += 1;
          if (status === 200 && body !== null) result.resurrected.push(`${label} answered ${JSON.stringify(body).slice(0, 200)}`);
        } catch {
          // The api refusing a connection is not an answer; it serves nobody either.
        }
      }
    });
    return {
      stop: async () => {
        running = false;
        await Promise.all(loops);
        return result;
      },
    };
  }

  async function rebuild(projection: string): Promise<void> {
    const process = spawnService({ name: `rebuild-${projection}`, entry: serviceEntries.rebuildProjection.built, env: { ...system.env }, args: [projection] });
    const exit = await process.exited;
    expect(exit.code, process.output()).toBe(0);
    expect(process.output()).toMatch(new RegExp(`${projection}: rebuilt to position \\d+`));
  }

  it(
    'never answers an ended session, through rebuilds, a flushed and a restarted Redis, a killed and a frozen projector',
    { timeout: 900_000 },
    async () => {
      const history = await appendBulkHistory(store, { users: BULK_USERS, sessionsPerUser: 4 });
      expect(await store.headPosition()).toBeGreaterThanOrEqual(100_000);
      const sample = (sessions: readonly BulkSession[], count: number): BulkSession[] =>
        Array.from({ length: count }, (_, i) => sessions[Math.floor((i * sessions.length) / count)]!);
      for (const [i, s] of sample(history.revoked, 200).entries()) ended.push({ label: `historical ended #${i}`, token: s.token });
      for (const [i, s] of sample(history.live, 100).entries()) live.push({ label: `historical live #${i}`, token: s.token });
      await readyAgain('the bulk history');

      // Sessions ended every way the api ends them: sign-out, revoke-sessions, a reset that ends them all.
      for (let u = 0; u < HTTP_USERS; u += 1) {
        const email = uniqueEmail(`chaos-${u}`);
        const browser = client();
        const first = await signUp(browser, { email });
        const second = await signIn(client(), { email });
        const way = u % 3;
        if (way === 0) {
          expect((await browser.post('sign-out', {})).status).toBe(200);
          ended.push({ label: `signed out (user ${u})`, token: first.token });
          live.push({ label: `kept (user ${u})`, token: second.token });
        } else if (way === 1) {
          expect((await browser.post('revoke-sessions', {})).status).toBe(200);
          ended.push({ label: `revoke-sessions (user ${u})`, token: first.token }, { label: `revoke-sessions, other (user ${u})`, token: second.token });
        } else {
          expect((await client().post('request-password-reset', { email, redirectTo: '/reset' })).status).toBe(200);
          const link = linkIn(await system.smtp!.waitForMail(email, { subject: /Reset your/ }));
          const resetToken = new URL(link).pathname.split('/').at(-1)!;
          expect((await client().post('reset-password', { token: resetToken, newPassword: `${DEFAULT_PASSWORD} 2` })).status).toBe(200);
          ended.push({ label: `password reset (user ${u})`, token: first.token }, { label: `password reset, other (user ${u})`, token: second.token });
        }
      }
      for (const { label, token } of ended.slice(-HTTP_USERS)) expect({ label, ...(await sessionOf(token)) }).toEqual({ label, status: 200, body: null });
      await expectEveryLiveSessionAnswers('the endings');

      const hammering = hammer();
      const phases: Array<[string, () => Promise<void>]> = [
        ['a rebuild of the session table', () => rebuild(projectionNames.sessions)],
        ['a rebuild of the Redis session cache', () => rebuild(projectionNames.sessionCache)],
        ['FLUSHALL', async () => void (await reader.flushall())],
        ['a Redis restart', () => redis.restart()],
        [
          'SIGKILL of a projector',
          async () => {
            const victim = projectors.shift()!;
            victim.kill('SIGKILL');
            await victim.exited;
            projectors.push(spawnService({ name: `projector-${projectors.length + 2}`, entry: serviceEntries.projector.built, env: { ...system.env } }));
          },
        ],
        [
          'SIGSTOP of a projector for 10 s',
          async () => {
            const frozen = projectors[0]!;
            frozen.kill('SIGSTOP');
            // The freeze itself is what is being survived: it has to last.
            await new Promise((resolve) => setTimeout(resolve, 10_000));
            frozen.kill('SIGCONT');
          },
        ],
      ];
      for (const [what, act] of phases) {
        const startedAt = Date.now();
        await act();
        await readyAgain(what);
        console.info(`[revocation-chaos] ${what}: ready again after ${Date.now() - startedAt} ms`);
        await expectEveryLiveSessionAnswers(what);
      }
      const hammered = await hammering.stop();
      console.info(`[revocation-chaos] ${hammered.requests} get-session requests with ${ended.length} ended tokens`);
      expect(hammered.resurrected).toEqual([]);
      expect(hammered.requests).toBeGreaterThan(ended.length * 5);
    },
  );
});
