import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickFreePort } from '@portcullis/platform/free-port';
import { cookieNames, uniqueEmail } from '../support/auth.ts';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer.ts';
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
