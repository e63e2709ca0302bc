import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import {
  cookieNames,
  cookieSignature,
  DEFAULT_PASSWORD,
  expectCatalogueError,
  setCookieFor,
  sha256Hex,
  signIn,
  signUp,
  uniqueEmail,
  type SessionAnswerJson,
  type UserJson,
} from '../support/auth.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

// With the admin plugin's fields, as better-auth answers them with it on Postgres.
const USER_KEYS = ['banExpires', 'banReason', 'banned', 'createdAt', 'email', 'emailVerified', 'id', 'image', 'name', 'role', 'updatedAt'];
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY_MS = 86_400_000;

let system: System;
const client = (): HttpClient => new HttpClient(system.authUrl);

/** Every stored event whose whole row (type, data, metadata, ids) mentions `needle`. */
async function eventsMentioning(needle: string): Promise<number> {
  const rows = await system.query<{ n: string }>(`SELECT count(*) AS n FROM events e WHERE strpos(e::text, $1) > 0`, [needle]);
  return Number(rows[0]!.n);
}

beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system?.stop();
});

describe('POST /sign-up/email', () => {
  it('answers {token, user} with the user as better-auth shapes it and the email lower-cased', async () => {
    const email = uniqueEmail('mixed.case');
    const before = Date.now();
    const response = await client().post<{ token: string; user: UserJson }>('sign-up/email', {
      name: 'Ada Lovelace',
      email: email.toUpperCase(),
      password: DEFAULT_PASSWORD,
    });
    const after = Date.now();

    expect(response.status, response.text).toBe(200);
    expect(Object.keys(response.json).sort()).toEqual(['token', 'user']);
    const { token, user } = response.json;
    expect(token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(Object.keys(user).sort()).toEqual(USER_KEYS);
    expect(user).toMatchObject({ email, name: 'Ada Lovelace', image: null, emailVerified: false });
    expect(user.id).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(user.createdAt).toMatch(ISO_MILLIS);
    expect(user.updatedAt).toBe(user.createdAt);
    expect(Date.parse(user.createdAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(user.createdAt)).toBeLessThanOrEqual(after);

    const stored = await system.query<{ email: string }>(`SELECT email FROM "user" WHERE id = $1`, [user.id]);
    expect(stored).toEqual([{ email }]);
  });

  it('keeps the image it was given', async () => {
    const { user } = await signUp(client(), { image: 'https://example.com/ada.png' });
    expect(user.image).toBe('https://example.com/ada.png');
    const inline = 'data:image/png;base64,iVBORw0KGgo=';
    expect((await signUp(client(), { image: inline })).user.image).toBe(inline);
  });

  it('refuses an image that is not a picture on the web (javascript:, vbscript:, file:, data: other than raster images), on sign-up and update-user', async () => {
    const refused = [
      'javascript:alert(document.cookie)',
      'JavaScript:alert(1)',
      ' javascript:alert(1)',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
      'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=',
      'ftp://example.com/a.png',
      '/relative.png',
      'https://example.com/\u0007.png',
    ];
    const c = client();
    await signUp(c);
    for (const image of refused) {
      const signUpAnswer = await client().post<{ details: string }>('sign-up/email', { name: 'X', email: uniqueEmail('image'), password: DEFAULT_PASSWORD, image });
      expectCatalogueError(signUpAnswer, 'VALIDATION_ERROR');
      expect(signUpAnswer.json.details, image).toContain('[body.image]');
      expectCatalogueError(await c.post('update-user', { image }), 'VALIDATION_ERROR');
    }
    expect((await c.post('update-user', { image: 'https://example.com/new.png' })).status).toBe(200);
    expect((await c.post('update-user', { image: null })).status).toBe(200);
  });

  it('sets the signed session cookie better-auth sets: token.HMAC, URL-encoded, HttpOnly, Lax, a week long', async () => {
    const { token, response } = await signUp(client());
    const cookie = setCookieFor(response, cookieNames.sessionToken);

    const signed = decodeURIComponent(cookie.value);
    const dot = signed.lastIndexOf('.');
    expect(signed.slice(0, dot)).toBe(token);
    const signature = signed.slice(dot + 1);
    expect(signature).toHaveLength(44);
    expect(signature).toBe(cookieSignature(token, system.env.AUTH_SECRET!));
    // On the wire the signature's '+', '/' and '=' travel escaped, as better-call serializes them.
    expect(cookie.value).toBe(encodeURIComponent(`${token}.${signature}`));

    expect(cookie.attributes.get('httponly')).toBe(true);
    expect(cookie.attributes.get('samesite')).toBe('Lax');
    expect(cookie.attributes.get('path')).toBe('/');
    expect(cookie.attributes.get('max-age')).toBe('604800');
    // Plain http base URL: no Secure attribute (a browser would drop a Secure cookie over http).
    expect(cookie.attributes.has('secure')).toBe(false);
    // The bearer plugin's header carries the same signed value, unescaped.
    expect(response.headers.get('set-auth-token')).toBe(signed);
  });

  it('refuses an email that is already registered, in any letter case, with 422 USER_ALREADY_EXISTS', async () => {
    const email = uniqueEmail('taken');
    const first = await signUp(client(), { email });
    const again = await client().post('sign-up/email', { name: 'Other', email: email.toUpperCase(), password: 'another password' });
    expectCatalogueError(again, 'USER_ALREADY_EXISTS');
    expect(errorCatalogue.USER_ALREADY_EXISTS).toMatchObject({ status: 422, message: 'User already exists' });
    expect(again.setCookies).toEqual([]);
    const users = await system.query<{ id: string }>(`SELECT id FROM "user" WHERE email = $1`, [email]);
    expect(users).toEqual([{ id: first.user.id }]);
  });

  it("refuses a malformed email with 400 'Invalid email'", async () => {
    for (const email of ['not-an-email', 'a@', '@example.com', 'two@@example.com']) {
      const response = await client().post('sign-up/email', { name: 'X', email, password: DEFAULT_PASSWORD });
      expectCatalogueError(response, 'INVALID_EMAIL');
    }
    expect(errorCatalogue.INVALID_EMAIL.message).toBe('Invalid email');
  });

  it('enforces the default password bounds 8..128, inclusive, and writes nothing for a refused one', async () => {
    const tooShort = uniqueEmail('short');
    expectCatalogueError(await client().post('sign-up/email', { name: 'X', email: tooShort, password: 'x'.repeat(7) }), 'PASSWORD_TOO_SHORT');
    const tooLong = uniqueEmail('long');
    expectCatalogueError(await client().post('sign-up/email', { name: 'X', email: tooLong, password: 'x'.repeat(129) }), 'PASSWORD_TOO_LONG');
    expect(await eventsMentioning(tooShort)).toBe(0);
    expect(await eventsMentioning(tooLong)).toBe(0);

    await signUp(client(), { password: 'x'.repeat(8) });
    await signUp(client(), { password: 'x'.repeat(128) });
  });

  it('counts password length in characters (code points), not UTF-16 units', async () => {
    // 100 emoji are 200 UTF-16 units: within 8..128 characters.
    const { user } = await signUp(client(), { password: '😀'.repeat(100) });
    expect((await client().post('sign-in/email', { email: user.email, password: '😀'.repeat(100) })).status).toBe(200);
    // 4 emoji are 8 units but 4 characters.
    expectCatalogueError(await client().post('sign-up/email', { name: 'X', email: uniqueEmail('short'), password: '😀'.repeat(4) }), 'PASSWORD_TOO_SHORT');
    expectCatalogueError(await client().post('sign-in/email', { email: user.email, password: '😀'.repeat(129) }), 'PASSWORD_TOO_LONG');
  });

  it('takes a password typed another way (NFKC: full-width, ligatures, combining accents) as the same password', async () => {
    const { user } = await signUp(client(), { password: 'Ｃｏｒｒｅｃｔ ﬁsh café' });
    for (const typed of ['Correct fish café', 'Correct fish cafe\u0301', 'Ｃｏｒｒｅｃｔ ﬁsh café']) {
      const response = await client().post('sign-in/email', { email: user.email, password: typed });
      expect(response.status, `${JSON.stringify(typed)}: ${response.text}`).toBe(200);
    }
    expectCatalogueError(await client().post('sign-in/email', { email: user.email, password: 'correct fish café' }), 'INVALID_EMAIL_OR_PASSWORD');
  });

  it('answers schema failures with 400 VALIDATION_ERROR naming the fields', async () => {
    const missing = await client().post<{ details: string }>('sign-up/email', {});
    expectCatalogueError(missing, 'VALIDATION_ERROR');
    expect(missing.json.details).toContain('[body.name]');
    expect(missing.json.details).toContain('[body.email]');
    expect(missing.json.details).toContain('[body.password]');

    const wrongTypes = await client().post<{ details: string }>('sign-up/email', { name: null, email: 5, password: 5 });
    expectCatalogueError(wrongTypes, 'VALIDATION_ERROR');
    expect(wrongTypes.json.details).toMatch(/\[body\.name\].*\[body\.email\].*\[body\.password\]/);

    const signInWithoutPassword = await client().post<{ details: string }>('sign-in/email', { email: uniqueEmail('x') });
    expectCatalogueError(signInWithoutPassword, 'VALIDATION_ERROR');
    expect(signInWithoutPassword.json.details).toContain('[body.password]');
  });

  it('answers malformed JSON with 400 BAD_REQUEST', async () => {
    for (const path of ['sign-up/email', 'sign-in/email']) {
      const response = await client().request('POST', path, {
        rawBody: '{"email": "a@example.com", ',
        headers: { 'content-type': 'application/json' },
      });
      expectCatalogueError(response, 'BAD_REQUEST');
    }
  });

  it('never stores the password: the log carries an argon2id hash only', async () => {
    const password = `plain-${uniqueEmail('pw')}`;
    const { user } = await signUp(client(), { password });
    expect(await eventsMentioning(password)).toBe(0);
    const rows = await system.query<{ password: string }>(`SELECT password FROM account WHERE "userId" = $1`, [user.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.password).toMatch(/^\$argon2id\$/);
  });
});

describe('POST /sign-in/email', () => {
  it('answers {redirect: false, token, user} without a url, and a new session cookie', async () => {
    const email = uniqueEmail('signin');
    const up = await signUp(client(), { email });
    const c = client();
    const response = await c.post<Record<string, unknown>>('sign-in/email', { email: email.toUpperCase(), password: DEFAULT_PASSWORD });

    expect(response.status, response.text).toBe(200);
    expect(Object.keys(response.json).sort()).toEqual(['redirect', 'token', 'user']);
    expect(response.json.redirect).toBe(false);
    expect(response.json.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(response.json.token).not.toBe(up.token);
    expect(response.json.user).toEqual(up.user);
    expect(response.headers.get('location')).toBeNull();
    const cookie = setCookieFor(response, cookieNames.sessionToken);
    expect(decodeURIComponent(cookie.value).split('.')[0]).toBe(response.json.token);
    expect(cookie.attributes.get('max-age')).toBe('604800');
  });

  it('with a callbackURL answers {redirect: true, url} and a Location header, still 200', async () => {
    const { user } = await signUp(client());
    const response = await client().post<Record<string, unknown>>('sign-in/email', {
      email: user.email,
      password: DEFAULT_PASSWORD,
      callbackURL: '/dashboard',
    });
    expect(response.status, response.text).toBe(200);
    expect(response.json).toMatchObject({ redirect: true, url: '/dashboard', user: { id: user.id } });
    expect(response.headers.get('location')).toBe('/dashboard');
  });

  it('refuses a callbackURL off the site with 403 INVALID_CALLBACK_URL (spec section 5), and accepts its own origin', async () => {
    const { user } = await signUp(client());
    for (const callbackURL of ['https://evil.example/phish', '//evil.example/phish', '/\\evil.example', 'javascript:alert(1)', 'dashboard']) {
      const refused = await client().post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD, callbackURL });
      expectCatalogueError(refused, 'INVALID_CALLBACK_URL');
      expect(refused.setCookies).toEqual([]);
      expect(refused.headers.get('location')).toBeNull();
    }
    const onSite = `${system.baseUrl}/after-sign-in?x=1`;
    const accepted = await client().post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD, callbackURL: onSite });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.json).toMatchObject({ redirect: true, url: onSite });

    const signUpOffSite = await client().post('sign-up/email', {
      name: 'X',
      email: uniqueEmail('cb'),
      password: DEFAULT_PASSWORD,
      callbackURL: 'https://evil.example/',
    });
    expectCatalogueError(signUpOffSite, 'INVALID_CALLBACK_URL');
  });

  it('answers a wrong password and an unknown user alike: 401 INVALID_EMAIL_OR_PASSWORD, and logs the failure without the password', async () => {
    const { user } = await signUp(client());
    const wrongPassword = `wrong-${uniqueEmail('secret')}`;
    const wrong = await client().post('sign-in/email', { email: user.email, password: wrongPassword });
    expectCatalogueError(wrong, 'INVALID_EMAIL_OR_PASSWORD');
    expect(wrong.setCookies).toEqual([]);

    const unknownEmail = uniqueEmail('nobody');
    const unknownPassword = `unknown-${uniqueEmail('secret')}`;
    const unknown = await client().post('sign-in/email', { email: unknownEmail, password: unknownPassword });
    expectCatalogueError(unknown, 'INVALID_EMAIL_OR_PASSWORD');
    // Same answer either way, so the endpoint does not tell which emails have accounts.
    expect(unknown.json).toEqual(wrong.json);

    // Stored under the addresses' keyed names, the addresses encrypted (the unknown one under its own key).
    const failures = await system.events<{ stream_id: string }>(
      `SELECT type, data, metadata, stream_id FROM events WHERE type = 'credentials.sign_in_failed.v1' AND stream_id = ANY($1)
       ORDER BY position`,
      [[system.storedStreamId(`sign-in-${user.email}`), system.storedStreamId(`sign-in-${unknownEmail}`)]],
    );
    expect(failures.map((f) => f.data)).toEqual([
      { email: user.email, userId: user.id, reason: 'invalid_password' },
      { email: unknownEmail, userId: null, reason: 'user_not_found' },
    ]);
    expect(failures.map((f) => f.stream_id)).toEqual([system.storedStreamId(`sign-in-${user.email}`), system.storedStreamId(`sign-in-${unknownEmail}`)]);
    for (const failure of failures) {
      const stored = JSON.stringify([failure.data, failure.metadata]);
      expect(stored).not.toContain(wrongPassword);
      expect(stored).not.toContain(unknownPassword);
    }
    expect(await eventsMentioning(wrongPassword)).toBe(0);
    expect(await eventsMentioning(unknownPassword)).toBe(0);
  });

  it("refuses a malformed email with 400 'Invalid email' and an over-long password with PASSWORD_TOO_LONG", async () => {
    expectCatalogueError(await client().post('sign-in/email', { email: 'not-an-email', password: DEFAULT_PASSWORD }), 'INVALID_EMAIL');
    const { user } = await signUp(client());
    expectCatalogueError(await client().post('sign-in/email', { email: user.email, password: 'x'.repeat(129) }), 'PASSWORD_TOO_LONG');
  });

  it('with rememberMe false gives a one-day session in a browser-session cookie, plus a signed dont_remember cookie', async () => {
    const { user } = await signUp(client());
    const c = client();
    const before = Date.now();
    const { token, response } = await signIn(c, { email: user.email, rememberMe: false });
    const after = Date.now();

    const sessionCookie = setCookieFor(response, cookieNames.sessionToken);
    expect(decodeURIComponent(sessionCookie.value)).toBe(`${token}.${cookieSignature(token, system.env.AUTH_SECRET!)}`);
    expect(sessionCookie.attributes.has('max-age')).toBe(false);
    expect(sessionCookie.attributes.has('expires')).toBe(false);
    const dontRemember = setCookieFor(response, cookieNames.dontRemember);
    expect(dontRemember.value).toBe(encodeURIComponent(`true.${cookieSignature('true', system.env.AUTH_SECRET!)}`));
    expect(dontRemember.attributes.has('max-age')).toBe(false);
    expect(dontRemember.attributes.get('httponly')).toBe(true);

    const current = await c.get<SessionAnswerJson>('get-session');
    expect(current.json.session.token).toBe(token);
    const createdAt = Date.parse(current.json.session.createdAt);
    expect(createdAt).toBeGreaterThanOrEqual(before);
    expect(createdAt).toBeLessThanOrEqual(after);
    // One day, whatever the configured lifetime (better-auth's rule for sessions that are not remembered).
    expect(Date.parse(current.json.session.expiresAt) - createdAt).toBe(DAY_MS);

    // A later remembered sign-in on the same client drops the leftover dont_remember cookie.
    const remembered = await signIn(c, { email: user.email });
    const cleared = setCookieFor(remembered.response, cookieNames.dontRemember);
    expect(cleared.attributes.get('max-age')).toBe('0');
    expect(c.cookie(cookieNames.dontRemember)).toBeUndefined();
    expect(setCookieFor(remembered.response, cookieNames.sessionToken).attributes.get('max-age')).toBe('604800');
  });

  it('reads its own writes: get-session right after sign-in (no waiting) returns the new session', async () => {
    const { user } = await signUp(client());
    for (let i = 0; i < 3; i += 1) {
      const c = client();
      const { token } = await signIn(c, { email: user.email });
      const current = await c.get<SessionAnswerJson>('get-session');
      expect(current.status).toBe(200);
      expect(current.json?.session.token).toBe(token);
      expect(current.json?.user.id).toBe(user.id);
    }
  });
});

