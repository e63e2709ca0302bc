import { createServer, type Server } from 'node:http';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cookieNames, DEFAULT_PASSWORD, signUp, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { describeWithChromium, launchChromium, type LaunchedChromium } from '../support/chromium.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

/**
 * Cross-site request forgery from a real browser (spec section 5): Debian's headless Chromium, driven by
 * playwright-core, holds a victim's session cookie for the api and then visits pages on other origins.
 *
 * - http://127.0.0.1:<attacker> is same-site but cross-origin (only the port differs), so the browser sends
 *   the SameSite=Lax session cookie along: only the origin check stands between the page and the session.
 * - http://localhost:<attacker> is cross-site: the cookie stays home, and a form that signs the victim in to
 *   the attacker's account is refused as a cross-site navigation login.
 * - http://127.0.0.1:<partner> is in TRUSTED_ORIGINS, and is let through.
 */
/** A page server for an origin that is not the api's: each path is a page of its own. */
function pageServer(port: number, pages: Record<string, (api: string) => string>, api: () => string): Promise<Server> {
  const server = createServer((request, response) => {
    const page = pages[request.url ?? '/'];
    response.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    response.end(page ? page(api()) : 'not found');
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

const attackerPages: Record<string, (api: string) => string> = {
  '/': () => '<!doctype html><title>attacker</title><p>cute cat pictures</p>',
  // A form the victim's browser submits to the api as a top-level navigation, cookies included.
  '/rename': (api) => `<!doctype html><title>attacker</title>
    <form id="f" method="POST" action="${api}/update-user"><input name="name" value="pwned"></form>`,
  // Login CSRF: signs the victim's browser in to the attacker's account.
  '/login': (api) => `<!doctype html><title>attacker</title>
    <form id="f" method="POST" action="${api}/sign-in/email">
      <input name="email" value="ATTACKER_EMAIL"><input name="password" value="${DEFAULT_PASSWORD}"></form>`,
};

describeWithChromium('CSRF from a real browser (headless Chromium)', () => {
  let system: System;
  let attackerPort: number;
  let partnerPort: number;
  const servers: Server[] = [];
  let browser: LaunchedChromium;
  let context: BrowserContext;
  let page: Page;
  let victimToken: string;

  const api = (): string => system.authUrl;

  beforeAll(async () => {
    attackerPort = await pickFreePort();
    partnerPort = await pickFreePort();
    system = await startSystem({ env: { TRUSTED_ORIGINS: `http://127.0.0.1:${partnerPort}` } });
    servers.push(await pageServer(attackerPort, attackerPages, api));
    servers.push(await pageServer(partnerPort, { '/': () => '<!doctype html><title>partner</title>' }, api));
    browser = await launchChromium();
    context = browser.context;
    page = await context.newPage();

    // The victim signs up on the api's own origin: a same-origin fetch, which Chromium sends with its Origin.
    await page.goto(`${system.authUrl}/ok`);
    const signedUp = await page.evaluate(async (email) => {
      const response = await fetch('/api/auth/sign-up/email', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Victim', email, password: 'correct horse battery' }),
      });
      return { status: response.status, body: (await response.json()) as { token: string } };
    }, uniqueEmail('victim'));
    expect(signedUp.status).toBe(200);
    victimToken = signedUp.body.token;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await system?.stop();
  });

  /** The browser's session cookie, replayed from outside: is the victim still signed in, and as whom? */
  async function victimSession(): Promise<SessionAnswerJson | null> {
    const cookie = (await context.cookies(system.baseUrl)).find((c) => c.name === cookieNames.sessionToken);
    if (!cookie) return null;
    const c = new HttpClient(system.authUrl);
    c.setCookie(cookie.name, cookie.value);
    return (await c.get<SessionAnswerJson | null>('get-session')).json;
  }

  async function answer(response: Response): Promise<{ status: number; code: unknown; cookie: string | undefined }> {
    const body = (await response.json().catch(() => ({}))) as { code?: unknown };
    return { status: response.status(), code: body.code, cookie: (await response.request().allHeaders()).cookie };
  }

  it('holds the session: a same-origin request from the browser works', async () => {
    expect((await victimSession())?.session.token).toBe(victimToken);
  });

  it('refuses a cross-origin fetch that carries the session cookie: 403 INVALID_ORIGIN, sessions untouched', async () => {
    await page.goto(`http://127.0.0.1:${attackerPort}/`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/revoke-sessions')),
      page.evaluate(async (target) => {
        // no-cors: a "simple" request the browser sends without asking the api first, cookies included.
        await fetch(`${target}/revoke-sessions`, { method: 'POST', mode: 'no-cors', credentials: 'include' });
      }, api()),
    ]);
    // The response is opaque to the page (and to the driver), but its status is not. 403 rather than 401
    // also shows the browser did attach the session cookie: without one the origin is not checked and
    // revoke-sessions answers 401. The form test below reads the code itself.
    expect(response.status()).toBe(403);
    expect((await victimSession())?.session.token).toBe(victimToken);
    expect(await system.query(`SELECT 1 FROM events WHERE type LIKE 'session.revoked.%'`)).toEqual([]);
  });

  it('refuses a cross-origin form post that carries the session cookie, and the name stays', async () => {
    await page.goto(`http://127.0.0.1:${attackerPort}/rename`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/update-user')),
      page.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit()),
    ]);
    const seen = await answer(response);
    expect(seen.status).toBe(403);
    expect(seen.code).toBe('INVALID_ORIGIN');
    expect(seen.cookie).toContain(cookieNames.sessionToken);
    expect((await victimSession())?.user.name).toBe('Victim');
  });

  it('refuses a cross-site form that would sign the victim in to the attacker account', async () => {
    const attacker = await signUp(new HttpClient(system.authUrl));
    attackerPages['/login'] = ((render) => (target: string) => render(target).replace('ATTACKER_EMAIL', attacker.user.email))(
      attackerPages['/login']!,
    );
    await page.goto(`http://localhost:${attackerPort}/login`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/sign-in/email')),
      page.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit()),
    ]);
    const seen = await answer(response);
    expect(seen.status).toBe(403);
    expect(seen.code).toBe('CROSS_SITE_NAVIGATION_LOGIN_BLOCKED');
    // Cross-site: the Lax cookie was not even sent, and the browser keeps the victim's own session.
    expect(seen.cookie ?? '').not.toContain(cookieNames.sessionToken);
    expect((await victimSession())?.user.email).not.toBe(attacker.user.email);
    expect((await victimSession())?.session.token).toBe(victimToken);
  });

  it('lets an origin in TRUSTED_ORIGINS through, cookie and all', async () => {
    await page.goto(`http://127.0.0.1:${partnerPort}/`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/revoke-other-sessions')),
      page.evaluate(async (target) => {
        await fetch(`${target}/revoke-other-sessions`, { method: 'POST', mode: 'no-cors', credentials: 'include' });
      }, api()),
    ]);
    // 200, not 401: the cookie went along, and the partner's origin passed.
    expect(response.status()).toBe(200);
    expect((await victimSession())?.session.token).toBe(victimToken);
  });
});
