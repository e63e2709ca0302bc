import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { streams, UserRoleChanged } from '@portcullis/contracts';
import { DEFAULT_ARGON2ID_COST, hashPassword, PostgresEventStore } from '@portcullis/platform';
import { waitUntil } from '../lib/children.ts';
import { runClosedLoop, describeFailures, type LoopFigures, type Operation } from '../lib/closed-loop.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { expectOk, HttpTarget, type HttpSession } from '../lib/http-session.ts';
import { appendSignedUpUsers } from '../lib/log-prefill.ts';
import { startDeployment, waitForProjections } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import { redisReachable, deleteKeysWithPrefix } from '../lib/redis-keys.ts';
import type { Teardown } from '../lib/teardown.ts';
import { startBetterAuthPeer } from '../peer/better-auth-peer.ts';
import { settings } from '../settings.ts';

const PAGE = 100;
const P99_GOAL_MS = 50;
const PASSWORD = 'bench-admin-password';

/**
 * A search an admin console sends while someone types an address: `<label>-<n>` for a random n of 1 to 3
 * digits matches some hundreds of the users (n, n0-n9, n00-n99...), of which a page of 100 is shown.
 */
function searchPath(label: string): string {
  const digits = 1 + Math.floor(Math.random() * 3);
  const prefix = `${label}-${Math.floor(Math.random() * 10 ** digits)}`;
  return `/admin/list-users?searchValue=${encodeURIComponent(prefix)}&searchField=email&searchOperator=starts_with&limit=${PAGE}`;
}

function searches(admin: HttpSession, label: string, clients: number): Operation[] {
  return Array.from({ length: clients }, () => {
    const session = admin.copy();
    return async () => {
      const answer = await session.get(searchPath(label));
      return { ok: answer.status === 200, status: String(answer.status) };
    };
  });
}

interface Variant {
  readonly name: string;
  readonly clients: number;
  readonly figures: LoopFigures;
}

/** The search loop at each client count of BENCH_ADMIN_CLIENTS. */
async function measure(name: string, admin: HttpSession, label: string, variants: Variant[]): Promise<void> {
  for (const clients of settings.adminClients) {
    log(`admin: list-users on ${name}, ${clients} client(s)`);
    const figures = await runClosedLoop({ operations: searches(admin, label, clients), warmupS: settings.warmupS, durationS: settings.durationS });
    variants.push({ name, clients, figures });
  }
}

/**
 * `list-users` on a tenant of BENCH_ADMIN_USERS users (100,000 by default): Portcullis (its `user` read
 * model, written by the projector from a log prefilled as sign-ups write it) beside better-auth 1.7 with its
 * admin plugin (its own `user` table, filled with the same addresses), on the same Postgres. The goal is the
 * issue's: a search by email prefix and a page of 100 in p99 < 50 ms.
 */
