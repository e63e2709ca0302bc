import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicCredentials, client, startFakeProvider, type FakeProvider, type RecordedRequest } from './fake-provider.test-support.ts';
import { idTokenProfileCases } from './id-token-profile-cases.test-support.ts';
import type { ProviderCase } from './provider-case.test-support.ts';
import { tokensWith } from './provider-case.test-support.ts';
import { quirkyProviderCases } from './quirky-provider-cases.test-support.ts';
import { userEndpointCases } from './user-endpoint-cases.test-support.ts';

const cases: ProviderCase[] = [...idTokenProfileCases, ...userEndpointCases, ...quirkyProviderCases];
const codeVerifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const redirectURI = 'https://auth.example.com/api/auth/callback/provider';

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(() => fake.close());

/** The client proved itself as the provider expects: Basic credentials only, or id and secret in the form only. */
function expectClientAuthentication(request: RecordedRequest, c: ProviderCase): void {
  const idParameter = c.token.clientIdParameter ?? 'client_id';
  if (c.token.authentication === 'basic') {
    expect(basicCredentials(request)).toEqual({ id: client.clientId, secret: client.clientSecret });
    expect(request.form.has('client_secret')).toBe(false);
  } else {
    expect(request.headers.authorization).toBeUndefined();
    expect(request.form.get(idParameter)).toBe(client.clientId);
    expect(request.form.get('client_secret')).toBe(client.clientSecret);
  }
  if (idParameter !== 'client_id') expect(request.form.has('client_id')).toBe(false);
  for (const [name, value] of Object.entries(c.token.headers ?? {})) expect(request.headers[name]).toBe(value);
}

describe.each(cases)('the $id provider', (c) => {
  it('sends the browser to its authorization endpoint with its client, scopes, state and PKCE challenge', async () => {
    const url = await c.build(fake).authorizationURL({
      state: 'state-123',
      codeVerifier,
      redirectURI,
      scopes: ['extra.scope'],
      loginHint: 'ada@example.com',
      nonce: 'nonce-123',
    });
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.url}${c.authorize.path}`);
    const query = url.searchParams;
    expect(query.get(c.authorize.clientIdParameter ?? 'client_id')).toBe(client.clientId);
    if (c.authorize.clientIdParameter) expect(query.has('client_id')).toBe(false);
    expect(query.get('response_type')).toBe(c.authorize.responseType ?? 'code');
    expect(query.get('state')).toBe('state-123');
    expect(query.get('redirect_uri')).toBe(redirectURI);
    expect(query.get('scope')).toBe([...c.authorize.defaultScopes, 'extra.scope'].join(c.authorize.scopeSeparator ?? ' '));
    if (c.authorize.pkce) {
      expect(query.get('code_challenge_method')).toBe('S256');
      expect(query.get('code_challenge')).toBe(createHash('sha256').update(codeVerifier).digest('base64url'));
    } else {
      expect(query.has('code_challenge')).toBe(false);
    }
    expect(query.get('login_hint')).toBe(c.authorize.loginHint ? 'ada@example.com' : null);
    // Only generic OIDC providers bind a nonce (as in better-auth).
    expect(query.has('nonce')).toBe(false);
    for (const [name, value] of Object.entries(c.authorize.params ?? {})) expect(query.get(name)).toBe(value);
  });

  it('exchanges the code at its token endpoint and reads the tokens it answers', async () => {
    fake.serve({ [`POST ${c.token.path}`]: { json: c.token.answer } });
    const before = Date.now();
    const tokens = await c.build(fake).exchangeCode({ code: 'code-123', codeVerifier, redirectURI, deviceId: 'device-123' });
    const request = fake.request(`POST ${c.token.path}`);
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers.accept).toBe('application/json');
    expect(request.form.get('grant_type')).toBe('authorization_code');
    expect(request.form.get('code')).toBe('code-123');
    expect(request.form.get('redirect_uri')).toBe(redirectURI);
    expect(request.form.get('code_verifier')).toBe(c.authorize.pkce ? codeVerifier : null);
    expect(request.form.get('device_id')).toBe(c.id === 'vk' ? 'device-123' : null);
    expectClientAuthentication(request, c);
    expect(tokens).toMatchObject(c.token.expected);
    const expiresIn = c.token.answer.expires_in;
    if (typeof expiresIn === 'number') {
      expect(tokens.accessTokenExpiresAt!.getTime()).toBeGreaterThanOrEqual(before + expiresIn * 1000);
      expect(tokens.accessTokenExpiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + expiresIn * 1000);
    } else {
      expect(tokens.accessTokenExpiresAt).toBeNull();
    }
  });

  it('refreshes tokens with the refresh token and the same client authentication', async () => {
    fake.serve({ [`POST ${c.token.path}`]: { json: c.token.answer } });
    const provider = c.build(fake);
    expect(typeof provider.refresh).toBe('function');
    await provider.refresh!('refresh-123');
    const request = fake.request(`POST ${c.token.path}`);
    expect(request.form.get('grant_type')).toBe('refresh_token');
    expect(request.form.get('refresh_token')).toBe('refresh-123');
    expect(request.form.has('code')).toBe(false);
    expectClientAuthentication(request, c);
    for (const [name, value] of Object.entries(c.token.refreshExtra ?? {})) expect(request.form.get(name)).toBe(value);
  });

  it('offers id-token sign-in only where better-auth does', () => {
    expect(typeof c.build(fake).verifyIdToken).toBe(['apple', 'facebook', 'google', 'microsoft'].includes(c.id) ? 'function' : 'undefined');
  });

  it.each(c.profiles)('maps $name', async (scenario) => {
    fake.serve(scenario.routes);
    const profile = await c.build(fake).userInfo({ tokens: tokensWith(scenario.tokens ?? {}), user: scenario.user ?? null, expectedNonce: undefined });
    expect(profile).toEqual(scenario.profile);
    scenario.check?.(fake);
  });
});

describe('a provider whose endpoint fails', () => {
  const github = cases.find((c) => c.id === 'github')!;

  it('turns an error answered with 200 (as GitHub does for a bad code) into a failed exchange', async () => {
    fake.serve({ 'POST /token': { json: { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' } } });
    await expect(github.build(fake).exchangeCode({ code: 'x', codeVerifier, redirectURI, deviceId: undefined })).rejects.toThrow(/bad_verification_code/);
  });

  it('refuses to follow a redirect from the token endpoint', async () => {
    fake.serve({ 'POST /token': { status: 302, headers: { location: `${fake.url}/elsewhere` } } });
    await expect(github.build(fake).exchangeCode({ code: 'x', codeVerifier, redirectURI, deviceId: undefined })).rejects.toThrow(/redirected/);
    expect(fake.requests.map((r) => r.path)).toEqual(['/token']);
  });

  it('reports a user endpoint that answers an error, rather than describing no one', async () => {
    fake.serve({ 'GET /user': { status: 500, json: { message: 'oops' } } });
    await expect(github.build(fake).userInfo({ tokens: tokensWith({}), user: null, expectedNonce: undefined })).rejects.toThrow(/answered 500/);
  });
});
