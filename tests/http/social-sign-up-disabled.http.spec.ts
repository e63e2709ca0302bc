import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickFreePort } from '@portcullis/platform/free-port';
import { cookieNames, uniqueEmail } from '../support/auth.ts';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer.ts';
import { waitFor } from '../support/processes.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

/** AUTH_DISABLE_SIGN_UP: a provider's account that is nobody's yet makes no new user, on either path. */
describe('social sign-in with AUTH_DISABLE_SIGN_UP', () => {
  let system: System;
  let issuer: OidcIssuer;

  beforeAll(async () => {
    const port = await pickFreePort();
    issuer = await startOidcIssuer({ redirectUris: [`http://127.0.0.1:${port}/api/auth/callback/corp`] });
    system = await startSystem({
      port,
      env: {
        AUTH_DISABLE_SIGN_UP: 'true',
        AUTH_OIDC_PROVIDERS: 'corp',
        AUTH_OIDC_CORP_DISCOVERY_URL: issuer.discoveryUrl,
        AUTH_OIDC_CORP_CLIENT_ID: issuer.client.clientId,
        AUTH_OIDC_CORP_CLIENT_SECRET: issuer.client.clientSecret,
      },
    });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await issuer?.stop();
  });

  it('redirects with signup_disabled, and refuses an id token with signup disabled (401)', async () => {
    const account = { sub: `sub-${randomBytes(6).toString('hex')}`, email: uniqueEmail('no-sign-up'), email_verified: true, name: 'Nobody' };
    const browser = new HttpClient(system.authUrl);
    const started = await browser.post<{ url: string }>('sign-in/social', { provider: 'corp', callbackURL: '/dashboard', disableRedirect: true });
    issuer.signInNext(account);
    const back = await browser.get((await issuer.authorize(started.json.url)).href);
    expect(new URL(back.headers.get('location')!).searchParams.get('error')).toBe('signup_disabled');
    expect(browser.cookie(cookieNames.sessionToken)).toBeUndefined();

    const nonce = randomBytes(8).toString('hex');
    const withToken = await new HttpClient(system.authUrl).post<{ message: string; code: string }>('sign-in/social', {
      provider: 'corp',
      idToken: { token: await issuer.idTokenFor(account, { nonce }), nonce },
    });
    expect(withToken.status).toBe(401);
    expect(withToken.json).toMatchObject({ code: 'OAUTH_LINK_ERROR', message: 'signup disabled' });
    expect(await system.query(`SELECT 1 FROM "user" WHERE email = $1`, [account.email])).toEqual([]);
  });
});

/**
 * AUTH_SOCIAL_DISABLE_SIGN_UP: one provider makes no new user, another still does, and the first still signs
 * an existing user in (better-auth's per-provider `disableSignUp`). Both names are the same IdP here.
 */
describe('social sign-in with AUTH_SOCIAL_DISABLE_SIGN_UP naming one provider', () => {
  let system: System;
  let issuer: OidcIssuer;

  beforeAll(async () => {
    const port = await pickFreePort();
    issuer = await startOidcIssuer({ redirectUris: ['closed', 'open'].map((id) => `http://127.0.0.1:${port}/api/auth/callback/${id}`) });
    const provider = (name: string) => ({
      [`AUTH_OIDC_${name}_DISCOVERY_URL`]: issuer.discoveryUrl,
      [`AUTH_OIDC_${name}_CLIENT_ID`]: issuer.client.clientId,
      [`AUTH_OIDC_${name}_CLIENT_SECRET`]: issuer.client.clientSecret,
    });
    system = await startSystem({ port, env: { AUTH_OIDC_PROVIDERS: 'closed,open', ...provider('CLOSED'), ...provider('OPEN'), AUTH_SOCIAL_DISABLE_SIGN_UP: 'closed' } });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await issuer?.stop();
  });

  const throughProvider = async (provider: string, account: { sub: string; email: string }): Promise<{ error: string | null; signedIn: boolean }> => {
    const browser = new HttpClient(system.authUrl);
    const started = await browser.post<{ url: string }>('sign-in/social', { provider, callbackURL: '/dashboard', disableRedirect: true });
    issuer.signInNext({ ...account, email_verified: true, name: 'Someone' });
    const back = await browser.get((await issuer.authorize(started.json.url)).href);
    return { error: new URL(back.headers.get('location')!, system.baseUrl).searchParams.get('error'), signedIn: browser.cookie(cookieNames.sessionToken) !== undefined };
  };

  it('refuses a new user through the closed provider, makes them through the open one, then signs them in through the closed one', async () => {
    const account = { sub: `sub-${randomBytes(6).toString('hex')}`, email: uniqueEmail('closed-provider') };
    expect(await throughProvider('closed', account)).toEqual({ error: 'signup_disabled', signedIn: false });
    expect(await system.query(`SELECT 1 FROM "user" WHERE email = $1`, [account.email])).toEqual([]);

    expect(await throughProvider('open', account)).toEqual({ error: null, signedIn: true });
    // The closed provider's account of the same verified email links to that user: a sign-in, not a sign-up.
    expect(await throughProvider('closed', account)).toEqual({ error: null, signedIn: true });
    const providers = async (): Promise<string[]> =>
      (
        await system.query<{ providerId: string }>(
          `SELECT a."providerId" FROM account a JOIN "user" u ON u.id = a."userId" WHERE u.email = $1 ORDER BY a."providerId"`,
          [account.email],
        )
      ).map((row) => row.providerId);
    // The read model follows the log: wait for it rather than race the projector.
    await waitFor(async () => (await providers()).length === 2, { timeoutMs: 10_000, message: 'both accounts in the read model' });
    expect(await providers()).toEqual(['closed', 'open']);
  });
});
