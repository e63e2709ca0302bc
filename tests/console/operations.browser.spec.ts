import { createAuthClient } from 'better-auth/client';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { describeWithChromium } from '../support/chromium.ts';
import { expectNoBrowserErrors, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.ts';
import { startMailSystem } from '../support/mail-system.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

const THEME_KEY = 'portcullis-console-theme';

/** The figure a stat shows, as a number (`1,234` → 1234); NaN while the page has none. */
async function statValue(page: Page, label: string): Promise<number> {
  const stat = page.locator('.stat').filter({ has: page.getByText(label, { exact: true }) });
  if ((await stat.count()) !== 1) return Number.NaN;
  return Number((await stat.locator('.stat-value').innerText()).replace(/[^\d.]/g, ''));
}

/** The page in each theme, for the README and for a look at both. */
async function screenshotsInBothThemes(browser: ConsoleBrowser, name: string, ready: () => Promise<void>): Promise<void> {
  const { page } = browser;
  for (const theme of ['light', 'dark'] as const) {
    await page.evaluate(([key, value]) => window.localStorage.setItem(key, value), [THEME_KEY, theme] as const);
    await page.reload();
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
    await ready();
    await browser.screenshot(`${name}-${theme}`);
  }
}

describeWithChromium('the ops console: overview, projections and mail', () => {
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    // The mailer as a third process, delivering into the dev mailbox (no SMTP_URL).
    browser = await startConsoleBrowser((options) => startMailSystem({ ...options, smtp: false }));
  });

  afterEach(async ({ task }) => {
    // What the page showed when a test failed, beside the other screenshots.
    if (task.result?.state === 'fail') await browser?.screenshot(`failed-${task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => {});
  });

  afterAll(async () => {
    await browser?.stop();
  });

  it('draws the overview: charts, and Postgres and every process healthy', async () => {
    const { page } = browser;
    await page.goto(browser.url('/'));
    for (const chart of ['Sign-ins per minute', 'Sign-ups per minute', 'get-session rate and p99', 'Refusals per minute', 'Mail per minute']) {
      await page.getByRole('figure', { name: chart }).locator('svg.recharts-surface').first().waitFor();
    }
    const health = page.locator('.card').filter({ has: page.getByRole('heading', { name: 'Health' }) });
    await health.getByText('Postgres: up').waitFor();
    // Each process registers as it starts: the api processes, the projector and the mailer, each seen up.
    const processes = health.getByRole('table', { name: 'Processes' });
    for (const service of ['api', 'projector', 'mailer']) {
      await processes.getByRole('row').filter({ has: page.getByRole('rowheader', { name: service, exact: true }) }).filter({ has: page.getByText('up', { exact: true }) }).first().waitFor({ timeout: 30_000 });
    }
    await page.getByRole('table', { name: 'Projection lag' }).getByRole('rowheader', { name: 'identity' }).waitFor();
    expectNoBrowserErrors(browser);
  });

  it('counts a sign-in in the sign-ins figure once the overview refreshes', async () => {
    const { page, admin } = browser;
    await page.goto(browser.url('/'));
    await expect.poll(() => statValue(page, 'Successful sign-ins, last hour')).not.toBeNaN();
    const before = await statValue(page, 'Successful sign-ins, last hour');
    // The user signs in on the other api process than the one the console talks to: the overview's series
    // are every api process' figures summed (each writes its minutes at every sample, 10 s apart).
    const email = uniqueEmail('overview-sign-in');
    const auth = admin.client('users');
    expect((await auth.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Counted Person' })).error).toBeNull();
    expect((await auth.signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();
    // No reload: the page asks again every few seconds by itself.
    await expect.poll(() => statValue(page, 'Successful sign-ins, last hour'), { timeout: 45_000 }).toBeGreaterThan(before);
    await expect.poll(() => statValue(page, 'Sign-ups, last hour'), { timeout: 45_000 }).toBeGreaterThanOrEqual(1);
    await screenshotsInBothThemes(browser, 'overview', () => page.getByRole('figure', { name: 'Sign-ins per minute' }).locator('svg.recharts-surface').first().waitFor());
    expectNoBrowserErrors(browser);
  });

  it('rebuilds a projection from the projections page and shows its progress until it succeeded', async () => {
    const { page } = browser;
    await page.goto(browser.url('/projections'));
    const table = page.getByRole('table', { name: 'Projections' });
    const identity = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /^identity/ }) });
    await identity.waitFor();
    await identity.getByRole('button', { name: 'Rebuild identity' }).click();
    await page.getByRole('group', { name: 'Rebuild identity from the whole log?' }).getByRole('button', { name: 'Yes' }).click();
    // The rebuild watched is in the address, so a reload keeps watching it.
    await expect.poll(() => new URL(page.url()).searchParams.get('rebuild')).toMatch(/^[0-9a-f-]{36}$/);
    const progress = page.getByRole('status', { name: 'Rebuild of identity progress' });
    await progress.waitFor();
    await expect.poll(() => progress.locator('.badge').innerText(), { timeout: 60_000 }).toBe('succeeded');
    expect(await progress.getByRole('progressbar', { name: 'Rebuild of identity' }).getAttribute('value')).toBe('100');
    expect(await progress.getByRole('alert').count()).toBe(0);
    await identity.getByText('succeeded').waitFor();
    await screenshotsInBothThemes(browser, 'projections', () => page.getByRole('status', { name: 'Rebuild of identity progress' }).getByText('succeeded').waitFor());
    expectNoBrowserErrors(browser);
  });

  it('lists a password reset mail in the deliveries and the dev mailbox, its links shown as text', async () => {
    const { page, admin } = browser;
    const email = uniqueEmail('mail-page');
    const users = createAuthClient({ baseURL: admin.system.baseUrl, fetchOptions: { headers: { origin: admin.system.baseUrl } } });
    expect((await users.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Mailed Person' })).error).toBeNull();
    expect((await users.requestPasswordReset({ email, redirectTo: '/reset' })).error).toBeNull();

    await page.goto(browser.url(`/mail?kind=password-reset&to=${encodeURIComponent(email)}`));
    const deliveries = page.getByRole('table', { name: 'Mail deliveries' });
    await deliveries.getByRole('row').filter({ hasText: email }).filter({ hasText: 'sent' }).waitFor({ timeout: 30_000 });
    await page.getByText(/of 1$/).waitFor();
    expect(await page.getByRole('checkbox', { name: 'password-reset' }).isChecked()).toBe(true);

    const message = page.getByRole('article').filter({ hasText: email }).first();
    await message.waitFor({ timeout: 30_000 });
    const text = await message.locator('pre.mail-text').innerText();
    expect(text).toMatch(/reset-password/);
    // The reset link is the user's: nothing in the console follows it with the admin's session.
    expect(await message.locator('a[href*="reset-password"]').count()).toBe(0);
    await message.getByRole('button', { name: 'HTML' }).click();
    const frame = message.locator('iframe.mail-html');
    expect(await frame.getAttribute('sandbox')).toBe('');
    const html = message.frameLocator('iframe.mail-html');
    await html.locator('body').getByText(/reset-password/).first().waitFor();
    expect(await html.locator('a').count()).toBe(0);
    await browser.screenshot('mail-html');

    // A job's own view, as the lookup box opens it.
    await message.getByRole('link', { name: 'job' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('job')).toMatch(/^[0-9a-f-]{36}$/);
    await page.getByText(/of 1$/).waitFor();
    await page.locator('.mail-message.highlighted').waitFor();
    await page.getByRole('group', { name: 'Mail queue' }).getByText('Sent in 24 h').waitFor();
    await screenshotsInBothThemes(browser, 'mail', () => page.locator('.mail-message.highlighted').waitFor());
    expectNoBrowserErrors(browser);
  });
});

describeWithChromium('the ops console: a dead letter retried from the mail page', () => {
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    // An SMTP server that is not there, and no retry window: every mail is dead-lettered at its first attempt.
    const nowhere = await pickFreePort();
    browser = await startConsoleBrowser((options) =>
      startMailSystem({ ...options, smtp: false, env: { SMTP_URL: `smtp://127.0.0.1:${nowhere}`, MAILER_RETRY_WINDOW_SECONDS: '0' } }),
    );
  });

  afterEach(async ({ task }) => {
    if (task.result?.state === 'fail') await browser?.screenshot(`failed-${task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => {});
  });

  afterAll(async () => {
    await browser?.stop();
  });

  it('lists the dead letter, retries it and shows the result, and the mailer tries it again', async () => {
    const { page, admin } = browser;
    const email = uniqueEmail('dead-letter');
    const users = createAuthClient({ baseURL: admin.system.baseUrl, fetchOptions: { headers: { origin: admin.system.baseUrl } } });
    expect((await users.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Unreachable Person' })).error).toBeNull();
    expect((await users.requestPasswordReset({ email, redirectTo: '/reset' })).error).toBeNull();

    await page.goto(browser.url(`/mail?status=dead&to=${encodeURIComponent(email)}`));
    const row = page.getByRole('table', { name: 'Mail deliveries' }).getByRole('row').filter({ hasText: email }).filter({ hasText: 'password-reset' });
    await row.getByText('1 attempt', { exact: true }).waitFor({ timeout: 30_000 });
    await expect.poll(() => statValue(page, 'Dead letters')).toBeGreaterThanOrEqual(1);
    // The second death is told from the first by its time (to the second): the first must be a second old.
    const died = row.getByText(/^dead .* ago$/);
    await expect.poll(() => died.innerText(), { timeout: 20_000 }).not.toMatch(/^dead [01] s ago$/);
    const firstDeath = await died.getAttribute('title');
    await row.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: /Retry of job [0-9a-f-]{36} requested/ }).waitFor();
    // The mailer makes the job pending again with its attempts counted afresh and tries once more: still no
    // server, so it is dead again, later.
    await expect.poll(() => died.getAttribute('title'), { timeout: 30_000 }).not.toBe(firstDeath);
    await row.getByText('1 attempt', { exact: true }).waitFor();
    await browser.screenshot('mail-dead-letter');
    expectNoBrowserErrors(browser);
  });
});
