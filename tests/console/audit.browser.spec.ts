import { createAuthClient } from 'better-auth/client';
import { organizationClient } from 'better-auth/client/plugins';
import type { AuditEvent } from '@portcullis/contracts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import type { AdminAuthClient } from '../support/admin-system.ts';
import { describeWithChromium } from '../support/chromium.ts';
import { expectNoBrowserErrors, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.ts';
import { waitFor } from '../support/processes.ts';

interface SearchAnswer {
  readonly events: AuditEvent[];
  readonly indexedTo: number;
}

describeWithChromium('the ops console: audit trail, event detail, time travel, security view', () => {
  let browser: ConsoleBrowser;
  let root: AdminAuthClient;
  let person: { id: string; email: string; name: string };
  /** Where the failed sign-in came from, as the log recorded it. */
  let failedFrom: string;

  /** The audit search over HTTP as the root admin: what the console should then show. */
  async function search(query: string): Promise<SearchAnswer> {
    const response = await fetch(`${browser.admin.adminUrl}/ops/audit/events?${query}`, { headers: { cookie: browser.admin.cookiesOf(root) } });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as SearchAnswer;
  }

  beforeAll(async () => {
    browser = await startConsoleBrowser();
    const { system } = browser.admin;
    const users = createAuthClient({ baseURL: system.baseUrl, fetchOptions: { headers: { origin: system.baseUrl, 'user-agent': 'audit-console-spec/1' } } });
    const email = uniqueEmail('audited');
    const name = `Audited ${Math.random().toString(36).slice(2, 8)}`;
    const signedUp = await users.signUp.email({ email, password: DEFAULT_PASSWORD, name });
    expect(signedUp.error).toBeNull();
    person = { id: signedUp.data!.user.id, email, name };
    const refused = await users.signIn.email({ email, password: 'not the password at all' });
    expect(refused.error?.status).toBe(401);
    root = await browser.admin.signedInRoot();
    const banned = await root.admin.banUser({ userId: person.id, banReason: 'console audit spec' });
    expect(banned.error).toBeNull();
    // The console reads the audit index, which the projector fills: wait until it holds the ban.
    await waitFor(async () => (await search(`user=${person.id}&type=user.banned.v1`)).events.length === 1, {
      timeoutMs: 30_000,
      message: 'the audit index to hold the ban',
    });
    const failures = await search(`user=${person.id}&typePrefix=credentials.`);
    expect(failures.events.length).toBeGreaterThan(0);
    failedFrom = failures.events[0]!.metadata.ipAddress!;
    expect(failedFrom).toBeTruthy();
  });

  afterAll(async () => {
    await browser?.stop();
  });

  it('runs a hash-chain check from the audit page and shows its result', async () => {
    const { page } = browser;
    await page.goto(browser.url('/audit'));
    await page.getByRole('button', { name: 'Check the chain now' }).click();
    await page
      .getByText('intact')
      .first()
      .waitFor({ timeout: 60_000 })
      .catch(async (error: unknown) => {
        // What the card said instead (a refusal, a failed or broken check, no check at all).
        const card = await page.locator('.chain-check').innerText().catch(() => '(no card)');
        const answer = await fetch(`${browser.admin.adminUrl}/ops/audit/verification`, { headers: { cookie: browser.admin.cookiesOf(root) } }).then((r) => r.text());
        throw new Error(`no intact check shown: ${String(error)}\ncard: ${card}\nverification: ${answer}`);
      });
    await page.getByText(/events checked, verified to position \d+/).first().waitFor();
    expectNoBrowserErrors(browser);
  }, 90_000);

  it('searches the trail by user and by type, with names, keeps the filters in the address, and exports them as NDJSON', async () => {
    const { page } = browser;
    await page.goto(browser.url('/audit'));
    const userField = page.getByLabel('User', { exact: true });
    await userField.fill(person.id);
    await userField.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('user')).toBe(person.id);
    const table = page.getByRole('table', { name: 'Audit events' });
    await table.getByRole('link', { name: `${person.email} signed up from ${failedFrom}` }).waitFor();
    await table.getByRole('link', { name: /banned .* \(console audit spec\)/ }).waitFor();
    // The chip names the user; the actor of the ban is the root admin by name.
    await page.getByRole('list', { name: 'User filter' }).getByText(person.name).waitFor();
    const banRow = table.getByRole('row').filter({ hasText: 'console audit spec' });
    expect(await banRow.getByRole('link', { name: /^Root/ }).count()).toBe(1);
    await browser.screenshot('audit');

    const typeField = page.getByLabel('Event type', { exact: true });
    await typeField.fill('user.banned.v1');
    await typeField.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('type')).toBe('user.banned.v1');
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    await page.getByText(/the audit index has reached position \d+/).first().waitFor();
    // The same address opens the same view.
    await page.reload();
    await table.getByRole('link', { name: /banned .* \(console audit spec\)/ }).waitFor();
    expect(await table.getByRole('row').count()).toBe(2);

    const exportHref = await page.getByRole('link', { name: 'Export NDJSON' }).getAttribute('href');
    expect(exportHref).toContain('/ops/audit/export?');
    const exported = await page.evaluate(async (href) => {
      const response = await fetch(href!, { credentials: 'same-origin' });
      return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
    }, exportHref);
    expect(exported.status).toBe(200);
    expect(exported.type).toContain('application/x-ndjson');
    const lines = exported.text.trimEnd().split('\n').map((line) => JSON.parse(line) as AuditEvent);
    expect(lines.map((event) => [event.type, event.data.userId])).toEqual([['user.banned.v1', person.id]]);
    expectNoBrowserErrors(browser);
  });

  it('pages through the trail by cursor, older and back to newer', async () => {
    const { page } = browser;
    await page.goto(browser.url(`/audit?user=${person.id}&limit=3`));
    const table = page.getByRole('table', { name: 'Audit events' });
    const positions = async () => (await table.getByText(/^#\d+$/).allTextContents()).join(' ');
    await expect.poll(() => table.getByRole('row').count()).toBe(4);
    const first = await positions();
    await page.getByRole('button', { name: 'Older →' }).first().click();
    await expect.poll(() => new URL(page.url()).searchParams.get('cursor')).toMatch(/^\d+$/);
    await expect.poll(positions).not.toBe(first);
    const second = await positions();
    // Every event of the older page is older than every event of the first.
    expect(Math.max(...second.split(' ').map((p) => Number(p.slice(1))))).toBeLessThan(Math.min(...first.split(' ').map((p) => Number(p.slice(1)))));
    await page.getByRole('button', { name: '← Newer' }).first().click();
    await expect.poll(positions).toBe(first);
    expectNoBrowserErrors(browser);
  });

  it('opens an event: its metadata, its verified link in the chain, and banned false → true', async () => {
    const { page } = browser;
    await page.goto(browser.url(`/audit?user=${person.id}&type=user.banned.v1`));
    await page.getByRole('table', { name: 'Audit events' }).getByRole('link', { name: /banned .* \(console audit spec\)/ }).click();
    await page.waitForURL(/\/console\/audit\/events\/\d+$/);
    await page.getByRole('heading', { name: /^Event #\d+$/ }).waitFor();
    await page.getByText('verifies', { exact: true }).waitFor();
    // The previous hash and this event's own, in full.
    expect(await page.getByText('Previous hash', { exact: true }).count()).toBe(1);
    expect(await page.getByText(/^[0-9a-f]{64}$/).count()).toBe(2);
    expect(await page.getByRole('link', { name: /^#\d+$/ }).count()).toBeGreaterThanOrEqual(1);
    const changes = page.getByRole('table', { name: 'What this event changed for the user' });
    const banned = changes.getByRole('row', { name: /^banned\b/ });
    expect(await banned.getByRole('cell').allTextContents()).toEqual(['false', 'true']);
    expect(await page.getByRole('link', { name: 'Audit trail of this user' }).getAttribute('href')).toBe(`/console/audit?user=${person.id}`);
    await browser.screenshot('audit-event');
    expectNoBrowserErrors(browser);
  });

  it('moves the time-travel slider over the user\'s history: banned at the ban, not at the first point', async () => {
    const { page } = browser;
    await page.goto(browser.url(`/audit?user=${person.id}&type=user.banned.v1`));
    await page.getByRole('table', { name: 'Audit events' }).getByRole('link', { name: /banned .* \(console audit spec\)/ }).click();
    await page.getByRole('link', { name: 'Time travel to this event' }).click();
    await page.waitForURL(/\/console\/audit\/time-travel\?/);
    const banPosition = new URL(page.url()).searchParams.get('at');
    expect(banPosition).toMatch(/^\d+$/);
    const bannedThen = () => page.getByRole('table', { name: /^State at position/ }).getByRole('row', { name: /^banned\b/ }).getByRole('cell').textContent();
    await expect.poll(bannedThen).toBe('true');
    const slider = page.getByRole('slider');
    // The keyboard moves it: Home to the first point of the history.
    await slider.focus();
    await page.keyboard.press('Home');
    await expect.poll(() => new URL(page.url()).searchParams.get('at')).not.toBe(banPosition);
    await page.getByText(/^At #\d+, user\.registered\.v1/).waitFor();
    await expect.poll(bannedThen).not.toBe('true');
    // What changed from then to now holds the ban.
    const sinceThen = page.getByRole('table', { name: /^Changes from position \d+ to now$/ });
    await expect.poll(() => sinceThen.getByRole('row', { name: /^banned\b/ }).getByRole('cell').allTextContents()).toEqual(['false', 'true']);
    await browser.screenshot('time-travel');
    await page.keyboard.press('End');
    await expect.poll(bannedThen).toBe('true');
    expectNoBrowserErrors(browser);
  });

  it('travels through an organization\'s history: its name as created, then as renamed, and the rename as what changed since', async () => {
    const { page, admin } = browser;
    const client = (headers: Record<string, string> = {}) =>
      createAuthClient({ baseURL: admin.system.baseUrl, fetchOptions: { headers: { origin: admin.system.baseUrl, ...headers } }, plugins: [organizationClient()] });
    const signedUp = await client().signUp.email({ email: uniqueEmail('org-owner'), password: DEFAULT_PASSWORD, name: 'Org Owner' });
    expect(signedUp.error).toBeNull();
    const owner = client({ authorization: `Bearer ${signedUp.data!.token!}` });
    const slug = `audit-org-${Math.random().toString(36).slice(2, 8)}`;
    const created = await owner.organization.create({ name: 'Before Rename', slug });
    expect(created.error).toBeNull();
    const organizationId = created.data!.id;
    const renamed = await owner.organization.update({ organizationId, data: { name: 'After Rename' } });
    expect(renamed.error).toBeNull();

    await page.goto(browser.url('/audit/time-travel'));
    await page.getByLabel('Kind').selectOption('organization');
    await page.getByLabel('Id', { exact: true }).fill(organizationId);
    await page.getByRole('button', { name: 'Show history' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('kind')).toBe('organization');
    const nameThen = () => page.getByRole('table', { name: /^State at position/ }).getByRole('row', { name: /^name\b/ }).getByRole('cell').textContent();
    await expect.poll(nameThen).toBe('After Rename');
    await page.getByRole('button', { name: 'First' }).click();
    await expect.poll(nameThen).toBe('Before Rename');
    const sinceThen = page.getByRole('table', { name: /^Changes from position \d+ to now$/ });
    await expect.poll(() => sinceThen.getByRole('row', { name: /^name\b/ }).getByRole('cell').allTextContents()).toEqual(['Before Rename', 'After Rename']);
    // The page names the organization and links to its trail.
    expect(await page.getByRole('link', { name: 'Its audit trail' }).getAttribute('href')).toBe(`/console/audit?organization=${organizationId}`);
    await page.getByRole('link', { name: /After Rename/ }).first().waitFor();
    expectNoBrowserErrors(browser);
  });

  it('lists the failed sign-in\'s address and account on the security page, linking to their trails', async () => {
    const { page } = browser;
    await page.goto(browser.url('/security?hours=24'));
    const byAddress = page.getByRole('table', { name: 'Failed sign-ins by address' });
    const address = byAddress.getByRole('link', { name: failedFrom, exact: true });
    await address.waitFor();
    expect(await address.getAttribute('href')).toBe(`/console/audit?ip=${encodeURIComponent(failedFrom)}`);
    const byAccount = page.getByRole('table', { name: 'Failed sign-ins by account' });
    const account = byAccount.getByRole('row').filter({ hasText: person.email });
    expect(await account.getByRole('link', { name: new RegExp(person.name) }).getAttribute('href')).toBe(`/console/users/${person.id}`);
    expect(await account.getByRole('link', { name: 'Audit trail' }).getAttribute('href')).toBe(`/console/audit?user=${person.id}`);
    await page.getByLabel('Window').selectOption('168');
    await expect.poll(() => new URL(page.url()).searchParams.get('hours')).toBe('168');
    await browser.screenshot('security');
    await address.click();
    await expect.poll(() => new URL(page.url()).searchParams.get('ip')).toBe(failedFrom);
    await page.getByRole('table', { name: 'Audit events' }).getByRole('link', { name: new RegExp(`a sign-in as ${person.email} failed`) }).waitFor();
    expectNoBrowserErrors(browser);
  });
});
