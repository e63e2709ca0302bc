import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import {
  cookieNames,
  expectCatalogueError,
  expectCookieCleared,
  setCookieFor,
  sha256Hex,
  signIn,
  signUp,
  type SessionAnswerJson,
  type SessionJson,
} from '../support/auth.ts';
import { waitFor } from '../support/processes.ts';
import { describeWithRedis, testRedisUrl } from '../support/redis.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

// better-auth's session with the organization plugin's two fields, null until an organization is chosen.
const SESSION_KEYS = ['activeOrganizationId', 'activeTeamId', 'createdAt', 'expiresAt', 'id', 'impersonatedBy', 'ipAddress', 'token', 'updatedAt', 'userAgent', 'userId'];

/**
 * The age conditions below are the clock's, not the system's: once Date.now() is past a session's
 * createdAt + N ms, the server (same machine, same clock) must see the session as older than N ms.
 */
async function untilClockPasses(instant: number): Promise<void> {
  await waitFor(() => Date.now() > instant, { timeoutMs: 30_000, intervalMs: 20, message: `the clock to pass ${new Date(instant).toISOString()}` });
}

function useSystem(options: { redis: boolean; env?: Record<string, string> }): () => System {
  let system: System | undefined;
  beforeAll(async () => {
    system = await startSystem({ redis: options.redis, ...(options.env ? { env: options.env } : {}) });
  });
  afterAll(async () => {
    await system?.stop();
  });
  return () => {
    if (!system) throw new Error('system not started');
    return system;
  };
}

async function currentSession(client: HttpClient): Promise<SessionAnswerJson | null> {
  const response = await client.get<SessionAnswerJson | null>('get-session');
  expect(response.status, response.text).toBe(200);
  return response.json;
}

async function revokedEvents(system: System, sessionId: string): Promise<{ reason: string }[]> {
  const rows = await system.query<{ data: { reason: string } }>(
    `SELECT data FROM events WHERE type = 'session.revoked.v2' AND data->>'sessionId' = $1 ORDER BY position`,
    [sessionId],
  );
  return rows.map((r) => ({ reason: r.data.reason }));
}

