import { createHash, createHmac, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { errorCatalogue, wireCode, type ErrorCode } from '@portcullis/contracts';
import { parseSetCookie, type HttpClient, type HttpResponse, type SetCookie } from './system.ts';

/** Cookie names with the default prefix, as better-auth clients and browsers see them over plain http. */
export const cookieNames = {
  sessionToken: 'better-auth.session_token',
  sessionData: 'better-auth.session_data',
  dontRemember: 'better-auth.dont_remember',
  state: 'better-auth.state',
} as const;

export const DEFAULT_PASSWORD = 'correct horse battery';

/** An address no other test (or earlier run against the same database server) uses. */
export function uniqueEmail(label: string): string {
  return `${label}-${randomBytes(5).toString('hex')}@example.com`;
}

/** better-auth's cookie signature: base64 (with padding) HMAC-SHA256 keyed with the secret's UTF-8 bytes. */
export function cookieSignature(value: string, secret: string): string {
  return createHmac('sha256', secret).update(value, 'utf8').digest('base64');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export interface UserJson {
  id: string;
  email: string;
  name: string;
  image: string | null;
  emailVerified: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface SessionJson {
  id: string;
  userId: string;
  token: string;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  ipAddress: string | null;
  userAgent: string | null;
}

export interface SessionAnswerJson {
  session: SessionJson;
  user: UserJson;
}

export interface SignedIn {
  readonly token: string;
  readonly user: UserJson;
  readonly response: HttpResponse;
}

/** Signs a new user up through the client (which then holds the session cookie); fails the test unless it worked. */
export async function signUp(
  client: HttpClient,
  input: { email?: string; password?: string; name?: string; image?: string; rememberMe?: boolean } = {},
): Promise<SignedIn> {
  const body = { name: 'Test User', email: uniqueEmail('user'), password: DEFAULT_PASSWORD, ...input };
  const response = await client.post<{ token: string; user: UserJson }>('sign-up/email', body);
  expect(response.status, response.text).toBe(200);
  return { token: response.json.token, user: response.json.user, response };
}

export async function signIn(
  client: HttpClient,
  input: { email: string; password?: string; rememberMe?: boolean; callbackURL?: string },
): Promise<SignedIn> {
  const response = await client.post<{ token: string; user: UserJson }>('sign-in/email', { password: DEFAULT_PASSWORD, ...input });
  expect(response.status, response.text).toBe(200);
  return { token: response.json.token, user: response.json.user, response };
}

/** The one error answer the catalogue defines for `code`: its status, and exactly `{code, message}` (+ details). */
export function expectCatalogueError(response: HttpResponse, code: ErrorCode): void {
  const body = response.json as { code?: unknown; message?: unknown } | undefined;
  expect({ status: response.status, code: body?.code, message: body?.message }, response.text).toEqual({
    status: errorCatalogue[code].status,
    code: wireCode(code),
    message: errorCatalogue[code].message,
  });
}

/** The response's Set-Cookie for `name`, parsed; fails the test when there is none. */
export function setCookieFor(response: HttpResponse, name: string): SetCookie {
  const found = response.setCookies.map(parseSetCookie).filter((c) => c.name === name);
  expect(found, `exactly one Set-Cookie for ${name} in ${JSON.stringify(response.setCookies)}`).toHaveLength(1);
  return found[0]!;
}

/** Asserts the response expires `name` the way better-auth does: empty value, Max-Age=0, the usual attributes. */
export function expectCookieCleared(response: HttpResponse, name: string): void {
  const cookie = setCookieFor(response, name);
  expect(cookie.value).toBe('');
  expect(cookie.attributes.get('max-age')).toBe('0');
  expect(cookie.attributes.get('path')).toBe('/');
  expect(cookie.attributes.get('httponly')).toBe(true);
}
