import { generateKeyPairSync } from 'node:crypto';
import { loadConfig } from '@portcullis/platform/config/index';
import { minimalEnv } from '@portcullis/platform/config.test-support';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appleProvider } from './apple.ts';
import { client, startFakeProvider, type FakeProvider } from './fake-provider.test-support.ts';
import { socialProviders } from './index.ts';
import { settingsAt } from './provider-case.test-support.ts';

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(() => fake.close());

describe('the configured providers', () => {
  it('are exactly those with a client id, and the generic OIDC ones', () => {
    const config = loadConfig({
      ...minimalEnv,
      AUTH_GITHUB_CLIENT_ID: 'gh',
      AUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
      AUTH_MICROSOFT_CLIENT_ID: 'ms',
      AUTH_APPLE_CLIENT_ID: 'com.example.web',
      AUTH_APPLE_CLIENT_SECRET: 'signed-elsewhere',
      AUTH_OIDC_PROVIDERS: 'corp',
      AUTH_OIDC_CORP_DISCOVERY_URL: 'https://id.corp.example',
      AUTH_OIDC_CORP_CLIENT_ID: 'corp-client',
    });
    const providers = socialProviders(config.social);
    expect([...providers.keys()].sort()).toEqual(['apple', 'corp', 'github', 'microsoft']);
    expect(providers.get('twitter')).toBeUndefined();
    expect(providers.get('github')).toMatchObject({ id: 'github', name: 'GitHub', issuer: null, usesNonce: false });
    expect(providers.get('corp')).toMatchObject({ id: 'corp', issuer: null, usesNonce: true });
  });

  it('are none when nothing is configured', () => {
    expect(socialProviders(loadConfig(minimalEnv).social).size).toBe(0);
  });
});

describe("Apple's client secret", () => {
  it('is an ES256 JWT signed with the team\'s key when none is configured, and reused while fresh', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const apple = appleProvider({
      ...settingsAt(fake),
      clientSecret: null,
      userInfoUrl: null,
      teamId: 'TEAM123456',
      keyId: 'KEY1234567',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      appBundleIdentifier: null,
    });
    fake.serve({ 'POST /token': { json: { access_token: 'a', token_type: 'bearer', id_token: 'x.y.z' } } });
    const exchange = { code: 'c', codeVerifier: 'v'.repeat(43), redirectURI: 'https://auth.example/cb', deviceId: undefined };
    await apple.exchangeCode(exchange);
    await apple.exchangeCode(exchange);
    const [first, second] = fake.requests.map((r) => r.form.get('client_secret')!);
    expect(second).toBe(first);
    expect(decodeProtectedHeader(first!)).toEqual({ alg: 'ES256', kid: 'KEY1234567' });
    const { payload } = await jwtVerify(first!, publicKey, { issuer: 'TEAM123456', subject: client.clientId, audience: fake.url });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(15_777_000);
  });
});
