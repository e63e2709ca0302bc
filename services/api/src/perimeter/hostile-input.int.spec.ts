import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { sql, type Config } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { listedRoutes } from '../../../../tests/support/routes.ts';

/**
 * Hostile input against every route the api has, the ops endpoints included (enumerated from the app, so new
 * routes are covered the day they are added): generated bodies, queries, path parameters, content types,
 * credentials (a user's, an admin's, the server key) and origins. Every answer must be a 2xx/3xx or a
 * catalogued 4xx, never a 5xx; and a refusal must leave the event log as it was, apart from the records of
 * failed sign-ins that are the point of refusing them.
 *
 * In-process (`inject`) on real stores: a migrated Postgres with the projections running, as STYLE allows for
 * route specs. Reproduce a failure with the seed fast-check prints: PORTCULLIS_FUZZ_SEED=<seed>.
 */

const RUNS_PER_ROUTE = Number(process.env.PORTCULLIS_FUZZ_RUNS ?? 40);
const SEED = process.env.PORTCULLIS_FUZZ_SEED ? Number(process.env.PORTCULLIS_FUZZ_SEED) : undefined;
const BASE_URL = 'http://localhost:3000';
const PASSWORD = 'correct horse battery';
/** Refusals that are recorded on purpose: failed sign-ins and the locks they lead to. */
const FAILURE_RECORDS = /^credentials\.(username_|account_)?sign_in_(failed|locked)\.v\d+$/;

const SERVER_KEY = 'fuzz-server-key-0123456789abcdefghij';
/** In a generated body or query, the id of a user that exists (a fresh one per route), so admin handlers are reached. */
const VICTIM = '$VICTIM';

let api: InProcessApi;
let db: InProcessApi['db'];
/** The app every generated request goes to: its ADMIN_USER_IDS names `rootToken`'s user. */
let app: InProcessApi['app'];
let config: Config;
/** The root admin's session, which only makes admins: no generated request carries it. */
let rootToken: string;

beforeAll(async () => {
  api = await startInProcessApi('hostile_input', {
    AUTH_SECRET: 'fuzz-secret-fuzz-secret-fuzz-secret-fuzz',
    BASE_URL,
    AUTH_SERVER_API_KEY: SERVER_KEY,
    // Limits would answer most generated requests with 429 and hide the routes behind them.
    AUTH_RATE_LIMIT_ENABLED: 'false',
    AUTH_BRUTE_FORCE_PROTECTION: 'false',
    AUTH_COOKIE_CACHE_ENABLED: 'true',
  });
  ({ db, config } = api);
  app = api.app;
  const root = await freshSession();
  rootToken = root.token;
  app = await api.another({ env: { ADMIN_USER_IDS: root.userId } });
});

afterAll(async () => {
  await api?.close();
});

// ---------------------------------------------------------------------------------------------------------
// What a hostile client sends

const KNOWN_FIELDS = [
  'name', 'email', 'password', 'image', 'callbackURL', 'rememberMe', 'token', 'username', 'displayUsername',
  'newPassword', 'currentPassword', 'revokeOtherSessions', 'newEmail', 'redirectTo', 'errorCallbackURL',
  'newUserCallbackURL', 'disableCookieCache', 'disableRefresh', 'emailVerified', 'id', 'userId',
  // admin and organization bodies
  'banExpiresIn', 'banReason', 'role', 'sessionToken', 'permissions', 'data', 'slug', 'logo', 'organizationId',
  // list-users, the audit search, time travel and the mailbox
  'limit', 'offset', 'searchValue', 'filterField', 'filterValue', 'sortBy', 'user', 'stream', 'type', 'typePrefix',
  'organization', 'actor', 'actorKind', 'ip', 'from', 'to', 'cursor', 'at', 'diffFrom', 'status',
];
const POLLUTION_KEYS = ['__proto__', 'constructor', 'prototype'];

