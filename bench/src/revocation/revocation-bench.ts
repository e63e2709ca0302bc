import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { DEFAULT_ARGON2ID_COST, hashPassword, PostgresEventStore } from '@portcullis/platform';
import { waitUntil } from '../lib/children.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { HttpTarget, type HttpSession } from '../lib/http-session.ts';
import { appendSignedUpUsers } from '../lib/log-prefill.ts';
import { startDeployment, waitForProjections } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import { deleteKeysWithPrefix } from '../lib/redis-keys.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';
import { reportChildLogs } from '../writes/write-bench.ts';
import { revocationReport } from './revocation-report.ts';

/** One sign-out on api A, as api B saw it. */
export interface Revocation {
  /** From sending the sign-out to A until B first answered the token with null. */
  readonly visibleMs: number;
  /** From sending the sign-out until A answered it. */
  readonly signOutMs: number;
  /** get-session requests sent to B after A had answered the sign-out that still answered the session. */
  readonly answeredAfterSignOut: number;
  /** The last of those: how long after A's answer it was sent. */
  readonly lastAnsweredAfterMs: number;
  readonly signOutStatus: number;
  readonly timedOut: boolean;
  /** B's invalidation subscriber was killed while this sign-out was in flight. */
  readonly channelKilled: boolean;
}

const POLL_LIMIT_MS = 10_000;
const SUBSCRIBER_NAME = 'portcullis-api-invalidations-';

/**
 * Issue 19: revocation seen by a second api process. Two api processes (A and B) and one projector on the
 * same database and Redis, each api with its in-process session cache (the default). Sessions are written to
 * the log as sign-up opens them; B holds each in its cache (a get-session through B first); then, one at a
 * time, a sign-out goes to A while B is asked for the same token back to back until it answers null. Once,
 * in the middle, B's invalidation subscriber connection is killed (CLIENT KILL) right after the sign-out is
 * sent.
 */
export async function runRevocation(teardown: Teardown): Promise<string> {
  const runId = randomBytes(4).toString('hex');
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  const keyPrefix = `bench:${runId}:revocation:`;
  teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1 });
  teardown.add('close the Redis admin connection', async () => redis.disconnect());

  log(`revocation: starting api A + projector on ${database.name}`);
  const deployment = await startDeployment({
    databaseUrl: database.url,
    secret: randomBytes(32).toString('hex'),
    redis: { url: settings.redisUrl, keyPrefix },
    rateLimit: settings.rateLimit,
  });
  teardown.add('stop Portcullis (revocation)', () => deployment.stop());
  // The round-trip channel is `<session key prefix>round-trip:<instance>`, the session key prefix under ours.
  const instancesOf = async (): Promise<string[]> =>
    ((await redis.call('PUBSUB', 'CHANNELS', `${keyPrefix}*round-trip:*`)) as string[]).map((channel) => channel.slice(channel.lastIndexOf(':') + 1));
  await waitUntil(async () => (await instancesOf()).length === 1, { what: "api A's invalidation subscriber", timeoutMs: 30_000, children: [deployment.api] });
  const [instanceA] = await instancesOf();
  log('revocation: starting api B');
  const apiB = await deployment.startAnotherApi();
  // Each api's subscriber listens on a round-trip channel named after its cache instance, and names its
  // connection after the same instance: the channel that appeared with B names B's connection.
  await waitUntil(async () => (await instancesOf()).length === 2, { what: "api B's invalidation subscriber", timeoutMs: 30_000, children: [apiB.child] });
  const instanceB = (await instancesOf()).find((instance) => instance !== instanceA)!;

  const store = new PostgresEventStore({ databaseUrl: database.url, maximumPoolSize: 2 });
  teardown.add('close the bench event store (revocation)', () => store.close());
  log(`revocation: writing ${settings.revocations} signed-up users with a session each to the log`);
  const users = await appendSignedUpUsers(store, {
    count: settings.revocations,
    label: `${runId}-revoked`,
    passwordHash: await hashPassword(`bench-password-${runId}`, DEFAULT_ARGON2ID_COST),
    withSessions: true,
  });
  await waitForProjections(deployment, 5 * 60_000);
  const targetA = new HttpTarget('api A', deployment.authUrl);
  const targetB = new HttpTarget('api B', apiB.authUrl);
  teardown.add('close api connections (revocation)', async () => {
    targetA.close();
    targetB.close();
  });

  log(`revocation: warming api B's in-process cache with a get-session per token`);
  const onB = users.map((user) => targetB.session().useBearer(user.token!));
  for (const [i, session] of onB.entries()) {
    if (!(await answersSession(session))) throw new Error(`api B does not answer session ${i} before its sign-out`);
  }

  const killAt = Math.floor(users.length / 2);
  const revocations: Revocation[] = [];
  let killedClients = 0;
  log(`revocation: ${users.length} sign-outs on A, each polled on B until it answers null`);
  for (const [i, user] of users.entries()) {
    // B holds the session when the sign-out is sent (a kill, or an eviction, may have emptied its cache).
    if (!(await answersSession(onB[i]!))) throw new Error(`api B does not answer session ${i} before its sign-out`);
    const kill = i === killAt ? () => killSubscriber(redis, `${SUBSCRIBER_NAME}${instanceB}-`) : null;
    const revocation = await revokeAndWatch(targetA.session().useBearer(user.token!), onB[i]!, kill);
    if (kill) killedClients = revocation.killed;
    revocations.push(revocation.figures);
  }
  reportChildLogs([deployment.api, apiB.child, deployment.projector]);
  return revocationReport(revocations, killedClients);
}

