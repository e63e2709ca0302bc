import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { DEFAULT_ARGON2ID_COST, hashPassword, parseCacheCheckpoint, parsePointer, PostgresEventStore, sessionCacheLayout, type SessionCacheLayout } from '@portcullis/platform';
import { percentiles, runClosedLoop, type Operation, type Percentiles } from '../lib/closed-loop.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { expectOk, HttpTarget } from '../lib/http-session.ts';
import { appendSignedUpUsers } from '../lib/log-prefill.ts';
import { startDeployment, waitForProjections } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import { deleteKeysWithPrefix } from '../lib/redis-keys.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';
import { reportChildLogs } from '../writes/write-bench.ts';
import { cacheFlushReport } from './cache-flush-report.ts';

/** Reads each client makes with the session a sign-in gave it, before signing in again. */
const READS_PER_SIGN_IN = 3;
/** How long the bench watches for the cache to be whole again, and for the old generation to be gone. */
const WATCH_LIMIT_MS = 120_000;

interface Timed {
  readonly at: number;
  readonly ms: number;
}

export interface CacheFlushFigures {
  readonly keysFlushed: number;
  readonly signIns: { readonly before: Percentiles; readonly after: Percentiles };
  readonly getSession: { readonly before: Percentiles & { readonly perSecond: number }; readonly after: Percentiles & { readonly perSecond: number } };
  /** From the flush until a new generation was served at or past the log's head as it stood at the flush. */
  readonly wholeMs: number;
  /** From the flush until no key of another generation than the served one was left. */
  readonly oldKeysGoneMs: number;
  readonly oldKeysLeft: number;
  /** get-sessions with the token a sign-in had just answered that did not answer its session. */
  readonly wrongAnswers: number;
  readonly failed: number;
  readonly windowS: number;
}

/**
 * The session cache lost under load (issue 46): one api and one projector with Redis, a log of
 * `settings.cacheFlushUsers` users with a session each, and `settings.signInConnections` clients each signing
 * in and reading its new session back. Halfway, every key under the deployment's Redis prefix is deleted in
 * one transaction (what a FLUSHALL or a restart without persistence does to it, without touching the other
 * users of a shared Redis). Measured from outside: sign-in latency before and after, get-session's, until the
 * cache is served whole again, and until nothing of the lost generation is left.
 */