describe('bearer tokens', () => {
  it('accepts Authorization: Bearer with the bare token, the set-auth-token value, or its URL-encoded form', async () => {
    const { user } = await signUp(client());
    const { token, response } = await signIn(client(), { email: user.email });
    const signed = response.headers.get('set-auth-token');
    expect(signed).toBe(`${token}.${cookieSignature(token, system.env.AUTH_SECRET!)}`);

    for (const credential of [token, signed!, encodeURIComponent(signed!)]) {
      const current = await client().get<SessionAnswerJson>('get-session', { headers: { authorization: `Bearer ${credential}` } });
      expect(current.status).toBe(200);
      expect(current.json?.session.token).toBe(token);
      expect(current.json?.user.id).toBe(user.id);
    }
  });

  it('gets no session for a wrong signature, or for the token hash an event or the session table shows', async () => {
    const { user } = await signUp(client());
    const { token } = await signIn(client(), { email: user.email });
    const forged = `${token}.${cookieSignature(token, 'some other secret that is long enough!!')}`;
    for (const credential of [forged, sha256Hex(token)]) {
      const current = await client().get('get-session', { headers: { authorization: `Bearer ${credential}` } });
      expect(current.status).toBe(200);
      expect(current.json).toBeNull();
    }
  });
});

describe('token storage', () => {
  it('keeps session tokens out of the log and the session table, which holds sha256(token)', async () => {
    const { user, token: signUpToken } = await signUp(client());
    const { token } = await signIn(client(), { email: user.email });

    for (const raw of [signUpToken, token]) {
      expect(await eventsMentioning(raw)).toBe(0);
      const inSessions = await system.query(`SELECT id FROM session s WHERE strpos(s::text, $1) > 0`, [raw]);
      expect(inSessions).toEqual([]);
      const byHash = await system.query<{ userId: string }>(`SELECT "userId" FROM session WHERE token = $1`, [sha256Hex(raw)]);
      expect(byHash).toEqual([{ userId: user.id }]);
    }
    // The hash is what the log keeps (the session's creation, and its place in the user's session index), so
    // the search above would have found the token had it been there.
    expect(await eventsMentioning(sha256Hex(token))).toBe(2);
  });
});

