import { createAuthClient } from 'better-auth/client';
import { organizationClient } from 'better-auth/client/plugins';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { describeWithChromium } from '../support/chromium.ts';
import { expectNoBrowserErrors, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.ts';

interface Person {
  readonly id: string;
  readonly email: string;
  readonly name: string;
}

describeWithChromium('the ops console: a user\'s page, live sessions, organizations', () => {
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    browser = await startConsoleBrowser();
  });

  afterAll(async () => {
    await browser?.stop();
  });

  let root: Awaited<ReturnType<ConsoleBrowser['admin']['signedInRoot']>> | undefined;

  /**
   * An ops read on the admin api as the root admin, polled until `holds`: the console's views read the
   * read models, which the projector fills a moment after the users' api answered.
   */
  async function projected<T>(path: string, holds: (answer: T) => boolean): Promise<void> {
    root ??= await browser.admin.signedInRoot();
    const cookie = browser.admin.cookiesOf(root);
    await expect
      .poll(
        async () => {
          const response = await fetch(`${browser.admin.adminUrl}${path}`, { headers: { cookie } });
          const text = await response.text();
          // What it answered instead shows in the failure.
          return response.status === 200 && holds(JSON.parse(text) as T) ? true : `${path}: ${response.status} ${text}`;
        },
        { timeout: 20_000 },
      )
      .toBe(true);
  }

  const sessionTotal = (userIds: readonly string[], total: number) =>
    projected<{ total: number }>(`/ops/sessions?user=${userIds.join(',')}`, (answer) => answer.total === total);

  /** A better-auth client of the users' api, as an app of theirs would be; a session token makes it that session's. */
  function usersClient(headers: Record<string, string> = {}) {
    const { system } = browser.admin;
    return createAuthClient({
      baseURL: system.baseUrl,
      fetchOptions: { headers: { origin: system.baseUrl, ...headers } },
      plugins: [organizationClient({ teams: { enabled: true } })],
    });
  }

  async function newPerson(label: string): Promise<Person & { readonly token: string }> {
    const email = uniqueEmail(label);
    const name = `${label} ${Math.random().toString(36).slice(2, 8)}`;
    const signedUp = await usersClient().signUp.email({ email, password: DEFAULT_PASSWORD, name });
    expect(signedUp.error).toBeNull();
    return { id: signedUp.data!.user.id, email, name, token: signedUp.data!.token! };
  }

  /** A sign-in on the users' api from a client the sessions list can tell apart by its user agent. */
  async function signIn(person: Person, userAgent: string) {
    return usersClient({ 'user-agent': userAgent }).signIn.email({ email: person.email, password: DEFAULT_PASSWORD });
  }

  /** The users' api's own answer to a session token: its user's id, or null once it no longer holds. */
  async function sessionUserOf(token: string): Promise<string | null> {
    const response = await fetch(`${browser.admin.system.authUrl}/get-session`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { user: { id: string } } | null;
    return answer?.user.id ?? null;
  }

  it('shows a user\'s profile and live sessions; a session revoked there is refused by get-session, the other holds', async () => {
    const { page } = browser;
    const person = await newPerson('revoked');
    const phone = await signIn(person, 'console-spec-phone/1.0');
    expect(phone.error).toBeNull();
    const phoneToken = phone.data!.token;
    expect(await sessionUserOf(phoneToken)).toBe(person.id);
    await sessionTotal([person.id], 2);

    await page.goto(browser.url(`/users/${person.id}`));
    await page.getByRole('heading', { name: person.name, level: 1 }).waitFor();
    const sessions = page.getByRole('table', { name: 'Sessions of this user' });
    await sessions.getByText('console-spec-phone/1.0').waitFor();
    expect(await sessions.getByRole('row').count()).toBe(3);
    await page.getByText('1–2 of 2', { exact: true }).waitFor();
    // The page links to the user's history, pre-filtered, and to time travel.
    const main = page.locator('#main');
    expect(await main.getByRole('link', { name: 'Audit trail' }).getAttribute('href')).toBe(`/console/audit?user=${person.id}`);
    expect(await main.getByRole('link', { name: 'Time travel' }).getAttribute('href')).toBe(`/console/audit/time-travel?kind=user&id=${person.id}`);
    // The timeline names the sign-up, linking to its event.
    await page.getByRole('link', { name: new RegExp(`^Event \\d+: ${person.email.replace(/[.+]/g, '\\$&')} signed up`) }).waitFor();

    const phoneRow = sessions.getByRole('row').filter({ hasText: 'console-spec-phone/1.0' });
    await phoneRow.getByRole('button', { name: 'Revoke' }).click();
    await phoneRow.getByRole('button', { name: 'Yes' }).click();
    await page.getByText('Session revoked.').waitFor();
    await expect.poll(() => sessionUserOf(phoneToken), { timeout: 15_000 }).toBeNull();
    expect(await sessionUserOf(person.token)).toBe(person.id);
    await sessions.getByText('console-spec-phone/1.0').waitFor({ state: 'detached' });
    await page.getByText('1–1 of 1', { exact: true }).waitFor();
    await browser.screenshot('user');

    // Every session at once: the sign-up's too.
    await page.getByRole('button', { name: 'Revoke all sessions' }).click();
    await page.getByRole('button', { name: 'Yes' }).click();
    await page.getByText('Every session ended.').waitFor();
    await expect.poll(() => sessionUserOf(person.token), { timeout: 15_000 }).toBeNull();
    await sessions.getByText('Nothing matches.').waitFor();
    expectNoBrowserErrors(browser);
  });

  it('bans a user with a reason, whose sign-in is then refused as BANNED_USER, and unbans them', async () => {
    const { page } = browser;
    const person = await newPerson('banned');
    await sessionTotal([person.id], 1);
    await page.goto(browser.url(`/users/${person.id}`));
    await page.getByRole('heading', { name: person.name, level: 1 }).waitFor();
    await page.getByLabel('Ban reason').fill('chargeback fraud');
    await page.getByLabel('Ban expires after').fill('7d');
    await page.getByRole('button', { name: 'Ban', exact: true }).click();
    await page.getByText(/^Banned until .*: chargeback fraud$/).waitFor();
    const refused = await signIn(person, 'console-spec-banned');
    expect(refused.error?.code).toBe('BANNED_USER');
    // A ban ends every session: the sign-up's too.
    await expect.poll(() => sessionUserOf(person.token), { timeout: 15_000 }).toBeNull();
    await page.getByRole('link', { name: /banned .* \(chargeback fraud\)/ }).waitFor();

    await page.getByRole('button', { name: 'Unban' }).click();
    await page.getByRole('button', { name: 'Ban', exact: true }).waitFor();
    const again = await signIn(person, 'console-spec-unbanned');
    expect(again.error).toBeNull();
    expectNoBrowserErrors(browser);
  });

  it('sets a user\'s password: the old one is refused from then on, the new one signs in', async () => {
    const { page } = browser;
    const person = await newPerson('password-set');
    await sessionTotal([person.id], 1);
    await page.goto(browser.url(`/users/${person.id}`));
    await page.getByRole('heading', { name: person.name, level: 1 }).waitFor();
    await page.getByLabel('New password').fill('a brand new passphrase 42');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Password set.').waitFor();
    expect((await signIn(person, 'console-spec-old-password')).error?.code).toBe('INVALID_EMAIL_OR_PASSWORD');
    const signedIn = await usersClient().signIn.email({ email: person.email, password: 'a brand new passphrase 42' });
    expect(signedIn.error).toBeNull();
    expectNoBrowserErrors(browser);
  });

  it('impersonates a user, says whose session the browser holds, and stops back into the admin\'s console', async () => {
    const { page } = browser;
    const person = await newPerson('impersonated');
    await sessionTotal([person.id], 1);
    await page.goto(browser.url(`/users/${person.id}`));
    await page.getByRole('heading', { name: person.name, level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Impersonate' }).click();
    await page.getByRole('button', { name: 'Yes' }).click();
    await page.getByRole('heading', { name: `You are impersonating ${person.name}` }).waitFor();
    // The browser's session is now the user's, opened by the root admin.
    const held = await page.evaluate(async () => {
      const response = await fetch('/api/auth/get-session', { credentials: 'same-origin' });
      return (await response.json()) as { user: { id: string }; session: { impersonatedBy: string | null } };
    });
    expect({ user: held.user.id, by: held.session.impersonatedBy }).toEqual({ user: person.id, by: browser.admin.rootId });
    // Reloaded (or back to the tab later), the console still offers the way back rather than a 403.
    await page.reload();
    await page.getByRole('heading', { name: `You are impersonating ${person.name}` }).waitFor();

    await page.getByRole('button', { name: 'Stop impersonating' }).click();
    await page.getByRole('heading', { name: person.name, level: 1 }).waitFor();
    const restored = await page.evaluate(async () => {
      const response = await fetch('/api/auth/get-session', { credentials: 'same-origin' });
      return (await response.json()) as { user: { id: string } };
    });
    expect(restored.user.id).toBe(browser.admin.rootId);
    expectNoBrowserErrors(browser);
  });

  it('lists live sessions filtered by several users, kept in the address, and revokes one there', async () => {
    const { page } = browser;
    const first = await newPerson('listed-one');
    const second = await newPerson('listed-two');
    expect((await signIn(second, 'console-spec-second')).error).toBeNull();
    await sessionTotal([first.id, second.id], 3);
    await page.goto(browser.url('/sessions'));
    await page.getByRole('table', { name: 'Live sessions' }).waitFor();
    await page.getByLabel('User ids').fill(first.id);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('user')).toBe(first.id);
    // The second found by a part of their email, not an id.
    await page.getByLabel('Add a user').fill(second.email.split('@')[0]!);
    await page.getByRole('list', { name: 'Users found' }).getByRole('button', { name: new RegExp(second.name) }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('user')).toBe(`${first.id},${second.id}`);
    const table = page.getByRole('table', { name: 'Live sessions' });
    await page.getByText('1–3 of 3', { exact: true }).waitFor();
    expect(await table.getByRole('link', { name: new RegExp(first.name) }).count()).toBe(1);
    expect(await table.getByRole('link', { name: new RegExp(second.name) }).count()).toBe(2);
    // The filter names whom it narrows to.
    await page.getByRole('list', { name: 'Sessions of' }).getByRole('link', { name: new RegExp(second.name) }).waitFor();
    await browser.screenshot('sessions');

    // Narrowed to one user from a row, then one of their sessions revoked.
    await table.getByRole('button', { name: `Only sessions of ${second.email}` }).first().click();
    await expect.poll(() => new URL(page.url()).searchParams.get('user')).toBe(second.id);
    await page.getByText('1–2 of 2', { exact: true }).waitFor();
    const row = table.getByRole('row').filter({ hasText: 'console-spec-second' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes' }).click();
    await page.getByText('1–1 of 1', { exact: true }).waitFor();
    expect(await sessionUserOf(second.token)).toBe(second.id);

    // Another address, another filter: nobody signed in from there.
    await page.getByLabel('Address or CIDR').fill('198.51.100.0/24');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Nothing matches.').waitFor();
    expect(new URL(page.url()).searchParams.get('ip')).toBe('198.51.100.0/24');
    expectNoBrowserErrors(browser);
  });

  it('finds an organization in the list and shows its members, invitations and teams by name', async () => {
    const { page } = browser;
    const owner = await newPerson('org-owner');
    const member = await newPerson('org-member');
    const asOwner = usersClient({ authorization: `Bearer ${owner.token}` });
    const slug = `console-org-${Math.random().toString(36).slice(2, 8)}`;
    const created = await asOwner.organization.create({ name: `Console Org ${slug}`, slug });
    expect(created.error).toBeNull();
    const organizationId = created.data!.id;
    const invited = await asOwner.organization.inviteMember({ email: member.email, role: 'admin', organizationId });
    expect(invited.error).toBeNull();
    const team = await asOwner.organization.createTeam({ name: 'Platform', organizationId });
    expect(team.error).toBeNull();
    await projected<{ invitations: unknown[]; teams: { name: string }[] }>(
      `/ops/organizations/${organizationId}`,
      (answer) => answer.invitations.length === 1 && answer.teams.some((t) => t.name === 'Platform'),
    );

    await page.goto(browser.url('/organizations'));
    await page.getByRole('table', { name: 'Organizations' }).waitFor();
    await page.getByLabel('Search').fill(slug);
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe(slug);
    await page.getByText('1–1 of 1', { exact: true }).waitFor();
    await page.getByRole('link', { name: new RegExp(`Console Org ${slug}`) }).click();

    await page.getByRole('heading', { name: `Console Org ${slug}`, level: 1 }).waitFor();
    const members = page.getByRole('table', { name: 'Members' });
    await members.getByRole('link', { name: new RegExp(owner.name) }).waitFor();
    expect(await members.getByText('owner', { exact: true }).count()).toBe(1);
    const invitations = page.getByRole('table', { name: 'Invitations' });
    await invitations.getByText(member.email).waitFor();
    expect(await invitations.getByText('pending', { exact: true }).count()).toBe(1);
    expect(await invitations.getByRole('link', { name: new RegExp(owner.name) }).count()).toBe(1);
    await page.getByRole('region', { name: 'Team Platform' }).waitFor();
    // The team the organization was created with holds its owner.
    await page.getByRole('region', { name: `Team Console Org ${slug}` }).getByRole('link', { name: new RegExp(owner.name) }).waitFor();
    expect(await page.locator('#main').getByRole('link', { name: 'Audit trail' }).getAttribute('href')).toBe(`/console/audit?organization=${organizationId}`);
    await browser.screenshot('organization');
    expectNoBrowserErrors(browser);
  });
});