const hostileText = fc.oneof(
  { arbitrary: fc.string(), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary' }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme' }), weight: 1 },
  { arbitrary: fc.constantFrom('\uD800', '\uDFFF', 'ok\uDBFFx', '\uDC00lead', 'a\u0000b', '\u0000'), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '', ' ', 'null', 'true', '0', '__proto__', '../../etc/passwd', '<script>alert(1)</script>', "' OR 1=1 --",
      'https://evil.example/', '//evil.example', '/\\evil.example', '/dashboard', 'javascript:alert(1)', 'x@y', 'a@example.com',
      PASSWORD, 'é'.repeat(300), '😀'.repeat(200),
    ),
    weight: 3,
  },
  // Huge strings, some past the body limit.
  { arbitrary: fc.integer({ min: 256, max: 80_000 }).map((n) => 'x'.repeat(n)), weight: 1 },
);

const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: hostileText, weight: 6 },
    { arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)), weight: 3 },
    // Numbers past what a date, a bigint or a page can hold.
    { arbitrary: fc.constantFrom(1e20, -1e20, Number.MAX_VALUE, 2 ** 53 + 2, -1, 0.5, 8.64e15), weight: 1 },
    { arbitrary: fc.array(tie('value'), { maxLength: 3 }), weight: 1 },
    { arbitrary: fc.array(fc.tuple(fc.string({ maxLength: 8 }), tie('value')), { maxLength: 3 }).map((pairs) => Object.fromEntries(pairs)), weight: 1 },
  ),
})).value;

