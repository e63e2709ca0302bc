import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailReserved, ERASED, streams, UserRegistered, type AuditEvent } from '@portcullis/contracts';
import { createLogger, createRedisClient, PostgresEventStore, SNAPSHOT_INTERVAL, sql, verifyChain } from '@portcullis/platform';
import { domainWrite, metadataAt } from '../../../../tests/support/event-log.ts';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { deleteRedisKeys, testRedisUrl, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';

const KEY = 'erasure-operator-key-0123456789abcdef0123';
const PASSWORD = 'correct horse battery';
const tag = randomBytes(4).toString('hex');
/** Everything personal about Alice, each unique to this run, so finding one anywhere can only be a leak. */
const alice = {
  email: `alice-${tag}@example.com`,
  name: `Alice Erasure ${tag}`,
  username: `alice_${tag}`,
  userAgent: `ErasureBrowser/${tag}`,
  ip: '203.0.113.77',
};

interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

/**
 * Issue 25's erasure clause, through the api with its projections in process, on real Postgres and Redis:
 * a user's personal data is encrypted in the log under their own key, and deleting the user destroys it,
 * so that no table, cache key, export, search answer or log line holds their email afterwards, while the
 * hash chain still verifies and time travel shows the fields erased.
 */
describe('erasure (crypto-shredding)', () => {
  const redisUrl = testRedisUrl();
  const redisPrefix = uniqueRedisPrefix();
  const logged = new PassThrough();
  let logText = '';
  logged.on('data', (chunk: Buffer) => (logText += chunk.toString('utf8')));
  let api: InProcessApi;
  let aliceId: string;
  let aliceToken: string;
  let positionBeforeDeletion: number;

  /** A request from Alice's browser, or with `as: 'bob'` from Bob's. */
  async function call(method: 'GET' | 'POST', path: string, body?: object, options: { token?: string; as?: 'bob' } = {}): Promise<Answer> {
    const bob = options.as === 'bob';
    const response = await api.app.inject({
      method,
      url: `/api/auth${path}`,
      remoteAddress: bob ? '198.51.100.5' : alice.ip,
      headers: {
        origin: 'http://localhost:3000',
        'user-agent': bob ? 'BobBrowser/1' : alice.userAgent,
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
      ...(body ? { payload: body } : {}),
    });
    return { status: response.statusCode, json: (response.body ? JSON.parse(response.body) : {}) as Record<string, unknown> };
  }

  async function ok(answer: Promise<Answer>): Promise<Record<string, unknown>> {
    const { status, json } = await answer;
    expect(status, JSON.stringify(json)).toBe(200);
    return json;
  }

  async function ops(url: string): Promise<string> {
    const response = await api.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY } });
    expect(response.statusCode, response.body).toBe(200);
    return response.body;
  }

  /** Waits until every projection, the audit index included, has applied the whole log. */
  async function projectionsCaughtUp(): Promise<void> {
    const head = await api.db.store.headPosition();
    await waitFor(
      async () => {
        const behind = await api.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM projection_checkpoints WHERE position < ${head}`);
        return Number(behind) === 0;
      },
      { timeoutMs: 20_000, message: 'the projections to reach the head' },
    );
  }

  /** Each public table whose rows, as text, contain `needle`, with the count. */
  async function tablesHolding(needle: string): Promise<Record<string, number>> {
    const tables = (await api.db.pool.anyFirst(sql.unsafe`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)) as readonly string[];
    const found: Record<string, number> = {};
    for (const table of tables) {
      const count = Number(await api.db.pool.oneFirst(sql.unsafe`
        SELECT count(*) FROM ${sql.identifier([table])} t WHERE t::text ILIKE ${`%${needle}%`}`));
      if (count > 0) found[table] = count;
    }
    return found;
  }

  /** Every key under the spec's prefix and its value, as text, whatever its type. */
  async function redisContents(): Promise<string> {
    if (!redisUrl) return '';
    const redis = createRedisClient(redisUrl, { name: 'erasure-spec' });
    try {
      const keys = await redis.keys(`${redisPrefix}*`);
      const parts: string[] = [];
      for (const key of keys) {
        const type = await redis.type(key);
        const value =
          type === 'string' ? await redis.get(key)
          : type === 'hash' ? await redis.hgetall(key)
          : type === 'set' ? await redis.smembers(key)
          : type === 'zset' ? await redis.zrange(key, '0', '-1')
          : type === 'list' ? await redis.lrange(key, '0', '-1')
          : type === 'stream' ? await redis.xrange(key, '-', '+')
          : null;
        parts.push(`${key} ${JSON.stringify(value)}`);
      }
      return parts.join('\n');
    } finally {
      redis.disconnect();
    }
  }

  beforeAll(async () => {
    if (!redisUrl && process.env.CI === 'true') throw new Error('the erasure spec needs Redis under CI');
    api = await startInProcessApi(
      'erasure',
      {
        HOST: '0.0.0.0',
        BASE_URL: 'http://localhost:3000',
        AUTH_SECRET: 'erasure-spec-secret-0123456789abcdefghij',
        AUTH_SERVER_API_KEY: KEY,
        AUTH_RATE_LIMIT_ENABLED: 'false',
        AUTH_DELETE_USER_ENABLED: 'true',
        AUTH_CHANGE_EMAIL_ENABLED: 'true',
        ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: redisPrefix } : {}),
      },
      { log: createLogger({ name: 'erasure-spec', level: 'trace', format: 'json', destination: logged }) },
    );
    const signedUp = await ok(call('POST', '/sign-up/email', { name: alice.name, email: alice.email, password: PASSWORD, username: alice.username }));
    aliceId = (signedUp.user as { id: string }).id;
    aliceToken = signedUp.token as string;
  });

  afterAll(async () => {
    await api?.close();
    if (redisUrl) await deleteRedisKeys(redisUrl, redisPrefix);
  });

  it('keeps no plaintext email, name, username, address or user agent in the log, while the api answers them', async () => {
    const session = await ok(call('GET', '/get-session?disableCookieCache=true', undefined, { token: aliceToken }));
    expect(session.user).toMatchObject({ email: alice.email, name: alice.name });
    for (const needle of Object.values(alice)) {
      const rows = await api.db.pool.oneFirst(sql.unsafe`
        SELECT count(*) FROM events WHERE (stream_id || data::text || metadata::text) ILIKE ${`%${needle}%`}`);
      expect(Number(rows), needle).toBe(0);
    }
    // The reservation is still the one uniqueness hangs on: a second sign-up with the address is refused.
    expect((await call('POST', '/sign-up/email', { name: 'Other', email: alice.email.toUpperCase(), password: PASSWORD })).status).toBe(422);
    expect((await api.db.store.readStream(streams.email(alice.email))).version).toBe(1);
  });

  it('leaves no trace of a deleted user\'s email in any table, Redis, the audit answers or the logs; the chain still verifies', async () => {
    // A second session, a failed sign-in, a profile change, and an invitation to Alice that she accepts.
    const signedIn = await ok(call('POST', '/sign-in/email', { email: alice.email, password: PASSWORD }));
    await call('POST', '/sign-in/email', { email: alice.email, password: 'not her password' });
    await ok(call('POST', '/update-user', { name: `${alice.name} Liddell` }, { token: aliceToken }));
    const bob = await ok(call('POST', '/sign-up/email', { name: 'Bob', email: `bob-${tag}@example.com`, password: PASSWORD }, { as: 'bob' }));
    const bobToken = bob.token as string;
    const organization = await ok(call('POST', '/organization/create', { name: 'Acme', slug: `acme-${tag}` }, { token: bobToken, as: 'bob' }));
    const invitation = await ok(
      call('POST', '/organization/invite-member', { email: alice.email, role: 'member', organizationId: organization.id }, { token: bobToken, as: 'bob' }),
    );
    await ok(call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, { token: signedIn.token as string }));
    await projectionsCaughtUp();
    expect(await tablesHolding(alice.email)).toMatchObject({ user: 1, invitation: 1 });
    if (redisUrl) expect(await redisContents()).toContain(alice.email);

    positionBeforeDeletion = await api.db.store.headPosition();
    expect(await ok(call('POST', '/delete-user', { password: PASSWORD }, { token: aliceToken }))).toEqual({ success: true, message: 'User deleted' });
    await projectionsCaughtUp();

    for (const needle of [alice.email, alice.username, alice.userAgent, alice.name, alice.ip]) {
      expect(await tablesHolding(needle), needle).toEqual({});
    }
    expect(await tablesHolding(aliceId)).not.toEqual({});
    expect(await redisContents()).not.toContain(alice.email);
    const exported = await ops(`/ops/audit/export?order=oldest`);
    expect(exported.split('\n').filter((line) => line !== '').length).toBeGreaterThan(10);
    expect(exported).not.toContain(alice.email);
    expect(exported).not.toContain(alice.userAgent);
    const searched = JSON.parse(await ops(`/ops/audit/events?user=${aliceId}&limit=500`)) as { events: AuditEvent[] };
    expect(JSON.stringify(searched)).not.toContain(alice.email);
    const registered = searched.events.find((e) => e.type === 'user.registered.v1')!;
    expect(registered.data).toMatchObject({ userId: aliceId, email: ERASED, name: ERASED });
    expect(registered.metadata).toMatchObject({ ipAddress: ERASED, userAgent: ERASED });
    // Bob's own history is his to keep.
    const bobEvents = JSON.parse(await ops(`/ops/audit/events?type=organization.created.v1`)) as { events: AuditEvent[] };
    expect(bobEvents.events[0]!.metadata).toMatchObject({ userAgent: 'BobBrowser/1', ipAddress: '198.51.100.5' });
    expect(logText.length).toBeGreaterThan(0);
    expect(logText).not.toContain(alice.email);

    const verdict = await verifyChain(api.db.pool);
    expect(verdict).toMatchObject({ ok: true, failure: null });

    const before = JSON.parse(await ops(`/ops/audit/users/${aliceId}?at=${positionBeforeDeletion}`)) as { state: unknown };
    const state = JSON.stringify(before.state);
    expect(state).toContain(ERASED);
    expect(state).not.toContain(alice.email);
    // The address is free again, and a new account at it starts with a key of its own.
    const again = await ok(call('POST', '/sign-up/email', { name: 'Alice Again', email: alice.email, password: PASSWORD }));
    const session = await ok(call('GET', '/get-session?disableCookieCache=true', undefined, { token: again.token as string }));
    expect(session.user).toMatchObject({ email: alice.email, name: 'Alice Again' });
  });

  it('erases a user an admin removes the same way', async () => {
    const admin = await ok(call('POST', '/sign-up/email', { name: 'Root', email: `root-${tag}@example.com`, password: PASSWORD }, { as: 'bob' }));
    const adminId = (admin.user as { id: string }).id;
    const dave = await ok(call('POST', '/sign-up/email', { name: 'Dave', email: `dave-${tag}@example.com`, password: PASSWORD }, { as: 'bob' }));
    const daveId = (dave.user as { id: string }).id;
    const asAdmin = await api.another({ env: { ADMIN_USER_IDS: adminId } });
    // This api process opens Dave's history (time travel), so it holds his key when another one removes him.
    const beforeRemoval = await api.db.store.headPosition();
    const daveThen = () => ops(`/ops/audit/users/${daveId}?at=${beforeRemoval}`);
    expect(await daveThen()).toContain(`dave-${tag}@example.com`);
    const removed = await asAdmin.inject({
      method: 'POST',
      url: '/api/auth/admin/remove-user',
      headers: { origin: 'http://localhost:3000', authorization: `Bearer ${admin.token as string}` },
      payload: { userId: daveId },
    });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(await api.db.pool.oneFirst(sql.unsafe`SELECT wrapped_key IS NULL FROM data_key WHERE subject_id = ${`u:${daveId}`}`)).toBe(true);
    // The other process heard the erasure: it forgot the key it held (believed for a minute otherwise).
    await waitFor(async () => !(await daveThen()).includes(`dave-${tag}@example.com`), { timeoutMs: 5_000, message: 'the first api process to forget Dave\'s key' });
    expect(await daveThen()).toContain(ERASED);
    // The projections, on a store of their own, forgot the key when they read the removal.
    await projectionsCaughtUp();
    const [registered] = (await api.db.store.readStream(streams.user(daveId))).events;
    expect(registered!.data).toMatchObject({ userId: daveId, email: ERASED, name: ERASED });
    expect(await tablesHolding(`dave-${tag}`)).toEqual({});
  });

  it('shreds the kept folds that hold a deleted user\'s address without their id (an invitation they never answered) with the key', async () => {
    const fayEmail = `fay-${tag}@example.com`;
    const fay = await ok(call('POST', '/sign-up/email', { name: 'Fay', email: fayEmail, password: PASSWORD }, { as: 'bob' }));
    const owner = await ok(call('POST', '/sign-up/email', { name: 'Owen', email: `owen-${tag}@example.com`, password: PASSWORD }, { as: 'bob' }));
    const ownerToken = owner.token as string;
    const organization = await ok(call('POST', '/organization/create', { name: 'Invites', slug: `invites-${tag}` }, { token: ownerToken, as: 'bob' }));
    await ok(call('POST', '/organization/invite-member', { email: fayEmail, role: 'member', organizationId: organization.id }, { token: ownerToken, as: 'bob' }));
    // Enough changes for the organization's fold to be kept as a snapshot, Fay's pending invitation in it.
    const organizationStream = streams.organization(organization.id as string);
    for (let i = 0; i < SNAPSHOT_INTERVAL; i += 1) {
      await ok(call('POST', '/organization/update', { organizationId: organization.id, data: { name: `Invites ${i}` } }, { token: ownerToken, as: 'bob' }));
    }
    await waitFor(
      async () => Number(await api.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM snapshots WHERE stream_id = ${organizationStream}`)) > 0,
      { timeoutMs: 10_000, message: 'a snapshot of the organization holding the invitation' },
    );
    // Fay's address is in it sealed under its key, never as it is.
    const keptState = async () => String(await api.db.pool.oneFirst(sql.unsafe`SELECT state::text FROM snapshots WHERE stream_id = ${organizationStream}`));
    expect(await keptState()).not.toContain(fayEmail);
    const sealedBefore = await keptState();

    expect(await ok(call('POST', '/delete-user', { password: PASSWORD }, { token: fay.token as string }))).toEqual({ success: true, message: 'User deleted' });
    await projectionsCaughtUp();
    expect(await tablesHolding(fayEmail)).toEqual({});
    // The deletion left the snapshot as it was: its sealed address went with the key, not with a scan.
    expect(await keptState()).toBe(sealedBefore);
    // The organization itself goes on: its next change folds from the log, where the address is sealed.
    await ok(call('POST', '/organization/update', { organizationId: organization.id, data: { name: 'Invites again' } }, { token: ownerToken, as: 'bob' }));
  });

  it('erases the addresses a user held before an email change, but not one another user has taken since', async () => {
    const [first, second, last] = ['first', 'second', 'last'].map((step) => `erin-${step}-${tag}@example.com`) as [string, string, string];
    // Named before Erin had an account: a failed sign-in and an invitation, each under that address's key.
    expect((await call('POST', '/sign-in/email', { email: first, password: 'no such account' })).status).toBe(401);
    const frank = await ok(call('POST', '/sign-up/email', { name: 'Frank', email: `frank-${tag}@example.com`, password: PASSWORD }, { as: 'bob' }));
    const frankToken = frank.token as string;
    const organization = await ok(call('POST', '/organization/create', { name: 'Erin Co', slug: `erin-co-${tag}` }, { token: frankToken, as: 'bob' }));
    const invite = (email: string) => ok(call('POST', '/organization/invite-member', { email, role: 'member', organizationId: organization.id }, { token: frankToken, as: 'bob' }));
    await invite(first);
    const erin = await ok(call('POST', '/sign-up/email', { name: 'Erin', email: first, password: PASSWORD }));
    const erinToken = erin.token as string;
    for (const newEmail of [second, last]) expect(await ok(call('POST', '/change-email', { newEmail }, { token: erinToken }))).toEqual({ status: true });
    const session = await ok(call('GET', '/get-session?disableCookieCache=true', undefined, { token: erinToken }));
    expect(session.user).toMatchObject({ email: last });
    // Greg takes the address Erin left in between, and is invited at it.
    await ok(call('POST', '/sign-up/email', { name: 'Greg', email: second, password: PASSWORD }, { as: 'bob' }));
    await invite(second);
    await projectionsCaughtUp();
    expect(await tablesHolding(first)).toMatchObject({ invitation: 1 });
    expect(await ops(`/ops/audit/export?order=oldest`)).toContain(first);

    expect(await ok(call('POST', '/delete-user', { password: PASSWORD }, { token: erinToken }))).toEqual({ success: true, message: 'User deleted' });
    await projectionsCaughtUp();
    const exported = await ops(`/ops/audit/export?order=oldest`);
    for (const address of [first, last]) {
      expect(await tablesHolding(address), address).toEqual({});
      expect(await redisContents(), address).not.toContain(address);
      expect(exported, address).not.toContain(address);
    }
    // Greg's address, and his invitation at it, are his.
    expect(await tablesHolding(second)).toMatchObject({ user: 1, invitation: 1 });
    expect(exported).toContain(second);
  });

  it('carries the reservations of a log written before keyed stream names forward, so their addresses stay taken', async () => {
    // As an older version wrote them: plaintext, under the address's own name.
    const email = `carol-${tag}@example.com`;
    const userId = `legacy-${tag}`;
    const old = new PostgresEventStore({ databaseUrl: api.db.url, maximumPoolSize: 1 });
    try {
      const metadata = metadataAt(new Date());
      await old.append([
        domainWrite(streams.email(email), 'no_stream', [EmailReserved({ email, userId })], metadata),
        domainWrite(streams.user(userId), 'no_stream', [UserRegistered({ userId, email, name: 'Carol', image: null, emailVerified: true })], metadata),
      ]);
    } finally {
      await old.close();
    }
    await api.db.pool.query(sql.unsafe`DELETE FROM log_upgrade`);
    // An api starting on that log carries them, once.
    const upgraded = await api.another();
    await api.another();
    expect(Number(await api.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM events WHERE stream_id = ${api.db.personalData.storedStreamId(streams.email(email))}`))).toBe(1);
    const refused = await upgraded.inject({ method: 'POST', url: '/api/auth/sign-up/email', headers: { origin: 'http://localhost:3000' }, payload: { name: 'C', email, password: PASSWORD } });
    expect(refused.statusCode, refused.body).toBe(422);
  });
});
