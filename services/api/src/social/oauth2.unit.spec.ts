import { describe, expect, it } from 'vitest';
import { authorizationURL, codeChallenge, refreshTokens, verifyIdToken } from './oauth2.ts';
import { basicCredentials, signedToken, signingKey, startFakeProvider } from './providers/fake-provider.test-support.ts';

describe('the OAuth 2.0 parts providers share', () => {
  it('derives the PKCE S256 challenge of RFC 7636 Appendix B', () => {
    expect(codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('leaves out what a provider does not take: an empty scope, PKCE, unset extras', () => {
    const url = authorizationURL({ endpoint: 'https://id.example/authorize?tenant=x', clientId: 'c', redirectURI: 'https://a.example/cb', state: 's', scopes: [], extra: { prompt: undefined } });
    expect(Object.fromEntries(url.searchParams)).toEqual({ tenant: 'x', response_type: 'code', client_id: 'c', state: 's', redirect_uri: 'https://a.example/cb' });
  });

  it('form-encodes Basic credentials before base64 (RFC 6749 §2.3.1) and reads every scope spelling', async () => {
    const fake = await startFakeProvider();
    try {
      fake.serve({ 'POST /token': { json: { access_token: 'a', token_type: 'bearer', scope: 'x, y  z', refresh_token_expires_in: '600' } } });
      const before = Date.now();
      const tokens = await refreshTokens({ url: `${fake.url}/token`, client: { clientId: 'id:1', clientSecret: 'sé cret+', authentication: 'basic' } }, 'r', { scope: 'x' });
      expect(basicCredentials(fake.request('POST /token'))).toEqual({ id: 'id:1', secret: 'sé cret+' });
      expect(fake.request('POST /token').headers.authorization).toBe(`Basic ${Buffer.from('id%3A1:s%C3%A9+cret%2B').toString('base64')}`);
      expect(fake.request('POST /token').form.get('scope')).toBe('x');
      expect(tokens.scopes).toEqual(['x', 'y', 'z']);
      expect(tokens.refreshTokenExpiresAt!.getTime()).toBeGreaterThanOrEqual(before + 600_000);
    } finally {
      await fake.close();
    }
  });

  it('names the OAuth error of a refused token request', async () => {
    const fake = await startFakeProvider();
    try {
      fake.serve({ 'POST /token': { status: 400, json: { error: 'invalid_grant', error_description: 'expired' } } });
      await expect(refreshTokens({ url: `${fake.url}/token`, client: { clientId: 'c', clientSecret: null, authentication: 'post' } }, 'r')).rejects.toThrow(/answered 400 invalid_grant/);
    } finally {
      await fake.close();
    }
  });

  it('refuses an unsigned id token (alg none) and one without an expiry', async () => {
    const key = await signingKey('k');
    const policy = { keys: async () => key.publicKey, issuer: 'i', audience: 'a' };
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${part({ alg: 'none' })}.${part({ iss: 'i', aud: 'a', exp: Math.floor(Date.now() / 1000) + 60 })}.`;
    expect(await verifyIdToken(unsigned, undefined, policy)).toBe(false);
    expect(await verifyIdToken(await signedToken(key, { iss: 'i', aud: 'a' }), undefined, policy)).toBe(true);
    expect(await verifyIdToken(await signedToken(key, { iss: 'i', aud: 'a', exp: undefined }), undefined, policy)).toBe(false);
  });
});