const hostileKey = fc.oneof(
  { arbitrary: fc.constantFrom(...KNOWN_FIELDS), weight: 6 },
  { arbitrary: fc.constantFrom(...POLLUTION_KEYS), weight: 1 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
);

/** JSON text of an object written key by key, so `__proto__` and duplicate keys survive as sent. */
const objectText = (base: Record<string, unknown>, pairs: ReadonlyArray<readonly [string, unknown]>): string =>
  `{${[...Object.entries(base), ...pairs].map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;

/** A body close to valid (so handlers are reached) with hostile fields on top. */
const plausibleBase = fc.record({
  name: fc.constant('Fuzz'),
  email: fc.integer({ min: 0, max: 1e9 }).map((n) => `fuzz-${n}@example.com`),
  password: fc.constant(PASSWORD),
});

/** Well-formed values for the fields the routes know, so generated bodies also get past validation. */
const plausibleFields = fc
  .tuple(
    fc.subarray(
      [
        ['name', 'Fuzz Name'], ['image', 'https://example.com/a.png'], ['token', 'not-a-real-token'], ['username', 'fuzz_user'],
        ['displayUsername', 'Fuzz'], ['newPassword', `${PASSWORD} 2`], ['currentPassword', PASSWORD], ['rememberMe', false],
        ['callbackURL', '/after'], ['revokeOtherSessions', false], ['disableRefresh', true], ['image', null],
        ['userId', VICTIM], ['userId', VICTIM], ['banExpiresIn', 1e20], ['banExpiresIn', 3600], ['role', 'admin'],
        ['slug', 'ＦＵＺＺ'], ['logo', 'javascript:alert(1)'], ['data', { banned: true, banExpires: '+275760-09-13T00:00:00.000Z' }],
      ] as Array<[string, unknown]>,
      { minLength: 1 },
    ),
    fc.integer({ min: 0, max: 1e9 }),
    fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 1 }),
  )
  .map(([fields, n, extra]) => objectText({ newEmail: `fuzz-new-${n}@example.com` }, [...fields, ...extra]));

interface Body {
  readonly payload?: string;
  readonly contentType?: string;
}

const bodyOf = (arbitrary: fc.Arbitrary<Body>, weight: number): fc.WeightedArbitrary<Body> => ({ arbitrary, weight });
const body: fc.Arbitrary<Body> = fc.oneof(
  bodyOf(fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 5 }).map((pairs) => ({ payload: objectText({}, pairs) })), 5),
  bodyOf(
    fc
      .tuple(plausibleBase, fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 2 }), fc.boolean())
      .map(([base, pairs, clean]) => [base, clean ? [] : pairs] as const)
      .map(([base, pairs]) => ({ payload: objectText(base, pairs) })),
    4,
  ),
  bodyOf(plausibleFields.map((payload) => ({ payload })), 4),
  bodyOf(hostileValue.map((v) => ({ payload: JSON.stringify(v) ?? 'null' })), 1),
  bodyOf(
    fc.constantFrom(
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      '{"a":1,"a":2}',
      '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
      `{"x":${'['.repeat(2000)}${']'.repeat(2000)}}`,
      '{"name":"\\ud800"}',
      '{',
      'null',
      '',
    ).map((payload) => ({ payload })),
    1,
  ),
  bodyOf(fc.string().map((payload) => ({ payload })), 1),
  bodyOf(fc.constant({}), 1),
).chain((b: Body) =>
  fc
    .oneof(
      { arbitrary: fc.constant('application/json'), weight: 8 },
      {
        arbitrary: fc.constantFrom(
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          'application/json; charset=latin1',
        ),
        weight: 2,
      },
    )
    .map((contentType) => (b.payload === undefined ? b : { ...b, contentType })),
);

/** Percent-encodes, and sometimes sends escapes that decode to nothing sensible. */
const queryValue = fc.oneof(
  { arbitrary: hostileText.filter((s) => s.length < 2000).map((s) => { try { return encodeURIComponent(s); } catch { return '%ED%A0%80'; } }), weight: 4 },
  { arbitrary: fc.constantFrom('%FF', '%ED%A0%80', '%00', '%', '%E0%A4%A', 'true', 'false', '1'), weight: 2 },
  { arbitrary: fc.constantFrom('1e20', '-1', '1e9', '99999999999999999999', '2026-01-01', '%3A%3Affff%3A1.2.3.4', VICTIM, `a%00${VICTIM}`), weight: 2 },
);
const query = fc.oneof(
  { arbitrary: fc.constant(''), weight: 3 },
  {
    arbitrary: fc.array(fc.tuple(hostileKey, queryValue), { minLength: 1, maxLength: 4 }).map((pairs) =>
      pairs.map(([k, v]) => { try { return `${encodeURIComponent(k)}=${v}`; } catch { return `x=${v}`; } }).join('&'),
    ),
    weight: 2,
  },
);

const pathParam = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }).map((s) => { try { return encodeURIComponent(s); } catch { return 'x'; } }),
  fc.constantFrom('..%2F..%2Fetc', '%00', `${VICTIM}%00`, '%FF', 'a'.repeat(300), 'valid-looking-token-1234567890ab', VICTIM),
);

/** A user's session, an admin's (by role, made by the root admin), a forged cookie, the server key, or nothing. */
type Credential = 'none' | 'cookie' | 'bearer' | 'forged' | 'admin' | 'server';
type OriginChoice = 'own' | 'none' | 'evil' | 'null';
const request = fc.record({
  credential: fc.constantFrom<Credential>('none', 'cookie', 'cookie', 'bearer', 'forged', 'admin', 'admin', 'server'),
  origin: fc.constantFrom<OriginChoice>('own', 'own', 'own', 'none', 'evil', 'null'),
  body,
  query,
  param: pathParam,
});

// ---------------------------------------------------------------------------------------------------------
// What counts as a good answer

const catalogued = new Set(Object.values(errorCatalogue).map((e) => `${e.status} ${e.message}`));
/** Where a route answers a catalogued refusal with a status of its own, as better-auth's route does. */
const routeStatuses: ReadonlyArray<{ readonly path: string; readonly answer: string }> = [
  // Every failure of a verification link without a callbackURL to send it to is 401.
  { path: '/api/auth/verify-email', answer: `401 ${errorCatalogue.INVALID_TOKEN.message}` },
  // The operators' view of one organization is a resource read: an unknown one is 404 (better-auth's routes say 400).
  { path: '/ops/organizations/', answer: `404 ${errorCatalogue.ORGANIZATION_NOT_FOUND.message}` },
  // better-auth's switch and reads of an organization refuse a caller who is not a member with 403 (clearing
  // it as the active one), and its permission check with 401.
  ...['set-active', 'get-organization', 'get-full-organization'].map((route) => ({
    path: `/api/auth/organization/${route}`,
    answer: `403 ${errorCatalogue.USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION.message}`,
  })),
  { path: '/api/auth/organization/has-permission', answer: `401 ${errorCatalogue.USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION.message}` },
];

function describeAnswer(response: LightMyRequestResponse): string {
  return `${response.statusCode} ${response.body.slice(0, 300)}`;
}

function expectAcceptable(response: LightMyRequestResponse, what: string): void {
  if (response.statusCode < 400) return;
  expect(response.statusCode, `${what} → ${describeAnswer(response)}`).toBeLessThan(500);
  let parsed: { code?: unknown; message?: unknown };
  try {
    parsed = JSON.parse(response.body) as typeof parsed;
  } catch {
    throw new Error(`${what} → a ${response.statusCode} without a JSON body: ${describeAnswer(response)}`);
  }
  expect(typeof parsed.code, `${what} → ${describeAnswer(response)}`).toBe('string');
  const answer = `${response.statusCode} ${String(parsed.message)}`;
  const routeOwn = routeStatuses.some((r) => what.includes(` ${r.path}`) && r.answer === answer);
  expect(catalogued.has(answer) || routeOwn, `${what} → not in the catalogue: ${describeAnswer(response)}`).toBe(true);
}

async function headPosition(): Promise<number> {
  return Number(await db.pool.oneFirst(sql.unsafe`SELECT coalesce(max(position), 0) FROM events`));
}

async function typesAfter(position: number): Promise<string[]> {
  return [...((await db.pool.anyFirst(sql.unsafe`SELECT type FROM events WHERE position > ${position} ORDER BY position`)) as readonly string[])];
}

interface Route {
  readonly method: string;
  readonly url: string;
}

/** Every route of the app (the auth API's and the ops endpoints) but HEAD and OPTIONS. */
function allRoutes(): Route[] {
  return listedRoutes(app).filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS');
}

let users = 0;

/** A new user with a session: a generated request may well sign it out, change its password or delete it. */
async function freshSession(): Promise<{ token: string; cookie: string; userId: string }> {
  users += 1;
  const response = await app.inject({
    method: 'POST',
    url: `${config.basePath}/sign-up/email`,
    headers: { 'content-type': 'application/json', origin: BASE_URL },
    payload: JSON.stringify({ name: 'Owner', email: `fuzz-owner-${users}@example.com`, password: PASSWORD }),
  });
  expect(response.statusCode, response.body).toBe(200);
  const setCookie = ([] as string[]).concat(response.headers['set-cookie'] ?? []);
  const cookie = setCookie.map((line) => line.split(';')[0]!).filter((pair) => !pair.endsWith('=')).join('; ');
  const answer = JSON.parse(response.body) as { token: string; user: { id: string } };
  return { token: answer.token, cookie, userId: answer.user.id };
}

/** A new user the root admin makes an admin by role: their session reaches the admin handlers. */
async function freshAdmin(): Promise<{ token: string }> {
  const admin = await freshSession();
  const response = await app.inject({
    method: 'POST',
    url: `${config.basePath}/admin/set-role`,
    headers: { authorization: `Bearer ${rootToken}` },
    payload: { userId: admin.userId, role: 'admin' },
  });
  expect(response.statusCode, response.body).toBe(200);
  return admin;
}

// ---------------------------------------------------------------------------------------------------------

describe('hostile input', () => {
  it('refuses the classic cases with a catalogued 400/413/415 and writes nothing', async () => {
    const signUp = `${config.basePath}/sign-up/email`;
    const cases: Array<[string, string, string, number, string]> = [
      ['lone surrogate', 'application/json', '{"name":"\\ud800","email":"s1@example.com","password":"correct horse battery"}', 400, 'VALIDATION_ERROR'],
      ['NUL', 'application/json', '{"name":"a\\u0000b","email":"s2@example.com","password":"correct horse battery"}', 400, 'VALIDATION_ERROR'],
      ['__proto__', 'application/json', '{"__proto__":{"admin":true},"name":"x","email":"s3@example.com","password":"correct horse battery"}', 400, ''],
      ['constructor', 'application/json', '{"constructor":1,"name":"x","email":"s4@example.com","password":"correct horse battery"}', 400, 'VALIDATION_ERROR'],
      ['prototype', 'application/json', '{"prototype":1,"name":"x","email":"s5@example.com","password":"correct horse battery"}', 400, 'VALIDATION_ERROR'],
      ['deep nesting', 'application/json', `{"name":${'['.repeat(50)}${']'.repeat(50)},"email":"s6@example.com","password":"x"}`, 400, 'VALIDATION_ERROR'],
      ['wrong types', 'application/json', '{"name":5,"email":["s7@example.com"],"password":{"a":1}}', 400, 'VALIDATION_ERROR'],
      ['huge body', 'application/json', `{"name":"${'x'.repeat(70_000)}","email":"s8@example.com","password":"correct horse battery"}`, 413, 'BODY_TOO_LARGE'],
      ['huge field', 'application/json', `{"name":"${'x'.repeat(5000)}","email":"s9@example.com","password":"correct horse battery"}`, 400, 'VALIDATION_ERROR'],
      ['unknown content type', 'text/plain', 'name=x', 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ['malformed JSON', 'application/json', '{"name":', 400, 'BAD_REQUEST'],
    ];
    const before = await headPosition();
    for (const [label, contentType, payload, status, code] of cases) {
      const response = await app.inject({ method: 'POST', url: signUp, headers: { 'content-type': contentType, origin: BASE_URL }, payload });
      expectAcceptable(response, label);
      expect(response.statusCode, `${label}: ${response.body}`).toBe(status);
      if (code) expect((JSON.parse(response.body) as { message: string }).message).toBe(errorCatalogue[code as keyof typeof errorCatalogue].message);
    }
    // Form bodies only where better-auth takes them.
    const form = await app.inject({
      method: 'POST',
      url: `${config.basePath}/update-user`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE_URL },
      payload: 'name=x',
    });
    expect(form.statusCode, form.body).toBe(415);
    expect(await typesAfter(before)).toEqual([]);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it(
    'answers generated requests on every route with 2xx/3xx or a catalogued 4xx, and leaves the log unchanged on refusal',
    { timeout: 240_000 },
    async () => {
      const routes = allRoutes();
      // The core routes at least, one with a path parameter among them, and the ops endpoints; others join as they are added.
      expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
        expect.arrayContaining(
          [
            'POST /sign-up/email', 'POST /sign-in/email', 'GET /get-session', 'POST /update-user', 'POST /revoke-session',
            'GET /reset-password/:token', 'POST /admin/ban-user', 'POST /admin/list-user-sessions',
          ].map((route) => route.replace(' ', ` ${config.basePath}`))
            .concat(['GET /ops/audit/events', 'GET /ops/audit/export', 'GET /ops/audit/users/:id', 'GET /ops/audit/organizations/:id', 'GET /ops/mailbox']),
        ),
      );

      for (const route of routes) {
        const [session, admin, victim] = await Promise.all([freshSession(), freshAdmin(), freshSession()]);
        const withVictim = (text: string): string => text.replaceAll(VICTIM, victim.userId);
        await fc.assert(
          fc.asyncProperty(request, async (r) => {
            const headers: Record<string, string> = {};
            if (r.credential === 'cookie') headers.cookie = session.cookie;
            if (r.credential === 'bearer') headers.authorization = `Bearer ${session.token}`;
            if (r.credential === 'forged') headers.cookie = `better-auth.session_token=${session.token}.${'A'.repeat(43)}%3D`;
            if (r.credential === 'admin') headers.authorization = `Bearer ${admin.token}`;
            if (r.credential === 'server') headers['x-api-key'] = SERVER_KEY;
            if (r.origin === 'own') headers.origin = BASE_URL;
            if (r.origin === 'evil') headers.origin = 'https://evil.example';
            if (r.origin === 'null') headers.origin = 'null';
            const path = route.url.replace(/:[A-Za-z]+/g, withVictim(r.param));
            const url = r.query ? `${path}?${withVictim(r.query)}` : path;
            const payload = r.body.payload === undefined ? undefined : withVictim(r.body.payload);
            const withBody = route.method !== 'GET' && payload !== undefined;
            if (withBody && r.body.contentType) headers['content-type'] = r.body.contentType;

            const before = await headPosition();
            const response = await app.inject({ method: route.method as 'GET', url, headers, ...(withBody ? { payload } : {}) });
            const what = `${route.method} ${url.slice(0, 200)} ${JSON.stringify(headers).slice(0, 200)} ${String(payload).slice(0, 200)}`;
            expectAcceptable(response, what);
            if (response.statusCode >= 400) {
              const written = (await typesAfter(before)).filter((type) => !FAILURE_RECORDS.test(type));
              expect(written, `${what} → ${describeAnswer(response)} but appended`).toEqual([]);
            }
          }),
          { numRuns: RUNS_PER_ROUTE, ...(SEED !== undefined ? { seed: SEED } : {}) },
        );
      }
      // Nothing generated reached Object.prototype in this process.
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );
});
