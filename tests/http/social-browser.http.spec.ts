import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pickFreePort } from '@portcullis/platform/free-port';
import { cookieNames, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { describeWithChromium, launchChromium, type LaunchedChromium } from '../support/chromium.ts';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

/**
 * One provider's whole redirect flow in a real browser (Debian's headless Chromium): the app's page asks for a
 * social sign-in, the browser goes to the IdP, a person types a login and clicks through login and consent,
 * and comes back signed in, with the state cookie doing its part on the way.
 */
describeWithChromium('social sign-in in a real browser', () => {
  let system: System;
  let issuer: OidcIssuer;
  let browser: LaunchedChromium;
  let page: Page;

  beforeAll(async () => {
    const port = await pickFreePort();
    issuer = await startOidcIssuer({ redirectUris: [`http://127.0.0.1:${port}/api/auth/callback/corp`], interactive: true });
    system = await startSystem({
      port,
      env: {
        AUTH_OIDC_PROVIDERS: 'corp',
        AUTH_OIDC_CORP_DISCOVERY_URL: issuer.discoveryUrl,
        AUTH_OIDC_CORP_CLIENT_ID: issuer.client.clientId,
        AUTH_OIDC_CORP_CLIENT_SECRET: issuer.client.clientSecret,
      },
    });
    browser = await launchChromium();
    page = await browser.context.newPage();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    await issuer?.stop();
  });

  it('goes to the IdP, logs in and consents there, and comes back to callbackURL signed in', async () => {
    const sub = `chromium-${randomBytes(4).toString('hex')}`;
    const email = uniqueEmail('chromium');
    issuer.signInNext({ sub, email, email_verified: true, name: 'Chromium User' });

    // The app's page, on the api's origin, starts the flow as better-auth's client does: POST, then follow `url`.
    await page.goto(`${system.authUrl}/ok`);
    const started = await page.evaluate(async () => {
      const response = await fetch('/api/auth/sign-in/social', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provider: 'corp', callbackURL: '/api/auth/ok' }),
      });
      return (await response.json()) as { url: string; redirect: boolean };
    });
    expect(started.redirect).toBe(true);
    await page.goto(started.url);

    await page.waitForSelector('input[name="login"]');
    await page.fill('input[name="login"]', sub);
    await page.fill('input[name="password"]', 'anything');
    await page.click('button[type="submit"]');
    // The consent page: the person agrees to what the app asked for.
    await page.waitForSelector('button[type="submit"]');
    await page.click('button[type="submit"]');
    await page.waitForURL(`${system.authUrl}/ok`);
    expect(await page.textContent('body')).toContain('"ok":true');

    const cookies = await browser.context.cookies(system.baseUrl);
    expect(cookies.map((c) => c.name)).not.toContain(cookieNames.state);
    const session = cookies.find((c) => c.name === cookieNames.sessionToken);
    expect(session).toBeDefined();
    const replay = new HttpClient(system.authUrl);
    replay.setCookie(session!.name, session!.value);
    const answer = await replay.get<SessionAnswerJson | null>('get-session');
    expect(answer.json?.user).toMatchObject({ email, name: 'Chromium User', emailVerified: true });
  });
});
