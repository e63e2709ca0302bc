import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, signedToken, signingKey, startFakeProvider, type FakeProvider, type Routes, type SigningKey } from './fake-provider.test-support.ts';
import { oidcProvider } from './oidc.ts';
import { tokensWith } from './provider-case.test-support.ts';

let fake: FakeProvider;
let key: SigningKey;
beforeAll(async () => {
  fake = await startFakeProvider();
  key = await signingKey('oidc-1');
});
afterAll(() => fake.close());

const discovery = () => ({
  issuer: fake.url,
  authorization_endpoint: `${fake.url}/authorize`,
  token_endpoint: `${fake.url}/token`,
  userinfo_endpoint: `${fake.url}/userinfo`,
  jwks_uri: `${fake.url}/jwks`,
  id_token_signing_alg_values_supported: ['RS256'],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
});
const provider = () =>
  oidcProvider({ id: 'corp', discoveryUrl: `${fake.url}/.well-known/openid-configuration`, ...client, scopes: ['openid', 'email', 'profile'] });
const serve = (routes: Routes = {}) => fake.serve({ 'GET /.well-known/openid-configuration': { json: discovery() }, 'GET /jwks': { json: key.jwks }, ...routes });
const idToken = (claims: Record<string, unknown> = {}) => signedToken(key, { iss: fake.url, aud: client.clientId, sub: 'user-1', nonce: 'nonce-1', ...claims });

describe('a generic OIDC provider', () => {
  it('reads its discovery document on first use, once, and learns its issuer from it', async () => {
    serve();
    const corp = provider();
    expect(fake.requests).toHaveLength(0);
    expect(corp.issuer).toBeNull();
    await corp.ready!();
    const url = await corp.authorizationURL({ state: 's', codeVerifier: 'v'.repeat(43), redirectURI: 'https://auth.example/cb', scopes: ['groups'], loginHint: undefined, nonce: 'nonce-1' });
    expect(corp.issuer).toBe(fake.url);
    expect(fake.requests.filter((r) => r.path === '/.well-known/openid-configuration')).toHaveLength(1);
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.url}/authorize`);
    expect(url.searchParams.get('scope')).toBe('openid email profile groups');
    expect(url.searchParams.get('nonce')).toBe('nonce-1');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  });

  it('tries discovery again after a failure', async () => {
    fake.serve({ 'GET /.well-known/openid-configuration': { status: 503, json: {} } });
    const corp = provider();
    await expect(corp.ready!()).rejects.toThrow(/503/);
    serve();
    await expect(corp.ready!()).resolves.toBeUndefined();
  });

  it('exchanges the code with PKCE at the discovered token endpoint', async () => {
    serve({ 'POST /token': { json: { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: 'x.y.z', refresh_token: 'rt' } } });
    const tokens = await provider().exchangeCode({ code: 'code-1', codeVerifier: 'v'.repeat(43), redirectURI: 'https://auth.example/cb', deviceId: undefined });
    const sent = fake.request('POST /token').form;
    expect(Object.fromEntries(sent)).toMatchObject({ grant_type: 'authorization_code', code: 'code-1', code_verifier: 'v'.repeat(43), client_id: client.clientId, client_secret: client.clientSecret });
    expect(tokens).toMatchObject({ accessToken: 'at', refreshToken: 'rt', idToken: 'x.y.z' });
  });

  it('describes the user from the user-info endpoint, falling back to the id token\'s claims', async () => {
    const userinfo = { sub: 'user-1', email: 'ada@corp.example', email_verified: true, picture: 'https://corp.example/ada.png', groups: ['staff'] };
    serve({ 'GET /userinfo': { json: userinfo } });
    const tokens = tokensWith({ idToken: await idToken({ name: 'Ada Lovelace', email: 'other@corp.example', email_verified: false }) });
    expect(await provider().userInfo({ tokens, user: null, expectedNonce: 'nonce-1' })).toEqual({
      id: 'user-1',
      email: 'ada@corp.example',
      emailVerified: true,
      name: 'Ada Lovelace',
      image: 'https://corp.example/ada.png',
      // The user-info answer as sent, claims the profile does not read included; not the merge.
      raw: userinfo,
    });
    expect(fake.request('GET /userinfo').headers.authorization).toBe('Bearer access-token');
  });

  it('uses the id token alone when the user-info endpoint fails', async () => {
    serve({ 'GET /userinfo': { status: 500, json: {} } });
    const token = await idToken({ email: 'ada@corp.example', email_verified: true, name: 'Ada' });
    const profile = await provider().userInfo({ tokens: tokensWith({ idToken: token }), user: null, expectedNonce: 'nonce-1' });
    // `raw` is then the id token's claims, every one of them (its iss, aud, nonce, iat and exp too).
    expect(profile).toEqual({ id: 'user-1', email: 'ada@corp.example', emailVerified: true, name: 'Ada', image: null, raw: decodeJwt(token) });
    expect(profile?.raw).toMatchObject({ iss: fake.url, aud: client.clientId, nonce: 'nonce-1' });
  });

  it.each([
    ['an id token without the flow\'s nonce', { nonce: 'nonce-2' }, { sub: 'user-1' }],
    ['an id token for another client', { aud: 'another-client' }, { sub: 'user-1' }],
    ['a user-info answer about another subject', {}, { sub: 'user-2', email: 'eve@corp.example' }],
  ])('describes no one for %s', async (_, claims, userinfo) => {
    serve({ 'GET /userinfo': { json: userinfo } });
    const tokens = tokensWith({ idToken: await idToken(claims) });
    expect(await provider().userInfo({ tokens, user: null, expectedNonce: 'nonce-1' })).toBeNull();
  });

  it('verifies id tokens a client brings against the discovered keys and issuer', async () => {
    serve();
    const corp = provider();
    expect(await corp.verifyIdToken!({ token: await idToken(), nonce: 'nonce-1' })).toBe(true);
    expect(await corp.verifyIdToken!({ token: await idToken({ iss: 'https://elsewhere.example' }), nonce: 'nonce-1' })).toBe(false);
    expect(await corp.verifyIdToken!({ token: await idToken(), nonce: 'nonce-2' })).toBe(false);
  });

  it('refreshes at the discovered token endpoint', async () => {
    serve({ 'POST /token': { json: { access_token: 'at2', token_type: 'Bearer' } } });
    expect(await provider().refresh!('rt')).toMatchObject({ accessToken: 'at2' });
    expect(fake.request('POST /token').form.get('grant_type')).toBe('refresh_token');
  });
});
