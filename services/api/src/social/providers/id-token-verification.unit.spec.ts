import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SocialProvider } from '../provider.ts';
import { appleProvider } from './apple.ts';
import { facebookProvider } from './facebook.ts';
import { client, signedToken, signingKey, startFakeProvider, type FakeProvider, type SigningKey } from './fake-provider.test-support.ts';
import { googleProvider } from './google.ts';
import { microsoftProvider } from './microsoft.ts';
import { settingsAt } from './provider-case.test-support.ts';

/** Id-token sign-in: a token signed with keys the provider publishes (here a local JWKS) and nothing else. */

let fake: FakeProvider;
let key: SigningKey;
let impostor: SigningKey;
beforeAll(async () => {
  fake = await startFakeProvider();
  key = await signingKey('key-1');
  // The same key id, another key: a forged signature.
  impostor = await signingKey('key-1');
});
afterAll(() => fake.close());

const withJwks = () => fake.serve({ 'GET /jwks': { json: key.jwks } });
const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const consumerTenant = '9188040d-6c67-4c5b-b112-36a304b66dad';

interface IdTokenCase {
  readonly id: string;
  readonly build: (fake: FakeProvider) => SocialProvider;
  /** A token this provider accepts, before the variations below spoil it. */
  readonly claims: (fake: FakeProvider) => JWTPayload;
}

const appleAt = (f: FakeProvider, appBundleIdentifier: string | null = null) =>
  appleProvider({ ...settingsAt(f), userInfoUrl: null, teamId: null, keyId: null, privateKey: null, appBundleIdentifier });
const microsoftAt = (f: FakeProvider, tenantId: string) =>
  microsoftProvider({ ...settingsAt(f), issuer: `${f.url}/{tenantid}/v2.0`, tenantId });

const cases: IdTokenCase[] = [
  { id: 'apple', build: (f) => appleAt(f), claims: (f) => ({ iss: f.url, aud: client.clientId, sub: '001234.abc' }) },
  { id: 'facebook', build: (f) => facebookProvider(settingsAt(f)), claims: (f) => ({ iss: f.url, aud: client.clientId, sub: '10160412345' }) },
  { id: 'google', build: (f) => googleProvider({ ...settingsAt(f), userInfoUrl: null }), claims: (f) => ({ iss: f.url, aud: client.clientId, sub: '1101694' }) },
  {
    id: 'microsoft',
    build: (f) => microsoftAt(f, 'common'),
    claims: (f) => ({ iss: `${f.url}/${tenant}/v2.0`, tid: tenant, aud: client.clientId, sub: 'pairwise', oid: 'oid-1' }),
  },
];

describe.each(cases)('$id id-token sign-in', (c) => {
  const verify = (token: string, nonce: string | undefined) => c.build(fake).verifyIdToken!({ token, nonce });

  it('accepts a token signed with its published keys, for us, unexpired, with the nonce', async () => {
    withJwks();
    expect(await verify(await signedToken(key, { ...c.claims(fake), nonce: 'nonce-1' }), 'nonce-1')).toBe(true);
    expect(await verify(await signedToken(key, c.claims(fake)), undefined)).toBe(true);
  });

  it.each([
    ['a wrong nonce', { nonce: 'nonce-2' }],
    ['no nonce where one is expected', { nonce: undefined }],
    ['another audience', { aud: 'another-client' }],
    ['another issuer', { iss: 'https://impostor.example' }],
    ['an expired token', { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 60 }],
  ])('refuses %s', async (_, spoil) => {
    withJwks();
    expect(await verify(await signedToken(key, { ...c.claims(fake), nonce: 'nonce-1', ...spoil }), 'nonce-1')).toBe(false);
  });

  it('refuses a token whose signature is not the provider\'s', async () => {
    withJwks();
    expect(await verify(await signedToken(impostor, { ...c.claims(fake), nonce: 'nonce-1' }), 'nonce-1')).toBe(false);
  });

  it('refuses every token while its keys cannot be fetched', async () => {
    fake.serve({ 'GET /jwks': { status: 503, json: {} } });
    expect(await verify(await signedToken(key, c.claims(fake)), undefined)).toBe(false);
  });
});

describe('provider-specific id-token rules', () => {
  it("Apple: accepts the nonce's SHA-256 (its native SDKs send that) and a native app's bundle id as audience", async () => {
    withJwks();
    const hashed = createHash('sha256').update('nonce-1').digest('hex');
    const native = await signedToken(key, { iss: fake.url, aud: 'com.example.app', sub: '001234.abc', nonce: hashed });
    expect(await appleAt(fake, 'com.example.app').verifyIdToken!({ token: native, nonce: 'nonce-1' })).toBe(true);
    expect(await appleAt(fake).verifyIdToken!({ token: native, nonce: 'nonce-1' })).toBe(false);
  });

  it('Google: refuses a token issued more than an hour ago, even unexpired', async () => {
    withJwks();
    const now = Math.floor(Date.now() / 1000);
    const old = await signedToken(key, { iss: fake.url, aud: client.clientId, sub: '1', iat: now - 7200, exp: now + 3600 });
    expect(await googleProvider({ ...settingsAt(fake), userInfoUrl: null }).verifyIdToken!({ token: old, nonce: undefined })).toBe(false);
  });

  it("Microsoft: the issuer must be the token's own tenant's, and the tenant one the endpoints take", async () => {
    withJwks();
    const tokenOf = (tid: string, iss = `${fake.url}/${tid}/v2.0`) => signedToken(key, { iss, tid, aud: client.clientId, sub: 's', oid: 'o' });
    const verify = async (tenantId: string, token: Promise<string>) => microsoftAt(fake, tenantId).verifyIdToken!({ token: await token, nonce: undefined });
    expect(await verify('common', tokenOf(tenant, `${fake.url}/${consumerTenant}/v2.0`))).toBe(false);
    expect(await verify('organizations', tokenOf(tenant))).toBe(true);
    expect(await verify('organizations', tokenOf(consumerTenant))).toBe(false);
    expect(await verify('consumers', tokenOf(consumerTenant))).toBe(true);
    expect(await verify('consumers', tokenOf(tenant))).toBe(false);
    expect(await verify(tenant, tokenOf(tenant))).toBe(true);
    expect(await verify(tenant, tokenOf('11111111-2222-3333-4444-555555555555'))).toBe(false);
  });

  it("Facebook: accepts a classic login's opaque access token only when debug_token says it is this app's", async () => {
    const verifyOpaque = async (appId: string, valid: boolean) => {
      fake.serve({ 'GET /debug_token': { json: { data: { app_id: appId, is_valid: valid, user_id: '10160412345' } } } });
      return facebookProvider(settingsAt(fake)).verifyIdToken!({ token: 'EAAGm0PX4ZCps', nonce: undefined });
    };
    expect(await verifyOpaque(client.clientId, true)).toBe(true);
    expect(await verifyOpaque('another-app', true)).toBe(false);
    expect(await verifyOpaque(client.clientId, false)).toBe(false);
  });
});
