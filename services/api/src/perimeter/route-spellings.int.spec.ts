import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountLifecycleEndpoints, type Endpoint } from '@portcullis/contracts';
import { sql, type Config } from '@portcullis/platform';
import { FakeCaptchaVendor } from '../../../../tests/support/captcha-vendor.ts';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { rawRequest } from '../../../../tests/support/raw-request.ts';
import { listedRoutes } from '../../../../tests/support/routes.ts';

/**
 * The perimeter decides on the route the router dispatches to, so every spelling of a path that reaches a
 * route meets that route's rules: percent-encoded characters (`/api/auth/%73ign-in/email`, which the router
 * decodes) and absolute-form request lines (`POST http://host/api/auth/sign-in/email HTTP/1.1`, which it
 * accepts). For every route the app has, generated spellings are sent over a real socket, and each must get
 * the answer the canonical path gets and be counted in the same rate-limit bucket, under the same limit.
 *
 * What the perimeter decides is made visible by requests it stops: a captcha endpoint without a token
 * (400), a cookie-carrying POST from a foreign origin (403), a cross-site form navigation to a sign-in
 * (403), a bucket filled to the tight limits' 3 beforehand (429 on a tight route only), and the row the
 * count lands in. In-process on real Postgres, with the fake captcha vendor.
 */

const RUNS_PER_ROUTE = Number(process.env.PORTCULLIS_SPELLING_RUNS ?? 12);
const SEED = process.env.PORTCULLIS_SPELLING_SEED ? Number(process.env.PORTCULLIS_SPELLING_SEED) : undefined;
const BASE_URL = 'http://localhost:3000';

let vendor: FakeCaptchaVendor;
let api: InProcessApi;
let config: Config;
let port: number;