export async function runCacheFlush(teardown: Teardown): Promise<string> {
  const runId = randomBytes(4).toString('hex');
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  const keyPrefix = `bench:${runId}:cache-flush:`;
  teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));

  log(`cache-flush: starting api + projector on ${database.name}`);
  const deployment = await startDeployment({ databaseUrl: database.url, secret: randomBytes(32).toString('hex'), redis: { url: settings.redisUrl, keyPrefix }, rateLimit: settings.rateLimit });
  teardown.add('stop Portcullis (cache-flush)', () => deployment.stop());
  const store = new PostgresEventStore({ databaseUrl: database.url, maximumPoolSize: 2 });
  teardown.add('close the bench event store (cache-flush)', () => store.close());
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1 });
  teardown.add('close the bench Redis connection (cache-flush)', async () => redis.disconnect());
  const layout = sessionCacheLayout(keyPrefix, await logIdOf(database.url));

  const password = `bench-password-${runId}`;
  log(`cache-flush: writing ${settings.cacheFlushUsers} users with a session each to the log`);
  await appendSignedUpUsers(store, { count: settings.cacheFlushUsers, label: `${runId}-held`, passwordHash: await hashPassword(password, DEFAULT_ARGON2ID_COST), withSessions: true });
  await waitForProjections(deployment, 5 * 60_000);

  const target = new HttpTarget('api', deployment.authUrl);
  teardown.add('close api connections (cache-flush)', async () => target.close());
  const signers = Array.from({ length: settings.signInUsers }, (_, n) => ({ name: `Signer ${n}`, email: `${runId}-signer-${n}@example.com`, password }));
  for (const signer of signers) expectOk(await target.session().post('/sign-up/email', signer), 'sign-up');

  const signIns: Timed[] = [];
  const reads: Timed[] = [];
  let wrongAnswers = 0;
  let next = 0;
  const operations: Operation[] = Array.from({ length: settings.signInConnections }, () => async () => {
    const { email } = signers[next++ % signers.length]!;
    const sent = performance.now();
    const signIn = await target.session().post('/sign-in/email', { email, password });
    signIns.push({ at: sent, ms: performance.now() - sent });
    if (signIn.status !== 200) return { ok: false, status: String(signIn.status) };
    const token = signIn.json<{ token: string }>().token;
    const reader = target.session().useBearer(token);
    for (let n = 0; n < READS_PER_SIGN_IN; n += 1) {
      const asked = performance.now();
      const answer = await reader.get('/get-session');
      reads.push({ at: asked, ms: performance.now() - asked });
      if (answer.status !== 200) return { ok: false, status: String(answer.status) };
      if (answer.json<{ session: { token: string } } | null>()?.session.token !== token) wrongAnswers += 1;
    }
    return { ok: true, status: '200' };
  });

  const loop = runClosedLoop({ operations, warmupS: settings.warmupS, durationS: 2 * settings.durationS });
  await new Promise((resolve) => setTimeout(resolve, (settings.warmupS + settings.durationS) * 1000));
  const served = parsePointer(await redis.get(layout.pointerKey)).current;
  if (served === null) throw new Error('no session cache generation was served before the flush');
  const headAtFlush = await store.headPosition();
  const keysFlushed = await flush(redis, keyPrefix);
  const flushedAt = performance.now();
  log(`cache-flush: deleted ${keysFlushed} keys under ${keyPrefix} (generation ${served}, log at ${headAtFlush})`);

  let wholeMs = Number.NaN;
  let oldKeysGoneMs = Number.NaN;
  let oldKeysLeft = Number.NaN;
  const watchStarted = Date.now();
  while (Date.now() - watchStarted < WATCH_LIMIT_MS) {
    const current = parsePointer(await redis.get(layout.pointerKey)).current;
    if (Number.isNaN(wholeMs) && current !== null && current !== served) {
      const checkpoint = parseCacheCheckpoint(await redis.get(layout.generation(current).checkpoint));
      if (checkpoint !== null && checkpoint.position >= headAtFlush) wholeMs = performance.now() - flushedAt;
    }
    if (!Number.isNaN(wholeMs)) {
      oldKeysLeft = await keysOfOtherGenerations(redis, layout, keyPrefix, current);
      if (oldKeysLeft === 0) {
        oldKeysGoneMs = performance.now() - flushedAt;
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const figures = await loop;
  const endAt = flushedAt + settings.durationS * 1000;
  const startAt = flushedAt - settings.durationS * 1000;
  // Before: sent and answered in the window before the flush. After: answered after it (in flight at the
  // flush too: those are the ones a lost cache would keep waiting) and sent in the window after it.
  const within = (list: readonly Timed[], from: number, to: number): number[] =>
    list.filter((t) => (to <= flushedAt ? t.at >= from && t.at + t.ms < to : t.at + t.ms >= from && t.at < to)).map((t) => t.ms);
  const rate = (list: readonly Timed[], from: number, to: number): Percentiles & { perSecond: number } => {
    const values = within(list, from, to);
    return { ...percentiles(values), perSecond: values.length / ((to - from) / 1000) };
  };
  reportChildLogs([deployment.api, deployment.projector]);
  return cacheFlushReport({
    keysFlushed,
    signIns: { before: percentiles(within(signIns, startAt, flushedAt)), after: percentiles(within(signIns, flushedAt, endAt)) },
    getSession: { before: rate(reads, startAt, flushedAt), after: rate(reads, flushedAt, endAt) },
    wholeMs,
    oldKeysGoneMs,
    oldKeysLeft,
    wrongAnswers,
    failed: figures.failed,
    windowS: settings.durationS,
  });
}

async function logIdOf(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>('SELECT id FROM event_log_identity');
    if (!rows[0]) throw new Error('the log has no identity yet');
    return rows[0].id;
  } finally {
    await client.end();
  }
}

/**
 * Every key under `prefix`, found with SCAN and deleted in one MULTI: to the projector and the api that is
 * the moment Redis lost them all. A key written between the SCAN and the MULTI survives, as the writes of a
 * projector that has not yet noticed would after a real FLUSHALL.
 */
async function flush(redis: Redis, prefix: string): Promise<number> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [nextCursor, found] = await redis.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 1000);
    cursor = nextCursor;
    keys.push(...found);
  } while (cursor !== '0');
  const transaction = redis.multi();
  for (let first = 0; first < keys.length; first += 1000) transaction.unlink(...keys.slice(first, first + 1000));
  await transaction.exec();
  return keys.length;
}

/** Keys of this log's session cache that belong to another generation than `current`. */
async function keysOfOtherGenerations(redis: Redis, layout: SessionCacheLayout, prefix: string, current: string | null): Promise<number> {
  const log = layout.logId.replaceAll('-', '').slice(0, 12);
  const tag = `{sc:${log}:`;
  let count = 0;
  let cursor = '0';
  do {
    const [nextCursor, found] = await redis.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 1000);
    cursor = nextCursor;
    for (const key of found) {
      const at = key.indexOf(tag);
      if (at < 0) continue;
      const generation = key.slice(at + tag.length, key.indexOf('}', at));
      if (generation !== current) count += 1;
    }
  } while (cursor !== '0');
  return count;
}