/** The session behaviour every deployment must show, run against a system without and with the Redis cache. */
function sessionSuite(options: { redis: boolean }): void {
  const system = useSystem({ redis: options.redis });
  const client = (): HttpClient => new HttpClient(system().authUrl);

  /** One user signed in on `count` clients (the first by sign-up), each holding its own session. */
  async function userWithSessions(count: number): Promise<{ clients: HttpClient[]; tokens: string[]; userId: string; email: string }> {
    const first = client();
    const up = await signUp(first);
    const clients = [first];
    const tokens = [up.token];
    for (let i = 1; i < count; i += 1) {
      const c = client();
      tokens.push((await signIn(c, { email: up.user.email })).token);
      clients.push(c);
    }
    return { clients, tokens, userId: up.user.id, email: up.user.email };
  }

  describe('GET /get-session', () => {
    it('answers null (200) without a cookie, uncacheable and setting no cookie', async () => {
      const response = await client().get('get-session');
      expect(response.status).toBe(200);
      expect(response.text).toBe('null');
      expect(response.json).toBeNull();
      expect(response.setCookies).toEqual([]);
      expect(response.headers.get('cache-control')).toBe('no-store');
    });

    it('answers {session, user} with better-auth session fields, the caller\'s own token included', async () => {
      const c = client();
      const { token, user } = await signUp(c, { name: 'Grace' });
      const answer = await currentSession(c);
      expect(Object.keys(answer!).sort()).toEqual(['session', 'user']);
      expect(Object.keys(answer!.session).sort()).toEqual(SESSION_KEYS);
      expect(answer!.session).toMatchObject({ token, userId: user.id, activeOrganizationId: null, activeTeamId: null });
      expect(answer!.user).toEqual(user);
    });

    it('treats a cookie with a bad or missing signature as no session, and leaves it alone', async () => {
      const { token } = await signUp(client());
      const forged = encodeURIComponent(`${token}.${'A'.repeat(43)}=`);
      for (const value of [forged, token]) {
        const response = await client().get('get-session', { headers: { cookie: `${cookieNames.sessionToken}=${value}` } });
        expect(response.status).toBe(200);
        expect(response.json).toBeNull();
        expect(response.setCookies).toEqual([]);
      }
    });
  });

  describe('POST /sign-out', () => {
    it('ends the session and clears session_token, session_data and dont_remember with Max-Age=0', async () => {
      const c = client();
      const { user } = await signUp(c);
      const before = await currentSession(c);
      const presented = c.cookieHeader();

      const response = await c.post('sign-out', {});
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ success: true });
      for (const name of [cookieNames.sessionToken, cookieNames.sessionData, cookieNames.dontRemember]) expectCookieCleared(response, name);
      expect(c.cookie(cookieNames.sessionToken)).toBeUndefined();

      expect(await currentSession(c)).toBeNull();
      // The old cookie, replayed, finds nothing either: the session ended on the server, not just in the jar.
      const replayed = await client().get('get-session', { headers: { cookie: presented } });
      expect(replayed.json).toBeNull();
      expect(await system().query(`SELECT id FROM session WHERE "userId" = $1`, [user.id])).toEqual([]);
      expect(await revokedEvents(system(), before!.session.id)).toEqual([{ reason: 'signed_out' }]);
    });

    it('answers {success: true} without a session too', async () => {
      const response = await client().post('sign-out', {});
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ success: true });
    });
  });

  describe('session management', () => {
    it('GET /list-sessions lists every session of the user, the current one with its raw token', async () => {
      const { clients, tokens, userId } = await userWithSessions(2);
      const stranger = await userWithSessions(1);

      const listed = await clients[1]!.get<SessionJson[]>('list-sessions');
      expect(listed.status, listed.text).toBe(200);
      expect(listed.json).toHaveLength(2);
      for (const session of listed.json) {
        expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
        expect(session.userId).toBe(userId);
      }
      const ids = await Promise.all(clients.map(async (c) => (await currentSession(c))!.session.id));
      expect(listed.json.map((s) => s.id).sort()).toEqual([...ids].sort());
      const current = listed.json.find((s) => s.id === ids[1]);
      expect(current?.token).toBe(tokens[1]);
      // The other session's raw token is not known to the server (only its hash is stored), so it is not shown.
      const other = listed.json.find((s) => s.id === ids[0]);
      expect(other?.token).not.toBe(tokens[0]);
      expect(listed.json.map((s) => s.userId)).not.toContain(stranger.userId);
    });

    it('POST /revoke-session with another session\'s listed token ends that session only', async () => {
      const { clients } = await userWithSessions(2);
      const [a, b] = clients as [HttpClient, HttpClient];
      const aSession = (await currentSession(a))!.session;
      const listed = (await b.get<SessionJson[]>('list-sessions')).json;
      const aListed = listed.find((s) => s.id === aSession.id)!;

      const response = await b.post('revoke-session', { token: aListed.token });
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ status: true });
      // Revoking another session leaves the caller's cookies alone.
      expect(response.setCookies).toEqual([]);

      expect(await currentSession(a)).toBeNull();
      expect(await currentSession(b)).not.toBeNull();
      expect((await b.get<SessionJson[]>('list-sessions')).json.map((s) => s.id)).not.toContain(aSession.id);
      expect(await revokedEvents(system(), aSession.id)).toEqual([{ reason: 'revoked' }]);
    });

    it('POST /revoke-session with an unknown token, or another user\'s, answers {status: true} and changes nothing', async () => {
      const { clients } = await userWithSessions(2);
      const stranger = await userWithSessions(1);
      const strangerSession = (await currentSession(stranger.clients[0]!))!.session;
      const before = (await clients[0]!.get<SessionJson[]>('list-sessions')).json.map((s) => s.id).sort();

      for (const token of ['no-such-token-anywhere-0123456789', strangerSession.token]) {
        const response = await clients[0]!.post('revoke-session', { token });
        expect(response.status).toBe(200);
        expect(response.json).toEqual({ status: true });
      }
      expect((await clients[0]!.get<SessionJson[]>('list-sessions')).json.map((s) => s.id).sort()).toEqual(before);
      expect((await currentSession(stranger.clients[0]!))?.session.id).toBe(strangerSession.id);
    });

    it('POST /revoke-session with the current token ends it and clears the cookies', async () => {
      const { clients, tokens } = await userWithSessions(1);
      const response = await clients[0]!.post('revoke-session', { token: tokens[0] });
      expect(response.json).toEqual({ status: true });
      expectCookieCleared(response, cookieNames.sessionToken);
      const replayed = await client().get('get-session', { headers: { authorization: `Bearer ${tokens[0]}` } });
      expect(replayed.json).toBeNull();
    });

    it('POST /revoke-other-sessions keeps only the current session', async () => {
      const { clients, userId } = await userWithSessions(3);
      const keeper = clients[2]!;
      const kept = (await currentSession(keeper))!.session.id;

      const response = await keeper.post('revoke-other-sessions', {});
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ status: true });

      expect(await currentSession(clients[0]!)).toBeNull();
      expect(await currentSession(clients[1]!)).toBeNull();
      expect((await currentSession(keeper))?.session.id).toBe(kept);
      expect((await keeper.get<SessionJson[]>('list-sessions')).json.map((s) => s.id)).toEqual([kept]);
      expect(await system().query(`SELECT id FROM session WHERE "userId" = $1`, [userId])).toEqual([{ id: kept }]);
    });

    it('POST /revoke-sessions ends every session of the user, the current one included', async () => {
      const { clients, userId } = await userWithSessions(2);
      const response = await clients[0]!.post('revoke-sessions', {});
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ status: true });
      expectCookieCleared(response, cookieNames.sessionToken);

      for (const c of clients) expect(await currentSession(c)).toBeNull();
      expect(await system().query(`SELECT id FROM session WHERE "userId" = $1`, [userId])).toEqual([]);
    });

    it('refuses the session endpoints without a session: 401 UNAUTHORIZED', async () => {
      expectCatalogueError(await client().get('list-sessions'), 'UNAUTHORIZED');
      expectCatalogueError(await client().post('revoke-session', { token: 'whatever' }), 'UNAUTHORIZED');
      expectCatalogueError(await client().post('revoke-sessions', {}), 'UNAUTHORIZED');
      expectCatalogueError(await client().post('revoke-other-sessions', {}), 'UNAUTHORIZED');
      expectCatalogueError(await client().post('update-user', { name: 'x' }), 'UNAUTHORIZED');
    });
  });

  if (options.redis) {
    it('keeps the Redis session cache keyed by the token hash, with the raw token in no key or value', async () => {
      const c = client();
      const { token } = await signUp(c);
      // Served at once, so the cache holds it now (commit waits for the cache projection too).
      expect((await currentSession(c))?.session.token).toBe(token);
      const redis = new Redis(testRedisUrl()!, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      try {
        const prefix = system().env.REDIS_KEY_PREFIX!;
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
          keys.push(...batch);
          cursor = next;
        } while (cursor !== '0');
        // Under the served generation's tag (`session:{sc:<log>:<generation>}:<hash>`).
        expect(keys.filter((key) => key.startsWith(`${prefix}session:{sc:`) && key.endsWith(`}:${sha256Hex(token)}`))).toHaveLength(1);
        for (const key of keys) {
          expect(key).not.toContain(token);
          const type = await redis.type(key);
          const values = type === 'set' ? await redis.smembers(key) : type === 'string' ? [await redis.get(key)] : [];
          for (const value of values) expect(value).not.toContain(token);
        }
      } finally {
        redis.disconnect();
      }
    });
  }

  describe('POST /update-user', () => {
    it('changes name and image, which get-session shows at once on every session of the user', async () => {
      const { clients } = await userWithSessions(2);
      const before = (await currentSession(clients[0]!))!.user;

      const response = await clients[0]!.post('update-user', { name: 'Renamed', image: 'https://example.com/new.png' });
      expect(response.status, response.text).toBe(200);
      expect(response.json).toEqual({ status: true });
      // better-auth re-sends the session cookie with the updated user.
      expect(setCookieFor(response, cookieNames.sessionToken).value).toBe(clients[0]!.cookie(cookieNames.sessionToken));

      for (const c of clients) {
        const { user } = (await currentSession(c))!;
        expect(user).toMatchObject({ id: before.id, email: before.email, name: 'Renamed', image: 'https://example.com/new.png' });
        expect(Date.parse(user.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
      }

      expect((await clients[1]!.post('update-user', { image: null })).json).toEqual({ status: true });
      expect((await currentSession(clients[0]!))!.user).toMatchObject({ name: 'Renamed', image: null });
    });

    it('refuses an email change with 400 EMAIL_CAN_NOT_BE_UPDATED and changes nothing', async () => {
      const c = client();
      const { user } = await signUp(c, { name: 'Unchanged' });
      const response = await c.post('update-user', { email: 'other@example.com', name: 'Changed' });
      expectCatalogueError(response, 'EMAIL_CAN_NOT_BE_UPDATED');
      expect((await currentSession(c))!.user).toMatchObject({ email: user.email, name: 'Unchanged' });
    });

    it("refuses an update with nothing to change: 400 'No fields to update'", async () => {
      const c = client();
      await signUp(c);
      expectCatalogueError(await c.post('update-user', {}), 'NO_FIELDS_TO_UPDATE');
      expect(errorCatalogue.NO_FIELDS_TO_UPDATE.message).toBe('No fields to update');
      // Fields better-auth does not let a user set are ignored, which leaves nothing to update.
      expectCatalogueError(await c.post('update-user', { emailVerified: true }), 'NO_FIELDS_TO_UPDATE');
      expect((await currentSession(c))!.user.emailVerified).toBe(false);
    });
  });

  describe('operations endpoints', () => {
    it('GET /ok answers {ok: true}', async () => {
      const response = await client().get('ok');
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ ok: true });
    });

    it("GET /error shows an 'Authentication Error' page with the code, and UNKNOWN for anything not code-like", async () => {
      const page = await client().get('error?error=SOME_CODE');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.text).toMatch(/<title>Authentication Error<\/title>/);
      expect(page.text).toContain('SOME_CODE');
      expect(page.text).toMatch(/<a href="http:\/\/127\.0\.0\.1:\d+\/">/);

      const injected = await client().get(`error?error=${encodeURIComponent('<script>alert(1)</script>')}&error_description=${encodeURIComponent('<img src=x onerror=alert(2)>')}`);
      expect(injected.status).toBe(200);
      expect(injected.text).toContain('UNKNOWN');
      expect(injected.text).not.toContain('<script>');
      expect(injected.text).not.toContain('<img');
    });

    it('GET /healthz and /readyz answer 200 at the root', async () => {
      const base = new HttpClient(system().baseUrl);
      const health = await base.get('healthz');
      expect(health.status).toBe(200);
      expect(health.json).toEqual({ status: 'ok' });
      const ready = await base.get<{ status: string; checks: Record<string, { ok: boolean }> }>('readyz');
      expect(ready.status).toBe(200);
      expect(ready.json.status).toBe('ready');
      expect(Object.keys(ready.json.checks).sort()).toEqual(options.redis ? ['postgres', 'projections', 'redis'] : ['postgres', 'projections']);
      for (const check of Object.values(ready.json.checks)) expect(check.ok).toBe(true);
    });
  });

  describe('refresh and freshness (AUTH_SESSION_EXPIRES_IN=60, AUTH_SESSION_UPDATE_AGE=1, AUTH_SESSION_FRESH_AGE=3)', () => {
    const timed = useSystem({
      redis: options.redis,
      env: { AUTH_SESSION_EXPIRES_IN: '60', AUTH_SESSION_UPDATE_AGE: '1', AUTH_SESSION_FRESH_AGE: '3' },
    });
    const timedClient = (): HttpClient => new HttpClient(timed().authUrl);

    it('refreshes a session older than the update age: later expiresAt, cookie re-set with the same value', async () => {
      const c = timedClient();
      await signUp(c);
      // disableRefresh: on a slow machine this read may already come after the update age.
      const young = await c.get<SessionAnswerJson>('get-session?disableRefresh=true');
      const created = young.json.session;
      expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).toBe(60_000);

      await untilClockPasses(Date.parse(created.createdAt) + 1000);
      const cookieBefore = c.cookie(cookieNames.sessionToken);
      const refreshed = await c.get<SessionAnswerJson>('get-session');
      expect(Date.parse(refreshed.json.session.expiresAt)).toBeGreaterThan(Date.parse(created.expiresAt));
      expect(Date.parse(refreshed.json.session.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
      expect(refreshed.json.session.createdAt).toBe(created.createdAt);
      const cookie = setCookieFor(refreshed, cookieNames.sessionToken);
      expect(cookie.value).toBe(cookieBefore);
      expect(cookie.attributes.get('max-age')).toBe('60');

      // The new lifetime is stored, not just answered.
      const again = await c.get<SessionAnswerJson>('get-session');
      expect(again.json.session.expiresAt).toBe(refreshed.json.session.expiresAt);
      const events = await timed().query(`SELECT 1 FROM events WHERE type = 'session.refreshed.v1' AND data->>'sessionId' = $1`, [created.id]);
      expect(events.length).toBeGreaterThanOrEqual(1);
    });

    it('does not refresh with disableRefresh=true, nor a rememberMe-false session', async () => {
      const c = timedClient();
      const { user } = await signUp(c);
      const notRemembered = timedClient();
      await signIn(notRemembered, { email: user.email, rememberMe: false });
      // disableRefresh: on a slow machine these reads may already come after the update age.
      const created = (await c.get<SessionAnswerJson>('get-session?disableRefresh=true')).json.session;
      const createdNotRemembered = (await notRemembered.get<SessionAnswerJson>('get-session?disableRefresh=true')).json.session;

      await untilClockPasses(Math.max(Date.parse(created.createdAt), Date.parse(createdNotRemembered.createdAt)) + 1000);
      const held = await c.get<SessionAnswerJson>('get-session?disableRefresh=true');
      expect(held.json.session.expiresAt).toBe(created.expiresAt);
      expect(held.setCookies).toEqual([]);
      const heldNotRemembered = await notRemembered.get<SessionAnswerJson>('get-session');
      expect(heldNotRemembered.json.session.expiresAt).toBe(createdNotRemembered.expiresAt);
      expect(heldNotRemembered.setCookies).toEqual([]);

      // The control: the same remembered session, asked without the flag, is due for a refresh.
      const refreshed = await c.get<SessionAnswerJson>('get-session');
      expect(Date.parse(refreshed.json.session.expiresAt)).toBeGreaterThan(Date.parse(created.expiresAt));
    });

    it('GET /list-sessions needs a fresh session: 403 SESSION_NOT_FRESH once it is older than the fresh age, refresh or not', async () => {
      const c = timedClient();
      const { token } = await signUp(c);
      // The first request after sign-up, well within the fresh age.
      const fresh = await c.get<SessionJson[]>('list-sessions');
      expect(fresh.status, fresh.text).toBe(200);
      const created = fresh.json.find((s) => s.token === token)!;

      await untilClockPasses(Date.parse(created.createdAt) + 3000);
      // A refresh renews the lifetime, not the freshness (better-auth measures freshness from createdAt).
      expect(setCookieFor(await c.get('get-session'), cookieNames.sessionToken).attributes.get('max-age')).toBe('60');
      expectCatalogueError(await c.get('list-sessions'), 'SESSION_NOT_FRESH');
      expect(errorCatalogue.SESSION_NOT_FRESH.status).toBe(403);
      // Unlinking an account asks the same freshness first, before it looks at the accounts.
      expectCatalogueError(await c.post('unlink-account', { providerId: 'credential' }), 'SESSION_NOT_FRESH');
    });
  });

  describe('expiry (AUTH_SESSION_EXPIRES_IN=2, AUTH_SESSION_UPDATE_AGE=3600)', () => {
    const short = useSystem({ redis: options.redis, env: { AUTH_SESSION_EXPIRES_IN: '2', AUTH_SESSION_UPDATE_AGE: '3600' } });

    it('treats an expired session as absent: null, cookies cleared, row deleted, session.revoked reason expired', async () => {
      const c = new HttpClient(short().authUrl);
      const { user } = await signUp(c);
      // With the Redis cache, the session table may show a new session a moment after the answer.
      const sessionRows = () => short().query<{ id: string; expiresAt: Date }>(`SELECT id, "expiresAt" FROM session WHERE "userId" = $1`, [user.id]);
      await waitFor(async () => (await sessionRows()).length > 0, { timeoutMs: 10_000, message: 'the session table to hold the session' });
      const rows = await sessionRows();
      expect(rows).toHaveLength(1);
      const { id, expiresAt } = rows[0]!;

      await untilClockPasses(expiresAt.getTime());
      const response = await c.get('get-session');
      expect(response.status).toBe(200);
      expect(response.json).toBeNull();
      for (const name of [cookieNames.sessionToken, cookieNames.sessionData, cookieNames.dontRemember]) expectCookieCleared(response, name);
      expect(await short().query(`SELECT id FROM session WHERE id = $1`, [id])).toEqual([]);
      expect(await revokedEvents(short(), id)).toEqual([{ reason: 'expired' }]);
    });
  });
}

describe('sessions (Postgres read model)', () => {
  sessionSuite({ redis: false });
});

describeWithRedis('sessions (Redis session cache)', () => {
  sessionSuite({ redis: true });
});
