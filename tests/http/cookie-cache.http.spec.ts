import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieNames, setCookieFor, signIn, signUp, type SessionAnswerJson } from '../support/auth.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

/**
 * The session_data cookie cache (spec sections 5 and 9; better-auth's "compact" cookie cache): signed,
 * short-lived, refused above 4093 characters, bypassed by disableCookieCache.
 */
let system: System;
const client = (): HttpClient => new HttpClient(system.authUrl);

interface CachePayload {
  session: { session: SessionAnswerJson['session']; user: SessionAnswerJson['user']; updatedAt: number; version: string };
  expiresAt: number;
  signature: string;
}

const decode = (value: string): CachePayload => JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as CachePayload;
const encode = (payload: CachePayload): string => Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');

beforeAll(async () => {
  system = await startSystem({ env: { AUTH_COOKIE_CACHE_ENABLED: 'true' } });
});
afterAll(async () => {
  await system?.stop();
});

describe('session_data cookie cache', () => {
  it("is set by get-session: better-auth's compact format, HMAC-signed, 60 s by default, HttpOnly, Lax", async () => {
    const c = client();
    const { token, user } = await signUp(c);
    const response = await c.get<SessionAnswerJson>('get-session');
    expect(response.json.session.token).toBe(token);
    const cookie = setCookieFor(response, cookieNames.sessionData);
    expect(cookie.attributes.get('max-age')).toBe('60');
    expect(cookie.attributes.get('httponly')).toBe(true);
    expect(cookie.attributes.get('samesite')).toBe('Lax');
    expect(cookie.attributes.get('path')).toBe('/');
    expect(cookie.value.length).toBeLessThanOrEqual(4093);

    const payload = decode(cookie.value);
    expect(payload.session.version).toBe('1');
    expect(payload.session.session).toEqual(response.json.session);
    expect(payload.session.user).toEqual(user);
    expect(payload.expiresAt - payload.session.updatedAt).toBe(60_000);
    const signed = JSON.stringify({ ...payload.session, expiresAt: payload.expiresAt });
    expect(payload.signature).toBe(createHmac('sha256', system.env.AUTH_SECRET!).update(signed).digest('base64url'));
  });

  it('answers get-session from the cookie without reading the store; disableCookieCache reads the store', async () => {
    const c = client();
    const { token } = await signUp(c);
    await c.get('get-session');
    expect(c.cookie(cookieNames.sessionData)).toBeDefined();
    // End the session behind the cache's back (a bearer call from elsewhere carries no cookies).
    const revoked = await client().post('revoke-sessions', {}, { headers: { authorization: `Bearer ${token}` } });
    expect(revoked.status, revoked.text).toBe(200);

    // Within its minute the cache still vouches for the session: that is the trade a cookie cache makes.
    const cached = await c.get<SessionAnswerJson>('get-session');
    expect(cached.json?.session.token).toBe(token);
    const fresh = await c.get('get-session?disableCookieCache=true');
    expect(fresh.json).toBeNull();
    expect(c.cookie(cookieNames.sessionData)).toBeUndefined();
    expect(c.cookie(cookieNames.sessionToken)).toBeUndefined();
  });

  it('ignores and replaces a tampered cache, and one that belongs to another session', async () => {
    const c = client();
    const { user } = await signUp(c, { name: 'Honest Name' });
    await c.get('get-session');
    const genuine = c.cookie(cookieNames.sessionData)!;

    const forged = decode(genuine);
    forged.session.user.name = 'Forged Name';
    c.setCookie(cookieNames.sessionData, encode(forged));
    const afterForgery = await c.get<SessionAnswerJson>('get-session');
    expect(afterForgery.json.user.name).toBe('Honest Name');
    expect(decode(setCookieFor(afterForgery, cookieNames.sessionData).value).session.user.name).toBe('Honest Name');

    // A genuine cache of another session (same user, second sign-in) does not stand in for this one.
    const other = client();
    const { token: otherToken } = await signIn(other, { email: user.email });
    await other.get('get-session');
    c.setCookie(cookieNames.sessionData, other.cookie(cookieNames.sessionData)!);
    const mine = await c.get<SessionAnswerJson>('get-session');
    expect(mine.json.session.token).not.toBe(otherToken);
  });

  it('is expired by update-user, so get-session shows the new name at once', async () => {
    const c = client();
    await signUp(c, { name: 'Before' });
    await c.get('get-session');
    const updated = await c.post('update-user', { name: 'After' });
    expect(updated.status, updated.text).toBe(200);
    expect(setCookieFor(updated, cookieNames.sessionData).attributes.get('max-age')).toBe('0');
    expect((await c.get<SessionAnswerJson>('get-session')).json.user.name).toBe('After');
  });

  it('has no max age for a rememberMe-false session, so it ends with the browser session', async () => {
    const c = client();
    const { user } = await signUp(client());
    await signIn(c, { email: user.email, rememberMe: false });
    const cookie = setCookieFor(await c.get('get-session'), cookieNames.sessionData);
    expect(cookie.value).not.toBe('');
    expect(cookie.attributes.has('max-age')).toBe(false);
  });

  it("refuses data above 4093 characters with 'Session data is too large to store in the cookie', still answering from the store", async () => {
    const c = new HttpClient(system.authUrl, { 'user-agent': `UA/${'x'.repeat(500)}` });
    const { token } = await signUp(c, { name: 'é'.repeat(256), image: `https://example.com/${'i'.repeat(2000)}` });
    const response = await c.get<SessionAnswerJson>('get-session');
    expect(response.status).toBe(200);
    expect(response.json.session.token).toBe(token);
    expect(response.setCookies.filter((line) => line.startsWith(`${cookieNames.sessionData}=`) && !line.includes('Max-Age=0'))).toEqual([]);
    // Logged by the api (the line reaches this process a moment after the answer does).
    await system.api.waitForOutput(/"code":"SESSION_DATA_TOO_LARGE".*"msg":"Session data is too large to store in the cookie"/, 20_000);
  });
});