async function answersSession(session: HttpSession): Promise<boolean> {
  const answer = await session.get('/get-session');
  if (answer.status !== 200) throw new Error(`get-session answered ${answer.status}: ${answer.body.slice(0, 200)}`);
  return answer.json() !== null;
}

/** Kills every pub/sub connection whose name starts with `namePrefix`; answers how many. */
async function killSubscriber(redis: Redis, namePrefix: string): Promise<number> {
  const clients = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
  const ids = clients
    .split('\n')
    .filter((line) => new RegExp(`(?:^|\\s)name=${namePrefix}\\S*`).test(line))
    .map((line) => /(?:^|\s)id=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined);
  for (const id of ids) await redis.call('CLIENT', 'KILL', 'ID', id);
  return ids.length;
}

async function revokeAndWatch(
  onA: HttpSession,
  onB: HttpSession,
  kill: (() => Promise<number>) | null,
): Promise<{ figures: Revocation; killed: number }> {
  const sent = performance.now();
  let signOutAnsweredAt: number | undefined;
  const signOut = onA.post('/sign-out', {}).then((answer) => {
    signOutAnsweredAt = performance.now();
    return answer;
  });
  const killing = kill ? kill() : Promise.resolve(0);
  let answeredAfterSignOut = 0;
  let lastAnsweredAfterMs = Number.NaN;
  let visibleAt: number | undefined;
  while (performance.now() - sent < POLL_LIMIT_MS) {
    const asked = performance.now();
    const answeredBeforeAsking = signOutAnsweredAt !== undefined && signOutAnsweredAt <= asked;
    if (!(await answersSession(onB))) {
      visibleAt = performance.now();
      break;
    }
    if (answeredBeforeAsking) {
      answeredAfterSignOut += 1;
      lastAnsweredAfterMs = asked - signOutAnsweredAt!;
    }
  }
  const answer = await signOut;
  const killed = await killing;
  return {
    killed,
    figures: {
      visibleMs: (visibleAt ?? Number.NaN) - sent,
      signOutMs: signOutAnsweredAt! - sent,
      answeredAfterSignOut,
      lastAnsweredAfterMs,
      signOutStatus: answer.status,
      timedOut: visibleAt === undefined,
      channelKilled: kill !== null,
    },
  };
}
