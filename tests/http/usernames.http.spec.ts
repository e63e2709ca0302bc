import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import {
  cookieNames,
  DEFAULT_PASSWORD,
  expectCatalogueError,
  signUp,
  uniqueEmail,
  type SessionAnswerJson,
  type UserJson,
} from '../support/auth.ts';
import { describeWithRedis } from '../support/redis.ts';
import { HttpClient, startSystem, type HttpResponse, type System } from '../support/system.ts';

interface UsernameUserJson extends UserJson {
  username?: string;
  displayUsername?: string;
}
interface SignInAnswer {
  redirect: boolean;
  token: string;
  url?: string;
  user: UsernameUserJson;
}

/** A username no other test uses: letters and digits, `prefix` first (at most 30 characters in all). */
function uniqueUsername(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

async function count(system: System, text: string, values: unknown[] = []): Promise<number> {
  const rows = await system.query<{ n: string }>(text, values);
  return Number(rows[0]!.n);
}

function signUpWith(system: System, fields: Record<string, unknown>, client = new HttpClient(system.authUrl)) {
  return client.post<{ token: string; user: UsernameUserJson }>('sign-up/email', {
    name: 'Ada',
    email: uniqueEmail('username'),
    password: DEFAULT_PASSWORD,
    ...fields,
  });
}

describe('usernames (better-auth username plugin)', () => {
  let system: System;
  const client = (): HttpClient => new HttpClient(system.authUrl);

  beforeAll(async () => {
    system = await startSystem({ env: { AUTH_DELETE_USER_ENABLED: 'true' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  describe('POST /sign-up/email with a username', () => {
    it('stores the username lower-cased, shows it as typed, and answers both on the user', async () => {
      const typed = uniqueUsername('Ada_L.');
      const response = await signUpWith(system, { username: typed });
      expect(response.status, response.text).toBe(200);
      expect(response.json.user).toMatchObject({ username: typed.toLowerCase(), displayUsername: typed });

      const rows = await system.query(`SELECT username, "displayUsername" FROM "user" WHERE id = $1`, [response.json.user.id]);
      expect(rows).toEqual([{ username: typed.toLowerCase(), displayUsername: typed }]);
      // Reserved in the same append as the user: one reservation event, on the lower-cased stream.
      const reservations = await system.events(`SELECT stream_id, type, data, metadata FROM events WHERE type = 'username.reserved.v1' AND data->>'userId' = $1`, [
        response.json.user.id,
      ]);
      expect(reservations.map(({ stream_id, data }) => ({ stream_id, data }))).toEqual([
        { stream_id: system.storedStreamId(`username-${typed.toLowerCase()}`), data: { username: typed.toLowerCase(), userId: response.json.user.id } },
      ]);
    });

    it('keeps a given display username', async () => {
      const username = uniqueUsername('ada');
      const response = await signUpWith(system, { username, displayUsername: 'Ada Lovelace!' });
      expect(response.status, response.text).toBe(200);
      expect(response.json.user).toMatchObject({ username, displayUsername: 'Ada Lovelace!' });
    });

    it('takes a display username that is a valid username as the username too', async () => {
      const display = uniqueUsername('Countess');
      const response = await signUpWith(system, { displayUsername: display });
      expect(response.status, response.text).toBe(200);
      expect(response.json.user).toMatchObject({ username: display.toLowerCase(), displayUsername: display });
    });

    it('keeps a display username that is not a valid username, without a username', async () => {
      const response = await signUpWith(system, { displayUsername: 'Ada L.' });
      expect(response.status, response.text).toBe(200);
      expect(response.json.user.displayUsername).toBe('Ada L.');
      expect(response.json.user).not.toHaveProperty('username');
    });

    it('answers a user without username fields when none are given (as before)', async () => {
      const { user } = await signUp(client());
      expect(user).not.toHaveProperty('username');
      expect(user).not.toHaveProperty('displayUsername');
    });

    it("refuses usernames that break the rules with 422 and the spec's messages, writing nothing", async () => {
      const cases = [
        ['ab', 'USERNAME_TOO_SHORT'],
        ['a'.repeat(31), 'USERNAME_TOO_LONG'],
        ['ada lovelace', 'INVALID_USERNAME'],
        ['ada-l', 'INVALID_USERNAME'],
        ['adä', 'INVALID_USERNAME'],
      ] as const;
      for (const [username, code] of cases) {
        const email = uniqueEmail('bad-username');
        const response = await signUpWith(system, { username, email });
        expectCatalogueError(response, code);
        expect(await count(system, `SELECT count(*) AS n FROM events WHERE stream_id = $1`, [system.storedStreamId(`email-${email.toLowerCase()}`)])).toBe(0);
      }
      expect(errorCatalogue.USERNAME_TOO_SHORT).toEqual({ status: 422, message: 'username is too short' });
      expect(errorCatalogue.USERNAME_TOO_LONG).toEqual({ status: 422, message: 'username is too long' });
      expect(errorCatalogue.INVALID_USERNAME).toEqual({ status: 422, message: 'username is invalid' });
    });

    it('accepts the bounds themselves: 3 and 30 characters', async () => {
      for (const username of [`a${randomBytes(1).toString('hex')}`, `b${randomBytes(10).toString('hex')}`.padEnd(30, '_')]) {
        const response = await signUpWith(system, { username });
        expect(response.status, `${username}: ${response.text}`).toBe(200);
      }
    });

    it('refuses a username taken in any letter case with 422, and leaves no trace of the attempt', async () => {
      const username = uniqueUsername('taken');
      expect((await signUpWith(system, { username })).status).toBe(200);
      const email = uniqueEmail('second');
      const again = await signUpWith(system, { username: username.toUpperCase(), email });
      expectCatalogueError(again, 'USERNAME_IS_ALREADY_TAKEN');
      expect(errorCatalogue.USERNAME_IS_ALREADY_TAKEN).toEqual({ status: 422, message: 'username is already taken. please try another.' });
      expect(again.setCookies).toEqual([]);
      expect(await count(system, `SELECT count(*) AS n FROM "user" WHERE email = $1`, [email])).toBe(0);
      expect(await count(system, `SELECT count(*) AS n FROM events WHERE stream_id = $1`, [`email-${email}`])).toBe(0);
    });
  });

  describe('POST /sign-in/username', () => {
    let username: string;
    let email: string;
    let userId: string;
    beforeAll(async () => {
      username = uniqueUsername('Signer');
      email = uniqueEmail('signer');
      const response = await signUpWith(system, { username, email });
      expect(response.status, response.text).toBe(200);
      userId = response.json.user.id;
    });

    it('signs in by username in any letter case, answering token and user with the username fields, and sets the cookie', async () => {
      const c = client();
      const response = await c.post<SignInAnswer>('sign-in/username', { username: username.toUpperCase(), password: DEFAULT_PASSWORD });
      expect(response.status, response.text).toBe(200);
      expect(response.json).toMatchObject({ redirect: false, user: { id: userId, email, username: username.toLowerCase(), displayUsername: username } });
      expect(response.json.token).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(response.json).not.toHaveProperty('url');
      expect(c.cookie(cookieNames.sessionToken)).toBeDefined();

      // Read-your-writes: the session is there at once, with the username fields on its user.
      const session = await c.get<SessionAnswerJson & { user: UsernameUserJson }>('get-session');
      expect(session.json.session.token).toBe(response.json.token);
      expect(session.json.user).toMatchObject({ id: userId, username: username.toLowerCase(), displayUsername: username });
      const stored = await system.query(`SELECT data->>'method' AS method FROM events WHERE type = 'session.created.v2' AND data->>'sessionId' = $1`, [
        session.json.session.id,
      ]);
      expect(stored).toEqual([{ method: 'username-password' }]);
    });

    it('echoes a callbackURL as url and Location, and keeps rememberMe false to a browser-session cookie', async () => {
      const response = await client().post<SignInAnswer>('sign-in/username', {
        username,
        password: DEFAULT_PASSWORD,
        rememberMe: false,
        callbackURL: '/dashboard',
      });
      expect(response.status, response.text).toBe(200);
      expect(response.json).toMatchObject({ redirect: true, url: '/dashboard' });
      expect(response.headers.get('location')).toBe('/dashboard');
      const cookie = response.setCookies.find((line) => line.startsWith(`${cookieNames.sessionToken}=`));
      expect(cookie).toBeDefined();
      expect(cookie).not.toMatch(/Max-Age/i);
      expect(response.setCookies.some((line) => line.startsWith(`${cookieNames.dontRemember}=`))).toBe(true);
    });

    it('answers a wrong password and an unknown username alike (401), recording both without the password', async () => {
      const attempted = `wrong-${randomBytes(6).toString('hex')}`;
      const wrong = await client().post('sign-in/username', { username, password: attempted });
      const unknownName = uniqueUsername('nobody');
      const unknown = await client().post('sign-in/username', { username: unknownName, password: attempted });
      for (const response of [wrong, unknown]) {
        expectCatalogueError(response, 'INVALID_USERNAME_OR_PASSWORD');
        expect(response.setCookies).toEqual([]);
      }
      expect(unknown.json).toEqual(wrong.json);
      expect(errorCatalogue.INVALID_USERNAME_OR_PASSWORD).toEqual({ status: 401, message: 'invalid username or password' });

      const [known, nobody] = [system.storedStreamId(`sign-in-username-${username.toLowerCase()}`), system.storedStreamId(`sign-in-username-${unknownName}`)];
      const failures = await system.events<{ stream_id: string }>(
        `SELECT stream_id, type, data, metadata FROM events WHERE type = 'credentials.username_sign_in_failed.v1' AND stream_id = ANY($1) ORDER BY position`,
        [[known, nobody]],
      );
      expect(failures.map(({ stream_id, data }) => ({ stream_id, data }))).toEqual([
        { stream_id: known, data: { username: username.toLowerCase(), userId, reason: 'invalid_password' } },
        { stream_id: nobody, data: { username: unknownName, userId: null, reason: 'user_not_found' } },
      ]);
      expect(await count(system, `SELECT count(*) AS n FROM events e WHERE strpos(e::text, $1) > 0`, [attempted])).toBe(0);
    });

    it('answers an empty username or password with 401, and a username breaking the rules with 422', async () => {
      expectCatalogueError(await client().post('sign-in/username', { username: '', password: DEFAULT_PASSWORD }), 'INVALID_USERNAME_OR_PASSWORD');
      expectCatalogueError(await client().post('sign-in/username', { username, password: '' }), 'INVALID_USERNAME_OR_PASSWORD');
      expectCatalogueError(await client().post('sign-in/username', { username: 'ab', password: DEFAULT_PASSWORD }), 'USERNAME_TOO_SHORT');
      expectCatalogueError(await client().post('sign-in/username', { username: 'x'.repeat(31), password: DEFAULT_PASSWORD }), 'USERNAME_TOO_LONG');
      expectCatalogueError(await client().post('sign-in/username', { username: 'a@b.c', password: DEFAULT_PASSWORD }), 'INVALID_USERNAME');
      expectCatalogueError(await client().post('sign-in/username', { username }), 'VALIDATION_ERROR');
      expectCatalogueError(await client().post('sign-in/username', { username, password: 'x'.repeat(129) }), 'PASSWORD_TOO_LONG');
    });

    it('refuses an off-site callbackURL', async () => {
      const response = await client().post('sign-in/username', { username, password: DEFAULT_PASSWORD, callbackURL: 'https://evil.example/x' });
      expectCatalogueError(response, 'INVALID_CALLBACK_URL');
    });
  });

  describe('POST /is-username-available', () => {
    it('answers {available} as better-auth, comparing lower-cased', async () => {
      const username = uniqueUsername('Avail');
      expect((await client().post('is-username-available', { username })).json).toEqual({ available: true });
      expect((await signUpWith(system, { username })).status).toBe(200);
      for (const asked of [username, username.toLowerCase(), username.toUpperCase()]) {
        const response = await client().post('is-username-available', { username: asked });
        expect(response.status).toBe(200);
        expect(response.json).toEqual({ available: false });
      }
    });

    it('refuses a username breaking the rules with 422', async () => {
      expectCatalogueError(await client().post('is-username-available', { username: '' }), 'INVALID_USERNAME');
      expectCatalogueError(await client().post('is-username-available', { username: 'ab' }), 'USERNAME_TOO_SHORT');
      expectCatalogueError(await client().post('is-username-available', { username: 'a'.repeat(31) }), 'USERNAME_TOO_LONG');
      expectCatalogueError(await client().post('is-username-available', { username: 'no way' }), 'INVALID_USERNAME');
      expectCatalogueError(await client().post('is-username-available', {}), 'VALIDATION_ERROR');
    });
  });

  describe('POST /update-user with username fields', () => {
    it('changes the username: the new one is reserved, the old one released, the display username kept', async () => {
      const c = client();
      const first = uniqueUsername('First');
      const signedUp = await signUpWith(system, { username: first }, c);
      expect(signedUp.status).toBe(200);
      const second = uniqueUsername('Second');

      const update = await c.post('update-user', { username: second });
      expect(update.status, update.text).toBe(200);
      expect(update.json).toEqual({ status: true });

      const session = await c.get<{ user: UsernameUserJson }>('get-session');
      expect(session.json.user).toMatchObject({ username: second.toLowerCase(), displayUsername: first });
      expect((await client().post('is-username-available', { username: first })).json).toEqual({ available: true });
      expect((await client().post('is-username-available', { username: second })).json).toEqual({ available: false });
      // The change, the reservation and the release were one append: the same position range, one request.
      const rows = await system.query<{ type: string; stream_id: string }>(
        `SELECT type, stream_id FROM events WHERE metadata->>'requestId' = (
           SELECT metadata->>'requestId' FROM events WHERE type = 'username.released.v1' AND stream_id = $1) ORDER BY position`,
        [system.storedStreamId(`username-${first.toLowerCase()}`)],
      );
      expect(rows.map((r) => r.type).sort()).toEqual(['user.username_changed.v1', 'username.released.v1', 'username.reserved.v1']);

      // Someone else can now take the old one; the user can sign in only with the new one.
      expect((await signUpWith(system, { username: first })).status).toBe(200);
      expect((await client().post('sign-in/username', { username: second, password: DEFAULT_PASSWORD })).status).toBe(200);
    });

    it("refuses another user's username (any case) with 422 and changes nothing", async () => {
      const taken = uniqueUsername('Holder');
      expect((await signUpWith(system, { username: taken })).status).toBe(200);
      const c = client();
      const own = uniqueUsername('Own');
      expect((await signUpWith(system, { username: own }, c)).status).toBe(200);
      expectCatalogueError(await c.post('update-user', { username: taken.toUpperCase(), name: 'Changed' }), 'USERNAME_IS_ALREADY_TAKEN');
      const session = await c.get<{ user: UsernameUserJson }>('get-session');
      expect(session.json.user).toMatchObject({ username: own.toLowerCase(), name: 'Ada' });
    });

    it('accepts the own username again, sets a display username alone, and checks the rules', async () => {
      const c = client();
      const own = uniqueUsername('Mine');
      expect((await signUpWith(system, { username: own }, c)).status).toBe(200);
      expect((await c.post('update-user', { username: own.toUpperCase() })).status).toBe(200);
      expect((await c.post('update-user', { displayUsername: 'The Countess' })).status).toBe(200);
      const session = await c.get<{ user: UsernameUserJson }>('get-session');
      expect(session.json.user).toMatchObject({ username: own.toLowerCase(), displayUsername: 'The Countess' });

      // Bidirectional overrides and controls would let a name display as another (\u202Enimda shows "admin").
      for (const displayUsername of ['\u202Enimda', 'ad\u2066min', 'x\u200Fy', 'line\u2028break', 'tab\there', 'nul\u0085']) {
        const refused = await c.post<{ details: string }>('update-user', { displayUsername });
        expectCatalogueError(refused, 'VALIDATION_ERROR');
        expect(refused.json.details).toContain('[body.displayUsername]');
        expectCatalogueError(await signUpWith(system, { username: uniqueUsername('bidi'), displayUsername }), 'VALIDATION_ERROR');
      }
      expect((await c.post('update-user', { displayUsername: 'Ada 👩‍💻 Ōkubo' })).status).toBe(200);
      expectCatalogueError(await c.post('update-user', { username: 'ab' }), 'USERNAME_TOO_SHORT');
      expectCatalogueError(await c.post('update-user', { username: 'bad name' }), 'INVALID_USERNAME');
      expectCatalogueError(await client().post('update-user', { username: uniqueUsername('anon') }), 'UNAUTHORIZED');
    });

    it('frees the username of a deleted user, in the same append as the deletion', async () => {
      const c = client();
      const username = uniqueUsername('Gone');
      expect((await signUpWith(system, { username }, c)).status).toBe(200);
      const deleted = await c.post('delete-user', {});
      expect(deleted.status, deleted.text).toBe(200);
      expect((await client().post('is-username-available', { username })).json).toEqual({ available: true });
      const released = await system.query<{ stream_id: string }>(
        `SELECT e.stream_id FROM events e JOIN events d ON d.metadata->>'requestId' = e.metadata->>'requestId'
         WHERE d.type = 'user.deleted.v1' AND e.type = 'username.released.v1' AND e.stream_id = $1`,
        [system.storedStreamId(`username-${username.toLowerCase()}`)],
      );
      expect(released).toHaveLength(1);
      expect((await signUpWith(system, { username: username.toUpperCase() })).status).toBe(200);
    });

    it('gives a user without a username one, with the typed form as display username', async () => {
      const c = client();
      await signUp(c);
      const username = uniqueUsername('Late');
      expect((await c.post('update-user', { username })).status).toBe(200);
      const session = await c.get<{ user: UsernameUserJson }>('get-session');
      expect(session.json.user).toMatchObject({ username: username.toLowerCase(), displayUsername: username });
    });
  });

  describe('uniqueness under concurrency', () => {
    const PARALLEL = 16;

    it(`lets exactly one of ${PARALLEL} parallel sign-ups with one username (in mixed case) win`, async () => {
      const username = uniqueUsername('Race');
      const responses: HttpResponse<{ user: UsernameUserJson }>[] = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          signUpWith(system, { username: i % 2 === 0 ? username.toLowerCase() : username.toUpperCase(), email: uniqueEmail(`race${i}`) }),
        ),
      );
      const winners = responses.filter((r) => r.status === 200);
      expect(winners, responses.map((r) => `${r.status} ${r.text}`).join('\n')).toHaveLength(1);
      for (const loser of responses.filter((r) => r.status !== 200)) expectCatalogueError(loser, 'USERNAME_IS_ALREADY_TAKEN');

      const lower = username.toLowerCase();
      expect(await count(system, `SELECT count(*) AS n FROM "user" WHERE username = $1`, [lower])).toBe(1);
      expect(await count(system, `SELECT count(*) AS n FROM events WHERE stream_id = $1`, [system.storedStreamId(`username-${lower}`)])).toBe(1);
      // No orphan: the only registration in the log is the winner's (the losers wrote nothing at all).
      const registered = await system.events<{ data: { email: string } }>(`SELECT type, data, metadata FROM events WHERE type = 'user.registered.v1'`);
      expect(registered.filter((r) => r.data.email.startsWith('race'))).toHaveLength(1);
    });

    it(`lets exactly one of ${PARALLEL / 2} users racing to rename to one username win`, async () => {
      const clients = await Promise.all(
        Array.from({ length: PARALLEL / 2 }, async () => {
          const c = client();
          await signUp(c);
          return c;
        }),
      );
      const target = uniqueUsername('Prize');
      const responses = await Promise.all(clients.map((c, i) => c.post('update-user', { username: i % 2 ? target : target.toUpperCase() })));
      const winners = responses.filter((r) => r.status === 200);
      expect(winners, responses.map((r) => `${r.status} ${r.text}`).join('\n')).toHaveLength(1);
      for (const loser of responses.filter((r) => r.status !== 200)) expectCatalogueError(loser, 'USERNAME_IS_ALREADY_TAKEN');
      expect(await count(system, `SELECT count(*) AS n FROM "user" WHERE username = $1`, [target.toLowerCase()])).toBe(1);
      const changes = await system.events<{ data: { username: string | null } }>(`SELECT type, data, metadata FROM events WHERE type = 'user.username_changed.v1'`);
      expect(changes.filter((c) => c.data.username === target.toLowerCase())).toHaveLength(1);
    });
  });
});

describe('usernames with email verification required and custom bounds', () => {
  let system: System;
  beforeAll(async () => {
    system = await startSystem({
      env: { AUTH_REQUIRE_EMAIL_VERIFICATION: 'true', AUTH_USERNAME_MIN_LENGTH: '5', AUTH_USERNAME_MAX_LENGTH: '12' },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it("refuses an unverified account's username sign-in with 403 'email not verified' (code EMAIL_NOT_VERIFIED), after the password", async () => {
    const c = new HttpClient(system.authUrl);
    const username = `v${randomBytes(4).toString('hex')}`;
    const signedUp = await signUpWith(system, { username }, c);
    expect(signedUp.status, signedUp.text).toBe(200);
    const verificationMails = () =>
      count(system, `SELECT count(*) AS n FROM events WHERE type = 'mail.job_queued.v1' AND data->>'kind' = 'verification' AND data->>'userId' = $1`, [
        signedUp.json.user.id,
      ]);
    const mailsBefore = await verificationMails();

    const response = await c.post('sign-in/username', { username, password: DEFAULT_PASSWORD });
    expect(response.status, response.text).toBe(403);
    expect(response.json).toEqual({ code: 'EMAIL_NOT_VERIFIED', message: 'email not verified' });
    expectCatalogueError(response, 'USERNAME_EMAIL_NOT_VERIFIED');
    expect(response.setCookies).toEqual([]);
    // A wrong password still says only that the credentials are wrong.
    expectCatalogueError(await c.post('sign-in/username', { username, password: 'not the password' }), 'INVALID_USERNAME_OR_PASSWORD');
    // The refused sign-in queued a new verification mail (better-auth's sendOnSignIn); the wrong password did not.
    expect(await verificationMails()).toBe(mailsBefore + 1);
  });

  it('answers a sign-up with a taken address like a new one, username fields included, and reserves nothing', async () => {
    const email = uniqueEmail('taken-address');
    expect((await signUpWith(system, { email, username: `f${randomBytes(4).toString('hex')}` })).status).toBe(200);
    const fresh = await signUpWith(system, { username: `g${randomBytes(4).toString('hex')}` });
    const username = `h${randomBytes(4).toString('hex')}`;
    const undisclosed = await signUpWith(system, { email, username: username.toUpperCase() });
    expect(undisclosed.status, undisclosed.text).toBe(200);
    expect(Object.keys(undisclosed.json.user).sort()).toEqual(Object.keys(fresh.json.user).sort());
    expect(undisclosed.json.user).toMatchObject({ username, displayUsername: username.toUpperCase() });
    expect((await new HttpClient(system.authUrl).post('is-username-available', { username })).json).toEqual({ available: true });
  });

  it('applies the configured bounds', async () => {
    expectCatalogueError(await signUpWith(system, { username: 'abcd' }), 'USERNAME_TOO_SHORT');
    expectCatalogueError(await signUpWith(system, { username: 'abcdefghijklm' }), 'USERNAME_TOO_LONG');
    const ok = await signUpWith(system, { username: `c${randomBytes(2).toString('hex')}` });
    expect(ok.status, ok.text).toBe(200);
  });
});

describeWithRedis('usernames through the Redis session cache', () => {
  let system: System;
  beforeAll(async () => {
    system = await startSystem({ redis: true });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('caches the username fields with the session and rewrites them when they change', async () => {
    const c = new HttpClient(system.authUrl);
    const username = uniqueUsername('Cached');
    expect((await signUpWith(system, { username }, c)).status).toBe(200);
    let session = await c.get<{ user: UsernameUserJson }>('get-session');
    expect(session.json.user).toMatchObject({ username: username.toLowerCase(), displayUsername: username });

    const renamed = uniqueUsername('Renamed');
    expect((await c.post('update-user', { username: renamed, displayUsername: 'Shown' })).status).toBe(200);
    session = await c.get<{ user: UsernameUserJson }>('get-session');
    expect(session.json.user).toMatchObject({ username: renamed.toLowerCase(), displayUsername: 'Shown' });

    const other = new HttpClient(system.authUrl);
    const signedIn = await other.post<SignInAnswer>('sign-in/username', { username: renamed, password: DEFAULT_PASSWORD });
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(signedIn.json.user).toMatchObject({ username: renamed.toLowerCase(), displayUsername: 'Shown' });
  });
});