describe('configured password bounds', () => {
  let bounded: System;
  beforeAll(async () => {
    bounded = await startSystem({ env: { AUTH_PASSWORD_MIN_LENGTH: '12', AUTH_PASSWORD_MAX_LENGTH: '16' } });
  });
  afterAll(async () => {
    await bounded?.stop();
  });

  it('applies AUTH_PASSWORD_MIN_LENGTH and AUTH_PASSWORD_MAX_LENGTH on sign-up and the maximum on sign-in', async () => {
    const c = new HttpClient(bounded.authUrl);
    const email = uniqueEmail('bounds');
    // Both refused passwords lie within the default 8..128, so only the configured bounds can refuse them.
    expectCatalogueError(await c.post('sign-up/email', { name: 'X', email, password: 'x'.repeat(11) }), 'PASSWORD_TOO_SHORT');
    expectCatalogueError(await c.post('sign-up/email', { name: 'X', email, password: 'x'.repeat(17) }), 'PASSWORD_TOO_LONG');
    await signUp(c, { email, password: 'x'.repeat(12) });
    await signUp(c, { password: 'x'.repeat(16) });
    expectCatalogueError(await c.post('sign-in/email', { email, password: 'x'.repeat(17) }), 'PASSWORD_TOO_LONG');
    await signIn(c, { email, password: 'x'.repeat(12) });
  });
});
