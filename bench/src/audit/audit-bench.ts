import { randomBytes, randomUUID } from 'node:crypto';
import { projectionNames, streams, type AuditFilter, type EventMetadata } from '@portcullis/contracts';
import {
  createDatabasePool,
  migrate,
  PostgresEventStore,
  PostgresInTableChain,
  PostgresProjectionTarget,
  sql,
  verifyChain,
  type PostgresProjection,
  type StreamWrite,
  protectPersonalData,
} from '@portcullis/platform';
import { searchAudit } from '../../../services/api/src/audit/audit-search.ts';
import { auditIndexProjection } from '../../../services/projector/src/audit/audit-index.projection.ts';
import { identityProjection } from '../../../services/projector/src/identity/identity.projection.ts';
import { organizationsProjection } from '../../../services/projector/src/organization/organizations.projection.ts';
import { sessionsProjection } from '../../../services/projector/src/session/sessions.projection.ts';
import { buildServices, serviceEntries } from '../../../scripts/build.ts';
import { spawnEntry, tail } from '../lib/children.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { log } from '../lib/progress.ts';
import { deleteKeysWithPrefix, redisReachable } from '../lib/redis-keys.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';

const HASH = '$argon2id$v=19$m=19456,t=2,p=1$YmVuY2hzYWx0YmVuY2g$YmVuY2hoYXNoYmVuY2hoYXNoYmVuY2hoYXNo';
const USERS_PER_APPEND = 100;

/** One user's history as the api writes it: sign-up, a session, failed sign-ins from elsewhere, an update, an organization. */
function userHistory(n: number, at: Date): { writes: StreamWrite[]; userId: string; organizationId: string; events: number } {
  const userId = randomUUID();
  const organizationId = randomUUID();
  const email = `audit-${n}@example.com`;
  const ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  const meta = (actorId: string | null, address: string): EventMetadata => {
    const requestId = randomUUID();
    return { occurredAt: at.toISOString(), actorId, actor: actorId ? { kind: 'user', id: actorId } : { kind: 'anonymous', id: null }, ipAddress: address, userAgent: 'bench', requestId, correlationId: requestId, causationId: null, traceparent: null };
  };
  const event = (type: string, data: Record<string, unknown>, actorId: string | null, address = ip) => ({ type, data, metadata: meta(actorId, address) });
  const sessionId = randomUUID();
  const tokenHash = randomBytes(32).toString('hex');
  const expiresAt = new Date(at.getTime() + 7 * 86400_000).toISOString();
  const guesser = `203.0.${(n >> 8) & 255}.${n & 255}`;
  const writes: StreamWrite[] = [
    { streamId: streams.email(email), expectedVersion: 'no_stream', events: [event('email.reserved.v1', { email, userId }, userId)] },
    {
      streamId: streams.user(userId),
      expectedVersion: 'no_stream',
      events: [
        event('user.registered.v1', { userId, email, name: `User ${n}`, image: null, emailVerified: false }, userId),
        event('user.credential_account_created.v1', { userId, accountId: randomUUID(), passwordHash: HASH }, userId),
        event('user.updated.v1', { userId, name: `User ${n} renamed` }, userId),
      ],
    },
    {
      streamId: streams.session(sessionId),
      expectedVersion: 'no_stream',
      events: [event('session.created.v2', { sessionId, userId, tokenHash, expiresAt, ipAddress: ip, userAgent: 'bench', rememberMe: true, method: 'email-password' }, userId)],
    },
    { streamId: streams.userSessions(userId), expectedVersion: 'no_stream', events: [event('session_index.session_opened.v1', { userId, sessionId, tokenHash, expiresAt }, userId)] },
    {
      streamId: streams.signIn(email),
      expectedVersion: 'no_stream',
      events: [0, 1].map(() => event('credentials.sign_in_failed.v1', { email, userId, reason: 'invalid_password' }, null, guesser)),
    },
    { streamId: streams.organizationSlug(`org-${n}`), expectedVersion: 'no_stream', events: [event('organization.slug_reserved.v1', { slug: `org-${n}`, organizationId }, userId)] },
    {
      streamId: streams.organization(organizationId),
      expectedVersion: 'no_stream',
      events: [
        event('organization.created.v1', { organizationId, name: `Org ${n}`, slug: `org-${n}`, logo: null, metadata: null, createdByUserId: userId }, userId),
        event('organization.member_added.v1', { organizationId, memberId: randomUUID(), userId, role: 'owner', teamId: null, via: 'creator' }, userId),
      ],
    },
    { streamId: streams.userOrganizations(userId), expectedVersion: 'no_stream', events: [event('organization_index.joined.v1', { userId, organizationId }, userId)] },
  ];
  return { writes, userId, organizationId, events: writes.reduce((sum, w) => sum + w.events.length, 0) };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * Issue 25's figures on a large log written straight to the store as the api writes it (a user's sign-up,
 * session, failed sign-ins, update and organization; 12 events each, with the hash chain): the append
 * rate, every projection rebuilt from the log (events/s; the session cache where Redis is reachable),
 * `audit verify`'s walk, and filtered audit search pages (p50 and p99 of the query, in process).
 */
