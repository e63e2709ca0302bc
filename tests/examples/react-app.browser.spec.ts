import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConsoleMessage, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pickFreePort } from '@portcullis/platform/free-port';
import { DEFAULT_PASSWORD, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { describeWithChromium, launchChromium, type LaunchedChromium } from '../support/chromium.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { repoRoot, waitFor } from '../support/processes.ts';
import { HttpClient } from '../support/system.ts';

/**
 * examples/react-app, built and served on an origin of its own (another port than the api's), driven in
 * Chromium through a whole account's life against the real system: sign up, verify the email from the
 * link the dev mailbox holds, sign in, create and switch organizations, invite a member, sign out. Every
 * call is a credentialed cross-origin fetch from better-auth's React client, so it passes only with CORS
 * for the trusted origin and the session cookie coming back.
 */
const EXAMPLE = path.join(repoRoot, 'examples', 'react-app');
const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };

/** The built app: its files by path, and index.html for every other path (a single-page app). */
function serveBuilt(root: string, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    const pathname = new URL(request.url ?? '/', 'http://app').pathname;
    const file = path.join(root, path.normalize(pathname));
    const served = file.startsWith(root) && path.extname(file) !== '' ? file : path.join(root, 'index.html');
    readFile(served).then(
      (body) => {
        response.writeHead(200, { 'content-type': CONTENT_TYPES[path.extname(served)] ?? 'application/octet-stream' });
        response.end(body);
      },
      () => {
        response.writeHead(404).end();
      },
    );
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

describeWithChromium('examples/react-app on another origin (headless Chromium)', () => {
  let system: MailSystem;
  let server: Server | undefined;
  let chromium: LaunchedChromium;
  let page: Page;
  let appUrl: string;
  const outDir = mkdtempSync(path.join(tmpdir(), 'portcullis-react-app-'));
  const browserErrors: string[] = [];

  beforeAll(async () => {
    const appPort = await pickFreePort();
    appUrl = `http://127.0.0.1:${appPort}`;
    const [started] = await Promise.all([
      startMailSystem({
        smtp: false,
        env: { TRUSTED_ORIGINS: appUrl, AUTH_REQUIRE_EMAIL_VERIFICATION: 'true' },
      }),
      build({ root: EXAMPLE, configFile: path.join(EXAMPLE, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } }),
    ]);
    system = started;
    server = await serveBuilt(outDir, appPort);
    chromium = await launchChromium();
    page = await chromium.context.newPage();
    page.on('console', (message: ConsoleMessage) => {
      // A refused call is the browser's own "Failed to load resource" line (the organization hooks ask once
      // more after sign-out and get 401); a CORS refusal or a script error is a line of its own.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) browserErrors.push(message.text());
    });
    page.on('pageerror', (error) => browserErrors.push(error.message));
  }, 180_000);

  afterAll(async () => {
    await chromium?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await system?.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  /** The verification link of the newest mail to `email` in the dev mailbox (served to loopback callers). */
  async function verificationLink(email: string): Promise<string> {
    const ops = new HttpClient(system.baseUrl);
    let link: string | undefined;
    await waitFor(
      async () => {
        const answer = await ops.get<{ messages: { subject: string; text: string }[] }>(`ops/mailbox?to=${encodeURIComponent(email)}`);
        const mail = answer.json.messages.find((m) => /Verify your email/.test(m.subject));
        link = mail?.text.match(/https?:\/\/\S+\/verify-email\?\S+/)?.[0];
        return link !== undefined;
      },
      { timeoutMs: 20_000, message: `a verification mail to ${email} in the dev mailbox` },
    );
    return link!;
  }

  const section = (name: string) => page.getByRole('region', { name });
  const shows = async (text: string | RegExp): Promise<void> => {
    await page
      .getByText(text)
      .first()
      .waitFor({ timeout: 20_000 })
      .catch(async (error: unknown) => {
        const shown = await page.locator('body').innerText().catch(() => '(no page)');
        throw new Error(`${String(error)}\npage: ${shown}\nbrowser: ${browserErrors.join(' | ')}`);
      });
  };

  it('signs up, verifies, signs in, creates and switches organizations, invites a member and signs out', async () => {
    const email = uniqueEmail('react-app');
    await page.goto(`${appUrl}/?api=${encodeURIComponent(system.baseUrl)}`);

    const signUp = section('Sign up');
    await signUp.getByLabel('Name').fill('Ada Example');
    await signUp.getByLabel('Email').fill(email);
    await signUp.getByLabel('Password').fill(DEFAULT_PASSWORD);
    await signUp.getByRole('button', { name: 'Sign up' }).click();
    await shows(`Check your inbox: a verification link went to ${email}.`);

    // The link goes to the api, which verifies and sends the browser back to the app.
    const link = await verificationLink(email);
    expect(new URL(link).searchParams.get('callbackURL')).toBe(`${appUrl}/?verified=1`);
    await page.goto(link);
    await page.waitForURL(`${appUrl}/?verified=1`);
    await shows('Your email is verified: sign in.');

    const signIn = section('Sign in');
    await signIn.getByLabel('Email').fill(email);
    await signIn.getByLabel('Password').fill(DEFAULT_PASSWORD);
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await shows(`Signed in as Ada Example (${email}), verified`);
    // The session is the api's cookie, on the api's origin: the app's page holds no token.
    const apiCookies = await chromium.context.cookies(system.baseUrl);
    expect(apiCookies.map((c) => c.name)).toContain('better-auth.session_token');
    expect(await chromium.context.cookies(appUrl)).toEqual(apiCookies);

    const organizations = section('Organizations');
    for (const name of ['Acme Rockets', 'Beta Labs']) {
      await organizations.getByLabel('New organization').fill(name);
      await organizations.getByRole('button', { name: 'Create' }).click();
      await shows(`Active organization: ${name}`);
    }
    const list = organizations.getByRole('list', { name: 'Your organizations' });
    await list.getByRole('button', { name: 'Switch to Acme Rockets' }).click();
    await shows('Active organization: Acme Rockets');
    await list.getByRole('button', { name: 'Switch to Beta Labs' }).waitFor();

    const invitee = uniqueEmail('invitee');
    await organizations.getByLabel('Invite by email').fill(invitee);
    await organizations.getByRole('button', { name: 'Invite' }).click();
    await organizations.getByRole('list', { name: 'Pending invitations' }).getByText(`${invitee} (member)`).waitFor();

    // What the screen said is what the api holds.
    const [acme] = await system.query<{ id: string }>(`SELECT id FROM organization WHERE name = 'Acme Rockets'`);
    const invited = await system.query<{ status: string }>(`SELECT status FROM invitation WHERE "organizationId" = $1`, [acme!.id]);
    expect(invited).toEqual([{ status: 'pending' }]);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await section('Sign in').waitFor();
    expect((await chromium.context.cookies(system.baseUrl)).map((c) => c.name)).not.toContain('better-auth.session_token');
    // Signed out for the api as well, not only on screen.
    const session = await page.evaluate(async (api) => (await fetch(`${api}/api/auth/get-session`, { credentials: 'include' })).json() as Promise<SessionAnswerJson | null>, system.baseUrl);
    expect(session).toBeNull();
    expect(browserErrors).toEqual([]);
  });
});
