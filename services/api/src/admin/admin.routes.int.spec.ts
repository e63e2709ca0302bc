import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { expectOk, expectRefusal, type Answer } from '../../../../tests/support/organization-api.ts';
import { deleteRedisKeys, testRedisUrl, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';

const PASSWORD = 'correct horse battery';
const BASE = '/api/auth';

interface UserJson {
  id: string;
  email: string;
  name: string;
  role: string;
  banned: boolean;
  banReason: string | null;
  banExpires: string | null;
  emailVerified: boolean;
  username?: string;
}

interface SessionJson {
  id: string;
  userId: string;
  token: string;
  impersonatedBy: string | null;
}

interface Person {
  readonly userId: string;
  readonly email: string;
  readonly username: string;
  readonly headers: Record<string, string>;
}

/** `name=value` of each cookie an answer sets, over those a client already holds (max-age 0 drops one). */
function withCookies(jar: Map<string, string>, response: LightMyRequestResponse): Map<string, string> {
  const next = new Map(jar);
  for (const line of ([] as string[]).concat(response.headers['set-cookie'] ?? [])) {
    const [pair] = line.split(';');
    const at = pair!.indexOf('=');
    const name = pair!.slice(0, at);
    const value = pair!.slice(at + 1);
    if (/max-age=0/i.test(line) || value === '') next.delete(name);
    else next.set(name, value);
  }
  return next;
}

/** A browser's request: its cookies, and its origin (POSTs carrying cookies are origin-checked). */
const cookieHeader = (jar: Map<string, string>): Record<string, string> => ({
  cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
  origin: 'http://localhost:3000',
});

/**
 * The admin plugin over HTTP (`inject` on real stores, projections in-process; with Redis and a second api
 * process where Redis is reachable): permissions, the user and session actions, bans (at once on every
 * process, on every sign-in path, lifting themselves) and impersonation with its cookies, against better-auth
 * 1.7's statuses and messages.
 */
describe('admin routes', () => {
  let api: InProcessApi;
  /** The api with ADMIN_USER_IDS naming `root`; `other` is a second process without it. */
  let app: FastifyInstance;
  let other: FastifyInstance;
  let now = Date.now();
  const redisUrl = testRedisUrl();
  const redisPrefix = uniqueRedisPrefix();
  let root: Person;
  let alice: Person;
  let bob: Person;
  let carol: Person;

  async function call<T = unknown>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    on: FastifyInstance = app,
  ): Promise<Answer<T> & { response: LightMyRequestResponse }> {
    const response = await on.inject({ method, url: `${BASE}${path}`, headers, ...(body !== undefined ? { payload: body as object } : {}) });
    return { status: response.statusCode, json: (response.body ? JSON.parse(response.body) : null) as T, response };
  }

  let people = 0;
  async function signUp(label: string): Promise<Person> {
    people += 1;
    const username = `${label}_${people}`;
    const email = `${label}-${people}@example.com`;
    const answer = expectOk<{ token: string; user: { id: string } }>(
      await call('POST', '/sign-up/email', { name: label, email, password: PASSWORD, username }, {}, api.app),
    );
    return { userId: answer.user.id, email, username, headers: { authorization: `Bearer ${answer.token}` } };
  }

  async function signIn(person: { email: string }, on: FastifyInstance = app): Promise<Answer<{ token: string; user: UserJson }> & { response: LightMyRequestResponse }> {
    return call('POST', '/sign-in/email', { email: person.email, password: PASSWORD }, {}, on);
  }

  async function sessionOf(headers: Record<string, string>, on: FastifyInstance = app): Promise<{ session: SessionJson; user: UserJson } | null> {
    return expectOk(await call('GET', '/get-session?disableCookieCache=true', undefined, headers, on));
  }

  beforeAll(async () => {
    api = await startInProcessApi(
      'admin_routes',
      {
        AUTH_SECRET: 'admin-routes-secret-0123456789abcdefghijkl',
        BASE_URL: 'http://localhost:3000',
        AUTH_RATE_LIMIT_ENABLED: 'false',
        ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: redisPrefix } : {}),
      },
      { clock: () => new Date(now) },
    );
    root = await signUp('root');
    alice = await signUp('alice');
    bob = await signUp('bob');
    carol = await signUp('carol');
    app = await api.another({ env: { ADMIN_USER_IDS: `other-admin, ${root.userId}` } });
    other = api.app;
    expectOk(await call('POST', '/admin/set-role', { userId: alice.userId, role: 'admin' }, root.headers));
  });

  afterAll(async () => {
    await api?.close();
    if (redisUrl) await deleteRedisKeys(redisUrl, redisPrefix);
  });

  describe('who may', () => {
    it('answers 401 without a session', async () => {
      expectRefusal(await call('GET', '/admin/list-users'), 'UNAUTHORIZED');
      expectRefusal(await call('POST', '/admin/ban-user', { userId: bob.userId }), 'UNAUTHORIZED');
    });

    it('refuses a user without the permission with the action\'s own message', async () => {
      expectRefusal(await call('GET', '/admin/list-users', undefined, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS');
      expectRefusal(await call('POST', '/admin/set-role', { userId: bob.userId, role: 'admin' }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE');
      expectRefusal(await call('POST', '/admin/ban-user', { userId: carol.userId }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
      expectRefusal(await call('POST', '/admin/impersonate-user', { userId: carol.userId }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS');
      expectRefusal(await call('POST', '/admin/remove-user', { userId: carol.userId }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS');
      expectRefusal(await call('POST', '/admin/list-user-sessions', { userId: carol.userId }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS');
      expectRefusal(await call('POST', '/admin/revoke-user-sessions', { userId: carol.userId }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS');
      expectRefusal(await call('POST', '/admin/set-user-password', { userId: carol.userId, newPassword: 'another password' }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD');
      expectRefusal(await call('GET', `/admin/get-user?id=${carol.userId}`, undefined, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_GET_USER');
      expectRefusal(await call('POST', '/admin/create-user', { email: 'x@example.com', name: 'x' }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS');
      expectRefusal(await call('POST', '/admin/update-user', { userId: carol.userId, data: { name: 'x' } }, bob.headers), 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS');
    });

    it('lets ADMIN_USER_IDS pass whatever their role, and only on the process configured so', async () => {
      expect((await sessionOf(root.headers))!.user.role).toBe('user');
      expectOk(await call('GET', '/admin/list-users', undefined, root.headers));
      expectRefusal(await call('GET', '/admin/list-users', undefined, root.headers, other), 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS');
    });

    it('lets a user whose role grants it pass on every process, the role shown on the session', async () => {
      expect((await sessionOf(alice.headers, other))!.user.role).toBe('admin');
      expectOk(await call('GET', '/admin/list-users', undefined, alice.headers, other));
    });

    it('keeps a role-based admin from impersonating admins, by role or by id', async () => {
      const admin2 = await signUp('admin2');
      expectOk(await call('POST', '/admin/set-role', { userId: admin2.userId, role: ['user', 'admin'] }, alice.headers));
      expectRefusal(await call('POST', '/admin/impersonate-user', { userId: admin2.userId }, alice.headers), 'YOU_CANNOT_IMPERSONATE_ADMINS');
      expectRefusal(await call('POST', '/admin/impersonate-user', { userId: root.userId }, alice.headers), 'YOU_CANNOT_IMPERSONATE_ADMINS');
      // An admin user id may (better-auth: adminUserIds pass every check, impersonate-admins included).
      expectOk(await call('POST', '/admin/impersonate-user', { userId: admin2.userId }, root.headers));
    });

    it('answers has-permission for the caller', async () => {
      const ask = (headers: Record<string, string>, body: unknown) => call('POST', '/admin/has-permission', body, headers);
      expect(expectOk(await ask(alice.headers, { permissions: { user: ['list', 'ban'], session: ['revoke'] } }))).toEqual({ error: null, success: true });
      expect(expectOk(await ask(alice.headers, { permissions: { user: ['impersonate-admins'] } }))).toEqual({ error: null, success: false });
      expect(expectOk(await ask(bob.headers, { permissions: { user: ['list'] } }))).toEqual({ error: null, success: false });
      expect(expectOk(await ask(root.headers, { permissions: { user: ['impersonate-admins'] } }))).toEqual({ error: null, success: true });
      expect(expectOk(await ask(alice.headers, { permission: { user: ['list'] } }))).toEqual({ error: null, success: true });
      expectRefusal(await ask(alice.headers, {}), 'INVALID_PERMISSION_CHECK');
      expectRefusal(await call('POST', '/admin/has-permission', { permissions: { user: ['list'] } }), 'UNAUTHORIZED');
    });
  });

  describe('users', () => {
    it('creates a user with a password account, a role and verified email, who can then sign in', async () => {
      const created = expectOk<{ user: UserJson }>(
        await call('POST', '/admin/create-user', { email: 'Dora@Example.com', name: 'Dora', password: PASSWORD, role: 'admin', data: { emailVerified: true } }, root.headers),
      );
      expect(created.user).toMatchObject({ email: 'dora@example.com', name: 'Dora', role: 'admin', banned: false, banReason: null, banExpires: null, emailVerified: true });
      expect(expectOk<{ user: UserJson }>(await signIn({ email: 'dora@example.com' })).user.role).toBe('admin');
      expectRefusal(await call('POST', '/admin/create-user', { email: 'dora@example.com', name: 'Dora' }, root.headers), 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL');
      expectRefusal(await call('POST', '/admin/create-user', { email: 'not-an-email', name: 'x' }, root.headers), 'INVALID_EMAIL');
      const plain = expectOk<{ user: UserJson }>(await call('POST', '/admin/create-user', { email: 'eve@example.com', name: 'Eve' }, root.headers));
      expect(plain.user).toMatchObject({ role: 'user', emailVerified: false });
      expect(await api.db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM account WHERE "userId" = ${plain.user.id}`)).toBe(0);
    });

    it('gets, updates and sets roles, 404 for nobody', async () => {
      expect(expectOk<UserJson>(await call('GET', `/admin/get-user?id=${carol.userId}`, undefined, alice.headers))).toMatchObject({ id: carol.userId, role: 'user' });
      expectRefusal(await call('GET', '/admin/get-user?id=nobody', undefined, alice.headers), 'USER_NOT_FOUND');
      const updated = expectOk<UserJson>(await call('POST', '/admin/update-user', { userId: carol.userId, data: { name: 'Carol C.' } }, alice.headers));
      expect(updated).toMatchObject({ id: carol.userId, name: 'Carol C.' });
      expectRefusal(await call('POST', '/admin/update-user', { userId: carol.userId, data: {} }, alice.headers), 'NO_DATA_TO_UPDATE');
      expectRefusal(await call('POST', '/admin/update-user', { userId: carol.userId, data: { password: 'x' } }, alice.headers), 'PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER');
      expectRefusal(await call('POST', '/admin/update-user', { userId: 'nobody', data: { name: 'x' } }, alice.headers), 'USER_NOT_FOUND');
      const roled = expectOk<{ user: UserJson }>(await call('POST', '/admin/set-role', { userId: carol.userId, role: ['user', 'support'] }, alice.headers));
      expect(roled.user.role).toBe('user,support');
      expect((await sessionOf(carol.headers, other))!.user).toMatchObject({ name: 'Carol C.', role: 'user,support' });
      expectRefusal(await call('POST', '/admin/set-role', { userId: 'nobody', role: 'admin' }, alice.headers), 'USER_NOT_FOUND');
      expect(await api.db.pool.oneFirst(sql.unsafe`SELECT role FROM "user" WHERE id = ${carol.userId}`)).toBe('user,support');
    });

    it('records every admin action naming the acting admin', async () => {
      const metadata = (await api.db.pool.oneFirst(sql.unsafe`
        SELECT metadata FROM events WHERE type = 'user.role_changed.v1' AND data->>'userId' = ${carol.userId} ORDER BY position DESC LIMIT 1`)) as { actorId: string; actor?: unknown };
      expect(metadata.actorId).toBe(alice.userId);
      expect(metadata.actor).toMatchObject({ kind: 'admin', id: alice.userId });
    });

    it('sets a user\'s password, which then signs in', async () => {
      const frank = await signUp('frank');
      expectOk(await call('POST', '/admin/set-user-password', { userId: frank.userId, newPassword: 'a brand new password' }, root.headers));
      expectRefusal(await signIn(frank), 'INVALID_EMAIL_OR_PASSWORD');
      expectOk(await call('POST', '/sign-in/email', { email: frank.email, password: 'a brand new password' }));
      expectRefusal(await call('POST', '/admin/set-user-password', { userId: frank.userId, newPassword: 'short' }, root.headers), 'PASSWORD_TOO_SHORT');
    });

    it('removes a user with every session, but not themself', async () => {
      const gina = await signUp('gina');
      expectRefusal(await call('POST', '/admin/remove-user', { userId: alice.userId }, alice.headers), 'YOU_CANNOT_REMOVE_YOURSELF');
      expect(expectOk(await call('POST', '/admin/remove-user', { userId: gina.userId }, alice.headers))).toEqual({ success: true });
      expect(await sessionOf(gina.headers, other)).toBeNull();
      expectRefusal(await call('GET', `/admin/get-user?id=${gina.userId}`, undefined, alice.headers), 'USER_NOT_FOUND');
      expectRefusal(await signIn(gina), 'INVALID_EMAIL_OR_PASSWORD');
      expectRefusal(await call('POST', '/admin/remove-user', { userId: gina.userId }, alice.headers), 'USER_NOT_FOUND');
    });
  });

  describe('list-users', () => {
    const tag = 'lister';
    beforeAll(async () => {
      for (const [i, name] of ['Zed', 'Amy', 'Max', 'Bea', 'Kim'].entries()) {
        // Apart in time: without a sort, users come in the order they were created.
        now += 1000;
        expectOk(await call('POST', '/admin/create-user', { email: `${tag}${i}-${name.toLowerCase()}@list.example`, name: `${name} ${tag}`, role: i === 2 ? 'admin' : 'user' }, root.headers));
      }
    });

    const list = async (query: string) =>
      expectOk<{ users: UserJson[]; total: number; limit?: number; offset?: number }>(await call('GET', `/admin/list-users?${query}`, undefined, alice.headers));

    it('searches email by prefix, contains and suffix, and name', async () => {
      const prefixed = await list(`searchValue=${tag}&searchOperator=starts_with&searchField=email`);
      expect(prefixed.total).toBe(5);
      expect(prefixed.users.map((u) => u.name)).toEqual(['Zed lister', 'Amy lister', 'Max lister', 'Bea lister', 'Kim lister']);
      expect((await list('searchValue=-amy@')).users.map((u) => u.name)).toEqual(['Amy lister']);
      expect((await list('searchValue=list.example&searchOperator=ends_with')).total).toBe(5);
      expect((await list(`searchValue=Bea&searchField=name&searchOperator=starts_with`)).users.map((u) => u.name)).toEqual(['Bea lister']);
      // LIKE's own characters are searched for as themselves.
      expect((await list('searchValue=%25')).total).toBe(0);
    });

    it('filters, sorts and pages, with the total of what matched', async () => {
      const admins = await list(`searchValue=${tag}&filterField=role&filterValue=admin`);
      expect(admins.users.map((u) => u.name)).toEqual(['Max lister']);
      const sorted = await list(`searchValue=${tag}&sortBy=name&sortDirection=desc&limit=2&offset=1`);
      expect(sorted).toMatchObject({ total: 5, limit: 2, offset: 1 });
      expect(sorted.users.map((u) => u.name)).toEqual(['Max lister', 'Kim lister']);
      const notAdmins = await list(`searchValue=${tag}&filterField=role&filterValue=admin&filterOperator=ne`);
      expect(notAdmins.total).toBe(4);
      const verified = await list(`searchValue=${tag}&filterField=emailVerified&filterValue=false`);
      expect(verified.total).toBe(5);
    });

    it('answers an empty list for a field users do not have, as better-auth', async () => {
      expect(await list('filterField=password&filterValue=x')).toEqual({ users: [], total: 0 });
    });
  });

  describe('bans', () => {
    it('ends every session at once on every process, and refuses sign-in by email and username with 403', async () => {
      const dan = await signUp('dan');
      const second = expectOk<{ token: string }>(await signIn(dan, other));
      const secondHeaders = { authorization: `Bearer ${second.token}` };
      // Both processes hold the sessions before the ban.
      expect(await sessionOf(dan.headers, other)).not.toBeNull();
      expect(await sessionOf(secondHeaders, app)).not.toBeNull();
      const banned = expectOk<{ user: UserJson }>(await call('POST', '/admin/ban-user', { userId: dan.userId, banReason: 'spam' }, alice.headers));
      expect(banned.user).toMatchObject({ id: dan.userId, banned: true, banReason: 'spam', banExpires: null });
      for (const [headers, on] of [[dan.headers, app], [dan.headers, other], [secondHeaders, app], [secondHeaders, other]] as const) {
        expect(await sessionOf(headers, on)).toBeNull();
      }
      expectRefusal(await signIn(dan), 'BANNED_USER');
      expectRefusal(await signIn(dan, other), 'BANNED_USER');
      expectRefusal(await call('POST', '/sign-in/username', { username: dan.username, password: PASSWORD }), 'BANNED_USER');
      // A wrong password is still just that.
      expectRefusal(await call('POST', '/sign-in/email', { email: dan.email, password: 'wrong password!' }), 'INVALID_EMAIL_OR_PASSWORD');
      const reasons = await api.db.pool.anyFirst(sql.unsafe`
        SELECT data->>'reason' FROM events WHERE type = 'session.revoked.v2' AND data->>'userId' = ${dan.userId}`);
      expect(reasons).toEqual(['banned', 'banned']);
      const listed = expectOk<{ users: UserJson[] }>(await call('GET', `/admin/list-users?filterField=banned&filterValue=true&searchValue=${encodeURIComponent(dan.email)}`, undefined, alice.headers));
      expect(listed.users.map((u) => u.id)).toEqual([dan.userId]);

      const unbanned = expectOk<{ user: UserJson }>(await call('POST', '/admin/unban-user', { userId: dan.userId }, alice.headers));
      expect(unbanned.user).toMatchObject({ banned: false, banReason: null, banExpires: null });
      expect(expectOk<{ user: UserJson }>(await signIn(dan)).user.banned).toBe(false);
    });

    it('refuses an admin banning themself, and a user that does not exist', async () => {
      expectRefusal(await call('POST', '/admin/ban-user', { userId: alice.userId }, alice.headers), 'YOU_CANNOT_BAN_YOURSELF');
      expectRefusal(await call('POST', '/admin/ban-user', { userId: 'nobody' }, alice.headers), 'USER_NOT_FOUND');
    });

    it('lifts a ban with an expiry by itself once it passes, cleared at the next sign-in', async () => {
      const erin = await signUp('erin');
      const banned = expectOk<{ user: UserJson }>(await call('POST', '/admin/ban-user', { userId: erin.userId, banExpiresIn: 60 }, alice.headers));
      expect(banned.user.banReason).toBe('No reason');
      expect(Date.parse(banned.user.banExpires!)).toBe(now + 60_000);
      expectRefusal(await signIn(erin), 'BANNED_USER');
      now += 61_000;
      const signedIn = expectOk<{ user: UserJson }>(await signIn(erin));
      expect(signedIn.user).toMatchObject({ banned: false, banReason: null, banExpires: null });
      expect(expectOk<UserJson>(await call('GET', `/admin/get-user?id=${erin.userId}`, undefined, alice.headers)).banned).toBe(false);
    });

    it('bans through update-user too, ending sessions', async () => {
      const fay = await signUp('fay');
      const updated = expectOk<UserJson>(await call('POST', '/admin/update-user', { userId: fay.userId, data: { banned: true, banReason: 'abuse' } }, alice.headers));
      expect(updated).toMatchObject({ banned: true, banReason: 'abuse' });
      expect(await sessionOf(fay.headers, other)).toBeNull();
      expectRefusal(await call('POST', '/admin/update-user', { userId: alice.userId, data: { banned: true } }, alice.headers), 'YOU_CANNOT_BAN_YOURSELF');
    });
  });

  describe('user sessions', () => {
    it('lists a user\'s sessions and revokes one, then all, on every process', async () => {
      const hal = await signUp('hal');
      const more = expectOk<{ token: string }>(await signIn(hal, other));
      const listed = expectOk<{ sessions: SessionJson[] }>(await call('POST', '/admin/list-user-sessions', { userId: hal.userId }, alice.headers));
      expect(listed.sessions).toHaveLength(2);
      expect(listed.sessions.every((s) => s.userId === hal.userId && s.impersonatedBy === null)).toBe(true);
      // The hash list-user-sessions shows (in place of the token) revokes the session it names.
      const target = listed.sessions.find((s) => s.token !== hashToken(more.token))!;
      expect(target.token).toBe(hashToken(hal.headers.authorization!.slice('Bearer '.length)));
      expect(expectOk(await call('POST', '/admin/revoke-user-session', { sessionToken: target.token }, alice.headers))).toEqual({ success: true });
      expect(await sessionOf(hal.headers, other)).toBeNull();
      const moreHeaders = { authorization: `Bearer ${more.token}` };
      expect(await sessionOf(moreHeaders, app)).not.toBeNull();
      expectOk(await call('POST', '/admin/revoke-user-sessions', { userId: hal.userId }, alice.headers));
      expect(await sessionOf(moreHeaders, app)).toBeNull();
      expect(await sessionOf(moreHeaders, other)).toBeNull();
      expect(expectOk<{ sessions: SessionJson[] }>(await call('POST', '/admin/list-user-sessions', { userId: hal.userId }, alice.headers)).sessions).toEqual([]);
    });
  });

  describe('impersonation', () => {
    it('opens an hour-long session of the user, keeps the admin\'s aside, and restores it', async () => {
      const ivy = await signUp('ivy');
      const adminSignIn = await signIn(alice);
      let jar = withCookies(new Map(), adminSignIn.response);
      const impersonated = await call<{ session: SessionJson & { expiresAt: string }; user: UserJson }>(
        'POST',
        '/admin/impersonate-user',
        { userId: ivy.userId },
        cookieHeader(jar),
      );
      const answer = expectOk<{ session: SessionJson & { expiresAt: string }; user: UserJson }>(impersonated);
      expect(answer.user.id).toBe(ivy.userId);
      expect(answer.session).toMatchObject({ userId: ivy.userId, impersonatedBy: alice.userId });
      expect(Date.parse(answer.session.expiresAt)).toBe(now + 3600_000);
      jar = withCookies(jar, impersonated.response);
      expect([...jar.keys()].some((name) => name.endsWith('.admin_session'))).toBe(true);

      const asIvy = await sessionOf(cookieHeader(jar), other);
      expect(asIvy).toMatchObject({ user: { id: ivy.userId }, session: { impersonatedBy: alice.userId } });
      // Ivy's own list does not show the session an admin opened as her; the admin's list does.
      const ownList = expectOk<SessionJson[]>(await call('GET', '/list-sessions', undefined, ivy.headers));
      expect(ownList.every((s) => s.impersonatedBy === null)).toBe(true);
      const adminList = expectOk<{ sessions: SessionJson[] }>(await call('POST', '/admin/list-user-sessions', { userId: ivy.userId }, alice.headers));
      expect(adminList.sessions.filter((s) => s.impersonatedBy === alice.userId)).toHaveLength(1);

      // What the impersonation session does names the admin behind it.
      expectOk(await call('POST', '/update-user', { name: 'Ivy (by support)' }, cookieHeader(jar)));
      const metadata = (await api.db.pool.oneFirst(sql.unsafe`
        SELECT metadata FROM events WHERE type = 'user.updated.v1' AND data->>'userId' = ${ivy.userId} ORDER BY position DESC LIMIT 1`)) as {
        actorId: string;
        impersonatedBy?: string;
      };
      expect(metadata).toMatchObject({ actorId: ivy.userId, impersonatedBy: alice.userId });

      const stopped = await call<{ session: SessionJson; user: UserJson }>('POST', '/admin/stop-impersonating', undefined, cookieHeader(jar));
      expect(expectOk<{ session: SessionJson; user: UserJson }>(stopped)).toMatchObject({ user: { id: alice.userId }, session: { userId: alice.userId, impersonatedBy: null } });
      const impersonationHeaders = cookieHeader(jar);
      jar = withCookies(jar, stopped.response);
      expect([...jar.keys()].some((name) => name.endsWith('.admin_session'))).toBe(false);
      expect(await sessionOf(cookieHeader(jar), other)).toMatchObject({ user: { id: alice.userId } });
      // The impersonation session is over everywhere.
      expect(await sessionOf(impersonationHeaders, other)).toBeNull();
      expectRefusal(await call('POST', '/admin/stop-impersonating', undefined, cookieHeader(jar)), 'YOU_ARE_NOT_IMPERSONATING_ANYONE');
      expectRefusal(await call('POST', '/admin/stop-impersonating'), 'UNAUTHORIZED');
    });

    it('ends after its hour', async () => {
      const jon = await signUp('jon');
      const impersonated = expectOk<{ session: SessionJson }>(await call('POST', '/admin/impersonate-user', { userId: jon.userId }, alice.headers));
      const headers = { authorization: `Bearer ${impersonated.session.token}` };
      expect(await sessionOf(headers)).not.toBeNull();
      now += 3601_000;
      expect(await sessionOf(headers)).toBeNull();
    });

    it('refuses a banned user, and a user that does not exist', async () => {
      const kai = await signUp('kai');
      expectOk(await call('POST', '/admin/ban-user', { userId: kai.userId }, alice.headers));
      expectRefusal(await call('POST', '/admin/impersonate-user', { userId: kai.userId }, alice.headers), 'BANNED_USER');
      expectRefusal(await call('POST', '/admin/impersonate-user', { userId: 'nobody' }, alice.headers), 'USER_NOT_FOUND');
    });
  });
});