export async function runAudit(teardown: Teardown): Promise<string> {
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  await migrate(database.url);
  const pool = await createDatabasePool(database.url, { maximumPoolSize: 4, asynchronousCommit: true });
  teardown.add('close the audit bench pool', () => pool.end());
  // Personal data encrypted as the api appends it, and opened by every read, replays included.
  const secret = randomBytes(32).toString('base64url');
  const protectedLog = await protectPersonalData(new PostgresEventStore({ databaseUrl: database.url, maximumPoolSize: 4 }), {
    databaseUrl: database.url,
    secrets: secret,
    pool,
  });
  const store = protectedLog.store;
  teardown.add('close the audit bench store', async () => {
    await store.close();
    await protectedLog.close();
  });

  const wanted = settings.auditEvents;
  const users: Array<{ userId: string; organizationId: string }> = [];
  let written = 0;
  const start = new Date(Date.now() - 30 * 86400_000);
  const appendStarted = performance.now();
  log(`audit: writing ${wanted} events`);
  for (let n = 0; written < wanted; ) {
    const writes: StreamWrite[] = [];
    for (let i = 0; i < USERS_PER_APPEND && written < wanted; i += 1, n += 1) {
      const history = userHistory(n, new Date(start.getTime() + n * 1000));
      writes.push(...history.writes);
      users.push(history);
      written += history.events;
    }
    await store.append(writes);
    if (users.length % 10_000 < USERS_PER_APPEND) log(`audit: ${written} events written`);
  }
  const appendSeconds = (performance.now() - appendStarted) / 1000;
  const head = await store.headPosition();
  // A log at rest, as a rebuild meets one written over weeks: vacuumed, its rows' hint bits set. Read
  // straight after a bulk write, the first replay would also write every page of the log (setting them).
  log('audit: vacuuming the log');
  await pool.query(sql.unsafe`VACUUM (ANALYZE) events`);
  await pool.query(sql.unsafe`VACUUM (ANALYZE) data_key`);

  const rebuilds: string[] = [];
  const projections: PostgresProjection[] = [auditIndexProjection, identityProjection, sessionsProjection, organizationsProjection];
  await buildServices();
  // Postgres alone, the default batch size: nothing the caller's shell sets for these.
  const rebuildEnv: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', SMTP_URL: 'smtp://mail.invalid:25', LOG_LEVEL: 'warn', DATABASE_URL: database.url, AUTH_SECRET: secret };
  for (const name of ['REDIS_URL', 'REDIS_KEY_PREFIX', 'PROJECTOR_REBUILD_BATCH_SIZE']) delete rebuildEnv[name];
  // As an operator rebuilds: the built `rebuild-projection` in a process of its own, which times itself
  // from the empty shadow to the swap (this process's heap, grown by the writing above, stays out of it).
  const timedRebuild = async (name: string, env: NodeJS.ProcessEnv): Promise<number> => {
    log(`audit: rebuilding ${name}`);
    const rebuild = spawnEntry(`rebuild ${name}`, serviceEntries.rebuildProjection.built, env, { args: [name], profiled: true });
    teardown.add(`stop the ${name} rebuild`, () => rebuild.stop());
    const { code } = await rebuild.exited;
    const seconds = Number(/rebuilt to position \d+ in ([\d.]+) s/.exec(rebuild.output())?.[1]);
    if (code !== 0 || !Number.isFinite(seconds)) throw new Error(`rebuild-projection ${name} failed (exit ${code}):\n${tail(rebuild.output())}`);
    return seconds;
  };
  const rebuildRow = (name: string, seconds: number): string => `| ${name} | ${head} | ${seconds.toFixed(1)} | ${Math.round(head / seconds)} |`;
  for (const projection of projections) {
    // The live checkpoint the rebuilt copy takes over (no projector has run here to create it).
    await new PostgresProjectionTarget(pool, projection).readCheckpoint();
    rebuilds.push(rebuildRow(projection.name, await timedRebuild(projection.name, rebuildEnv)));
  }
  // The session cache is the one read model in Redis: rebuilt into a new generation, then pointed at.
  if (await redisReachable(settings.redisUrl)) {
    const keyPrefix = `bench:${randomBytes(4).toString('hex')}:audit:`;
    teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
    const seconds = await timedRebuild(projectionNames.sessionCache, { ...rebuildEnv, REDIS_URL: settings.redisUrl, REDIS_KEY_PREFIX: keyPrefix });
    rebuilds.push(rebuildRow(`${projectionNames.sessionCache} (Redis)`, seconds));
  } else {
    rebuilds.push(`| ${projectionNames.sessionCache} (Redis) | | skipped: Redis at ${settings.redisUrl} is not reachable | |`);
  }

  log('audit: verifying the chain');
  const verifyStarted = performance.now();
  const verdict = await verifyChain(pool);
  const verifySeconds = (performance.now() - verifyStarted) / 1000;

  const reads = { db: pool, store, chain: new PostgresInTableChain(pool), personalData: protectedLog.personalData };
  const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
  // Windows holding a thirtieth of the log each (a day of a month's log), anywhere in it, by recorded time.
  const windows: Array<{ from: string; to: string }> = [];
  for (let i = 0; i < 50; i += 1) {
    const first = 1 + Math.floor(Math.random() * (head - head / 30));
    const times = (await pool.anyFirst(sql.unsafe`
      SELECT recorded_at FROM events WHERE position IN (${first}, ${first + Math.floor(head / 30)}) ORDER BY position`)) as readonly number[];
    windows.push({ from: new Date(times[0]!).toISOString(), to: new Date(times[1]!).toISOString() });
  }
  const filters: Array<[string, () => AuditFilter]> = [
    ['user, newest', () => ({ user: pick(users).userId, order: 'newest' })],
    ['organization, oldest', () => ({ organization: pick(users).organizationId, order: 'oldest' })],
    ['actor + type prefix', () => ({ actor: pick(users).userId, typePrefix: 'user.', order: 'newest' })],
    ['CIDR /24, newest', () => ({ ip: `203.0.${Math.floor(Math.random() * 256)}.0/24`, order: 'newest' })],
    ['type, newest', () => ({ type: 'credentials.sign_in_failed.v1', order: 'newest' })],
    ['type prefix, oldest, cursor mid-log', () => ({ typePrefix: 'organization.', order: 'oldest', cursor: Math.floor(Math.random() * head) })],
    ['time window (a thirtieth of the log)', () => ({ ...pick(windows), order: 'newest' })],
    ['no filter, newest', () => ({ order: 'newest' })],
  ];
  const rows: string[] = [];
  for (const [label, filter] of filters) {
    for (let i = 0; i < 20; i += 1) await searchAudit(reads, filter(), 50);
    const times: number[] = [];
    for (let i = 0; i < settings.auditQueries; i += 1) {
      const query = filter();
      const started = performance.now();
      await searchAudit(reads, query, 50);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const p99 = percentile(times, 99);
    rows.push(`| ${label} | ${percentile(times, 50).toFixed(1)} | ${p99.toFixed(1)} | ${p99 < 50 ? 'ok' : 'MISS'} |`);
  }

  return [
    `## audit (issue 25): a log of ${head} events`,
    '',
    `Written straight to the store in appends of ${USERS_PER_APPEND} users: ${Math.round(head / appendSeconds)} events/s with the hash chain; then vacuumed, as a log at rest is, before the rebuilds.`,
    `\`audit verify\`: ${verdict.ok ? 'ok' : `FAILED at ${JSON.stringify(verdict.failure)}`}, ${Math.round(head / verifySeconds)} events/s.`,
    '',
    '| projection rebuilt aside | events | seconds | events/s (goal ≥ 50,000) |',
    '|---|---|---|---|',
    ...rebuilds,
    '',
    `| audit search, page of 50 (${settings.auditQueries} queries each) | p50 ms | p99 ms | p99 < 50 ms |`,
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}
