import { createAuthClient } from 'better-auth/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { describeWithChromium } from '../support/chromium.ts';
import { expectNoBrowserErrors, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.ts';

describeWithChromium('the ops console: sign-in, the shell, the users list', () => {
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    browser = await startConsoleBrowser();
  });

  afterAll(async () => {
    await browser?.stop();
  });

  it('signs an admin in through the auth API and lands on the overview with the navigation', async () => {
    const { page } = browser;
    await expect.poll(() => page.url()).toBe(browser.url('/'));
    for (const name of ['Overview', 'Users', 'Sessions', 'Organizations', 'Audit trail', 'Projections', 'Mail']) {
      expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name }).count(), name).toBe(1);
    }
    expectNoBrowserErrors(browser);
  });

  it('lists users with a total, searches on the server and keeps the view in the address', async () => {
    const { page, admin } = browser;
    const email = uniqueEmail('console-listed');
    const signedUp = await createAuthClient({ baseURL: admin.system.baseUrl, fetchOptions: { headers: { origin: admin.system.baseUrl } } }).signUp.email({
      email,
      password: DEFAULT_PASSWORD,
      name: 'Listed Person',
    });
    expect(signedUp.error).toBeNull();
    await page.goto(browser.url('/users'));
    await page.getByRole('table', { name: 'Users' }).waitFor();
    await page.getByLabel('Search').fill(email.split('@')[0]!);
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe(email.split('@')[0]);
    // The unfiltered list shows the person too: wait for the server's filtered answer, its total 1.
    await expect.poll(() => page.getByText(/of 1$/).count()).toBe(1);
    await page.getByRole('link', { name: /Listed Person/ }).waitFor();
    // The same address opens the same view.
    await page.reload();
    await page.getByRole('link', { name: /Listed Person/ }).waitFor();
    expect(await page.getByLabel('Search').inputValue()).toBe(email.split('@')[0]);
    await browser.screenshot('users');
    expectNoBrowserErrors(browser);
  });

  it('switches between light and dark themes and moves with the keyboard', async () => {
    const { page } = browser;
    await page.goto(browser.url('/'));
    const before = await page.evaluate(() => document.documentElement.dataset.theme);
    await page.getByRole('button', { name: /Switch to (light|dark) theme/ }).click();
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).not.toBe(before);
    await page.locator('body').click();
    await page.keyboard.press('g');
    await page.keyboard.press('u');
    await expect.poll(() => page.url()).toBe(browser.url('/users'));
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Look up an id');
  });

  it('shows a signed-in non-admin a 403 page', async () => {
    const { admin, chromium } = browser;
    const email = uniqueEmail('console-non-admin');
    const signedUp = await createAuthClient({ baseURL: admin.system.baseUrl, fetchOptions: { headers: { origin: admin.system.baseUrl } } }).signUp.email({
      email,
      password: DEFAULT_PASSWORD,
      name: 'Not Admin',
    });
    expect(signedUp.error).toBeNull();
    // The profile's cookies are the admin's: this test comes last, and drops them.
    const page = await chromium.context.newPage();
    await chromium.context.clearCookies();
    await page.goto(browser.url('/users'));
    await page.waitForURL(/\/console\/sign-in\?next=%2Fusers/);
    await page.getByLabel('Email or username').fill(email);
    await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: '403: not an admin' }).waitFor();
    await page.close();
  });
});