export async function runAdminListUsers(teardown: Teardown): Promise<string> {
  const runId = randomBytes(4).toString('hex');
  const count = settings.adminUsers;
  const label = `${runId}-u`;
  const variants: Variant[] = [];

  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  log(`admin: starting Portcullis on ${database.name}`);
  const deployment = await startDeployment({ databaseUrl: database.url, secret: randomBytes(32).toString('hex'), redis: null, rateLimit: settings.rateLimit });
  teardown.add('stop Portcullis (admin)', () => deployment.stop());
  const store = new PostgresEventStore({ databaseUrl: database.url, maximumPoolSize: 2 });
  teardown.add('close the bench event store (admin)', () => store.close());
  log(`admin: writing ${count} signed-up users to the log`);
  const passwordHash = await hashPassword(PASSWORD, DEFAULT_ARGON2ID_COST);
  await appendSignedUpUsers(store, { count, label, passwordHash, withSessions: false });
  const [admin] = await appendSignedUpUsers(store, { count: 1, label: `${runId}-admin`, passwordHash, withSessions: true });
  const role = UserRoleChanged({ userId: admin!.userId, role: 'admin' });
  await store.append([
    { streamId: streams.user(admin!.userId), expectedVersion: 'any', events: [{ type: role.type, data: role.data, metadata: { occurredAt: new Date().toISOString(), actorId: null } }] },
  ]);
  await waitForProjections(deployment, 10 * 60_000);
  const portcullis = new HttpTarget('Portcullis', deployment.authUrl);
  teardown.add('close Portcullis connections (admin)', async () => portcullis.close());
  const portcullisAdmin = portcullis.session().useBearer(admin!.token!);
  expectOk(await portcullisAdmin.get(searchPath(label)), 'Portcullis list-users');
  await measure('Portcullis', portcullisAdmin, label, variants);
  await deployment.stop();

  if (await redisReachable(settings.redisUrl)) {
    const peerDatabase = await createBenchDatabase(settings.adminUrl);
    teardown.add(`drop database ${peerDatabase.name}`, () => peerDatabase.drop());
    const keyPrefix = `bench:${runId}:admin:`;
    teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
    log(`admin: starting better-auth with its admin plugin on ${peerDatabase.name}`);
    const peer = await startBetterAuthPeer({
      databaseUrl: peerDatabase.url,
      secret: randomBytes(32).toString('hex'),
      redis: { url: settings.redisUrl, keyPrefix },
      rateLimit: settings.rateLimit,
      membershipLimit: 100,
      admin: true,
    });
    teardown.add('stop better-auth (admin)', () => peer.stop());
    const pool = new pg.Pool({ connectionString: peerDatabase.url, max: 2 });
    teardown.add('close the better-auth database pool', () => pool.end());
    log(`admin: inserting ${count} users into better-auth's user table`);
    await pool.query(
      `INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt", role, banned)
       SELECT md5($1 || n), $1 || ' ' || n, $1 || '-' || n || '@example.com', false, now(), now(), 'user', false
       FROM generate_series(0, $2::int - 1) AS n`,
      [label, count],
    );
    await pool.query('ANALYZE "user"');
    const betterAuth = new HttpTarget('better-auth', peer.authUrl);
    teardown.add('close better-auth connections (admin)', async () => betterAuth.close());
    const adminEmail = `${runId}-admin@example.com`;
    expectOk(await betterAuth.session().post('/sign-up/email', { email: adminEmail, password: PASSWORD, name: 'Admin' }), 'better-auth sign-up');
    await pool.query(`UPDATE "user" SET role = 'admin' WHERE email = $1`, [adminEmail]);
    // Signed in after the role is set: better-auth keeps the user with the session it stores.
    const peerAdmin = betterAuth.session();
    expectOk(await peerAdmin.post('/sign-in/email', { email: adminEmail, password: PASSWORD }), 'better-auth sign-in');
    await waitUntil(async () => (await peerAdmin.get(searchPath(label))).status === 200, { what: 'better-auth list-users', timeoutMs: 10_000, children: [peer.child] });
    await measure('better-auth 1.7', peerAdmin, label, variants);
  } else {
    log(`admin: better-auth skipped, Redis at ${settings.redisUrl} is not reachable`);
  }

  const rows = variants.map(({ name, clients, figures }) => {
    const goal = name === 'Portcullis' ? (figures.latency.p99Ms < P99_GOAL_MS ? 'ok' : 'MISS') : '';
    const { opsPerSecond, latency } = figures;
    return `| ${name} | ${clients} | ${opsPerSecond.toFixed(0)} | ${latency.p50Ms.toFixed(1)} | ${latency.p99Ms.toFixed(1)} | ${describeFailures(figures)} | ${goal} |`;
  });
  return [
    `## admin: list-users, ${count} users, email prefix search, page of ${PAGE}`,
    '',
    `| server | clients | searches/s | p50 ms | p99 ms | failed | p99 < ${P99_GOAL_MS} ms |`,
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