beforeAll(async () => {
  vendor = await FakeCaptchaVendor.start();
  api = await startInProcessApi('route_spellings', {
    AUTH_SECRET: 'spelling-secret-spelling-secret-0123',
    BASE_URL,
    AUTH_RATE_LIMIT_ENABLED: 'true',
    AUTH_RATE_LIMIT_STORAGE: 'postgres',
    // Every count in the store, where the spec reads it.
    AUTH_RATE_LIMIT_BATCH_MS: '0',
    // Each request names its own client, so no request meets another's count.
    AUTH_TRUSTED_PROXIES: 'loopback',
    AUTH_CAPTCHA_PROVIDER: 'cloudflare-turnstile',
    AUTH_CAPTCHA_SECRET_KEY: 'spelling-captcha-secret',
    AUTH_CAPTCHA_VERIFY_URL: vendor.url('/siteverify'),
  });
  config = api.config;
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  port = (api.app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await api?.close();
  await vendor?.close();
});

interface Route {
  readonly method: 'GET' | 'POST';
  /** The pattern, `/api/auth/reset-password/:token`. */
  readonly pattern: string;
}

/** Every GET and POST route of the app, from fastify's tree (as the hostile-input fuzz reads it). */
function routes(): Route[] {
  const found: Route[] = listedRoutes(api.app)
    .filter((r) => r.method === 'GET' || r.method === 'POST')
    .map((r) => ({ method: r.method as Route['method'], pattern: r.url }));
  // A plugin's root route under a prefix is one route the router lists twice (`/reference` and
  // `/reference/`), both dispatched as the slash-less pattern: the twin is not a route of its own.
  // A static plugin's wildcard (`/reference/*`) hands a path no file has to the 404 handler, counted as
  // unrouted like any unknown path; the page itself and its generated parts are routes of their own.
  const listed = new Set(found.map((r) => `${r.method} ${r.pattern}`));
  return found.filter(
    (r) => !r.pattern.endsWith('*') && !(r.pattern.length > 1 && r.pattern.endsWith('/') && listed.has(`${r.method} ${r.pattern.slice(0, -1)}`)),
  );
}

/**
 * The bucket a route's requests are counted in: its pattern under the base path, or the current path of the
 * operation it is another name of (`/forget-password` is `/request-password-reset`), as its declaration says.
 */
const renamed = new Map<string, string>(
  Object.values(accountLifecycleEndpoints).flatMap((e: Endpoint) => (e.sameOperationAs ? [[e.path, e.sameOperationAs] as const] : [])),
);
const bucketOf = (route: Route): string => {
  const path = route.pattern.slice(config.basePath.length);
  return renamed.get(path) ?? path;
};

/** A concrete path of the route: parameters filled with a token-like value. */
const concretePath = (route: Route): string => route.pattern.replace(/:[A-Za-z]+/g, 'Tok3n-value_x');

/** The probes that make the perimeter's decisions visible (see the spec's description). */
type Probe = 'foreign-cookie-post' | 'cross-site-navigation' | 'tight-bucket-full';
const probes: readonly Probe[] = ['foreign-cookie-post', 'cross-site-navigation', 'tight-bucket-full'];

/** How a path is written: each character but `/` may be percent-encoded (either hex case), and the line may be absolute. */
interface Spelling {
  readonly encode: readonly boolean[];
  readonly upperHex: readonly boolean[];
  readonly absolute: null | { readonly scheme: string; readonly authority: string };
  readonly query: boolean;
}

function spell(path: string, spelling: Spelling): string {
  let written = '';
  [...path].forEach((char, i) => {
    if (char === '/' || !spelling.encode[i % spelling.encode.length]) {
      written += char;
      return;
    }
    const hex = char.charCodeAt(0).toString(16).padStart(2, '0');
    written += `%${spelling.upperHex[i % spelling.upperHex.length] ? hex.toUpperCase() : hex.toLowerCase()}`;
  });
  if (spelling.query) written += '?spelled=1';
  return spelling.absolute ? `${spelling.absolute.scheme}://${spelling.absolute.authority}${written}` : written;
}

const spelling: fc.Arbitrary<Spelling> = fc.record({
  encode: fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
  upperHex: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
  absolute: fc.option(
    fc.record({
      scheme: fc.constantFrom('http', 'https', 'HTTP', 'Http'),
      authority: fc.constantFrom('localhost:3000', 'localhost', 'evil.example', '127.0.0.1:1', 'x'),
    }),
    { freq: 3 },
  ),
  query: fc.boolean(),
});

let clients = 0;
/** A client address no other request of this run uses (the api believes loopback's X-Forwarded-For). */
function nextClient(): string {
  clients += 1;
  return `10.${(clients >> 16) & 255}.${(clients >> 8) & 255}.${clients & 255}`;
}

interface Answer {
  readonly status: number;
  readonly code: string | null;
  /** Where the request was counted: the bucket under the client's address, and its count, or null. */
  readonly counted: { readonly bucket: string; readonly count: number; readonly windowSeconds: number } | null;
}

/** `sentAt`: when the request left (ms since the epoch); its window is measured from then, not from this read. */
async function countsOf(client: string, sentAt: number): Promise<Answer['counted']> {
  // From the send, not the read: on a loaded host the read may come seconds after the answer.
  const rows = (await api.db.pool.any(sql.unsafe`
    SELECT key, count, round(EXTRACT(EPOCH FROM window_ends_at) - ${sentAt / 1000}::float8)::int AS seconds_left
    FROM rate_limit WHERE starts_with(key, ${`${client}|`})`)) as readonly { key: string; count: number; seconds_left: number }[];
  expect(rows.length, `${client} counted in ${rows.map((r) => r.key).join(', ')}`).toBeLessThanOrEqual(1);
  const row = rows[0];
  if (!row) return null;
  // The window is how long the row has left, which a probe's pre-filled row sets itself.
  return { bucket: row.key.slice(client.length + 1), count: Number(row.count), windowSeconds: Number(row.seconds_left) };
}

async function answer(route: Route, probe: Probe, target: string): Promise<Answer> {
  const client = nextClient();
  const headers: Record<string, string> = { 'x-forwarded-for': client };
  let query = '';
  if (probe === 'foreign-cookie-post') {
    headers.cookie = 'better-auth.session_token=not-a-session';
    headers.origin = 'https://evil.example';
    // A GET has no origin rule; a foreign redirect parameter is refused on every method.
    if (route.method === 'GET') query = 'callbackURL=%2F%2Fevil.example';
  } else if (probe === 'cross-site-navigation') {
    headers['sec-fetch-site'] = 'cross-site';
    headers['sec-fetch-mode'] = 'navigate';
    headers['sec-fetch-dest'] = 'document';
  } else if (route.pattern.startsWith(`${config.basePath}/`)) {
    // The tight limits allow 3 per window: a route under one refuses the 4th, a lenient one lets it on.
    await api.db.pool.query(sql.unsafe`
      INSERT INTO rate_limit (key, count, window_ends_at)
      VALUES (${`${client}|${bucketOf(route)}`}, 3, clock_timestamp() + interval '120 seconds')`);
  }
  const body = route.method === 'POST' ? '{}' : null;
  if (body !== null) headers['content-type'] = 'application/json';
  const withQuery = query === '' ? target : `${target}${target.includes('?') ? '&' : '?'}${query}`;
  const sentAt = Date.now();
  const response = await rawRequest(`http://127.0.0.1:${port}`, {
    method: route.method,
    target: withQuery,
    headers: { host: 'localhost:3000', ...headers },
    ...(body !== null ? { body } : {}),
  });
  const code = (response.json as { code?: string } | undefined)?.code ?? null;
  return { status: response.status, code, counted: await countsOf(client, sentAt) };
}

describe('every spelling of a route meets its route\'s perimeter', () => {
  it(
    'answers percent-encoded and absolute-form spellings as the canonical path, counted in its bucket under its limit',
    { timeout: 300_000 },
    async () => {
      const all = routes();
      // The routes the issue found open, at least; every other route is covered the day it is added.
      expect(all.map((r) => `${r.method} ${r.pattern}`)).toEqual(
        expect.arrayContaining([
          'POST /api/auth/sign-in/email', 'POST /api/auth/sign-up/email', 'POST /api/auth/forget-password',
          'POST /api/auth/request-password-reset', 'POST /api/auth/send-verification-email', 'POST /api/auth/sign-in/username',
          'POST /api/auth/set-password', 'GET /api/auth/reset-password/:token', 'GET /ops/mailbox', 'GET /healthz',
        ]),
      );

      for (const route of all) {
        const canonical = new Map<Probe, Answer>();
        for (const probe of probes) canonical.set(probe, await answer(route, probe, concretePath(route)));
        // Under the base path every request is counted in its route's bucket; outside it, none is.
        const guarded = route.pattern.startsWith(`${config.basePath}/`);
        const bucket = bucketOf(route);
        for (const probe of probes) {
          const counted = canonical.get(probe)!.counted;
          if (guarded) expect(counted?.bucket, `${route.method} ${route.pattern} ${probe}`).toBe(bucket);
          else expect(counted, `${route.method} ${route.pattern} ${probe}`).toBeNull();
        }

        await fc.assert(
          fc.asyncProperty(spelling, fc.constantFrom(...probes), async (how, probe) => {
            const target = spell(concretePath(route), how);
            const expected = canonical.get(probe)!;
            const got = await answer(route, probe, target);
            const what = `${route.method} ${target} (${probe})`;
            expect({ status: got.status, code: got.code }, what).toEqual({ status: expected.status, code: expected.code });
            expect(got.counted?.bucket ?? null, what).toBe(expected.counted?.bucket ?? null);
            expect(got.counted?.count ?? null, what).toBe(expected.counted?.count ?? null);
            // Windows, measured from each request's send, agree to the second.
            if (expected.counted && got.counted) expect(Math.abs(got.counted.windowSeconds - expected.counted.windowSeconds), what).toBeLessThanOrEqual(1);
          }),
          { numRuns: RUNS_PER_ROUTE, ...(SEED !== undefined ? { seed: SEED } : {}) },
        );
      }
      // No spelling reached the vendor: none carried a token, and none got past the token check.
      expect(vendor.calls).toEqual([]);
    },
  );
});
