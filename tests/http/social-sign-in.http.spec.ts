import { createHash, randomBytes } from 'node:crypto';
import { createAuthClient } from 'better-auth/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText } from '@portcullis/platform/telemetry/prometheus-text';
import { ERASED, errorCatalogue } from '@portcullis/contracts';
import { signEmailVerificationToken } from '@portcullis/platform';
import { pickFreePort } from '@portcullis/platform/free-port';
import { cookieNames, DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { cookieJarFetch } from '../support/better-auth-fetch.ts';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.ts';
import { SHORT_LIVED, startOidcIssuer, type IssuerAccount, type OidcIssuer } from '../support/oidc-issuer.ts';
import { startAdminSystem, type AdminSystem } from '../support/admin-system.ts';
import { HttpClient, type System } from '../support/system.ts';

/**
 * Social sign-in against a real OpenID Provider (oidc-provider) configured as a generic OIDC provider, through
 * better-auth's own client where it has a method for the call: the whole redirect flow, linking, unlinking,
 * the provider's tokens, every callback refusal, and id-token sign-in.
 */
const PROVIDER = 'corp';
/** The same IdP under a second name, listed in AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS. */
const TRUSTED = 'partner';
let admin: AdminSystem;
let system: System;
let issuer: OidcIssuer;
let github: FakeGithub;

beforeAll(async () => {
  const port = await pickFreePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  issuer = await startOidcIssuer({ redirectUris: [PROVIDER, TRUSTED].map((id) => `${baseUrl}/api/auth/callback/${id}`) });
  github = await startFakeGithub();
  const provider = (name: string) => ({
    [`AUTH_OIDC_${name}_DISCOVERY_URL`]: issuer.discoveryUrl,
    [`AUTH_OIDC_${name}_CLIENT_ID`]: issuer.client.clientId,
    [`AUTH_OIDC_${name}_CLIENT_SECRET`]: issuer.client.clientSecret,
    [`AUTH_OIDC_${name}_SCOPES`]: 'openid email profile offline_access',
  });
  admin = await startAdminSystem({
    port,
    env: {
      AUTH_OIDC_PROVIDERS: `${PROVIDER},${TRUSTED}`,
      ...provider('CORP'),
      ...provider('PARTNER'),
      AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS: TRUSTED,
      AUTH_DISABLE_IMPLICIT_SIGN_UP: TRUSTED,
      AUTH_DELETE_USER_ENABLED: 'true',
      AUTH_REQUIRE_EMAIL_VERIFICATION: 'true',
      ...github.env,
    },
  });
  system = admin.system;
  // Email verification is required here: the root admin proves theirs as anyone would, by the mailed link.
  await verifyEmail(new HttpClient(system.authUrl), admin.rootEmail, admin.rootId);
}, 180_000);
afterAll(async () => {
  await admin?.stop();
  await issuer?.stop();
  await github?.close();
});

function person(label: string, claims: Partial<IssuerAccount> = {}): IssuerAccount & { email: string } {
  return { sub: `sub-${randomBytes(6).toString('hex')}`, email: uniqueEmail(label), email_verified: true, name: `Corp ${label}`, ...claims };
}

function browser() {
  const { jar, fetchOptions } = cookieJarFetch(system);
  return { client: createAuthClient({ baseURL: system.baseUrl, fetchOptions }), jar };
}

/** Signs in through the IdP as `account`: the callback's answer (a redirect) to the browser holding `jar`. */
async function throughProvider(
  jar: HttpClient,
  url: string,
  account: IssuerAccount,
): Promise<{ status: number; location: URL }> {
  issuer.signInNext(account);
  const callback = await issuer.authorize(url);
  const answer = await jar.get(callback.href);
  return { status: answer.status, location: new URL(answer.headers.get('location') ?? '', system.baseUrl) };
}

async function startSocial(client: ReturnType<typeof browser>['client'], body: Record<string, unknown> = {}): Promise<string> {
  const { data, error } = await client.signIn.social({ provider: PROVIDER, callbackURL: '/dashboard', disableRedirect: true, ...body });
  expect(error).toBeNull();
  expect(data?.redirect).toBe(false);
  return (data as { url: string }).url;
}

/** A password user whose email is verified: signed up, then the link the verification mail would carry used. */
async function createVerifiedUser(email: string): Promise<string> {
  const local = new HttpClient(system.authUrl);
  const created = await local.post<{ user: { id: string } }>('sign-up/email', { email, password: DEFAULT_PASSWORD, name: 'Local' });
  expect(created.status).toBe(200);
  const userId = created.json.user.id;
  await verifyEmail(local, email, userId);
  return userId;
}

/** Uses the link a verification mail would carry (its token signed as the api signs it). */
async function verifyEmail(browser: HttpClient, email: string, userId: string): Promise<void> {
  const token = await signEmailVerificationToken({ email, userId }, system.env.AUTH_SECRET!, 3600, new Date());
  expect((await browser.get(`verify-email?token=${token}`)).status).toBe(200);
}

/** Social sign-ups and successful social sign-ins so far, from the users' api's /metrics (open on loopback in development). */
async function socialFigures(): Promise<{ signUps: number; signIns: number }> {
  const samples = parsePrometheusText(await (await fetch(`${system.baseUrl}/metrics`)).text());
  const value = (name: string, labels: Record<string, string>): number =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([key, wanted]) => s.labels[key] === wanted)).reduce((sum, s) => sum + s.value, 0);
  return {
    signUps: value('portcullis_sign_ups_total', { method: 'social' }),
    signIns: value('portcullis_sign_ins_total', { method: 'social', outcome: 'success' }),
  };
}

describe('social sign-in with a generic OpenID Connect provider', () => {
  it('signs a new user up, as verified as the provider says, and sends them to newUserCallbackURL', async () => {
    const { client, jar } = browser();
    const account = person('first');
    const url = await startSocial(client, { newUserCallbackURL: '/welcome' });
    const authorization = new URL(url);
    expect(authorization.origin).toBe(issuer.url);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('state')).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(authorization.searchParams.get('redirect_uri')).toBe(`${system.authUrl}/callback/${PROVIDER}`);

    const back = await throughProvider(jar, url, account);
    expect(back.status).toBe(302);
    expect(back.location.pathname).toBe('/welcome');
    expect(jar.cookie(cookieNames.sessionToken)).toBeDefined();

    const session = await client.getSession();
    expect(session.data?.user).toMatchObject({ email: account.email, name: account.name, emailVerified: true });
    const accounts = await client.listAccounts();
    expect(accounts.data).toEqual([expect.objectContaining({ providerId: PROVIDER, accountId: account.sub })]);
    expect(accounts.data![0]!.scopes).toEqual(expect.arrayContaining(['openid', 'email']));

    // The provider's tokens: sealed on the log, never in the read model.
    const rows = await system.query<{ accessToken: string | null; refreshToken: string | null; idToken: string | null }>(
      'SELECT "accessToken", "refreshToken", "idToken" FROM account WHERE "accountId" = $1',
      [account.sub],
    );
    expect(rows).toEqual([{ accessToken: null, refreshToken: null, idToken: null }]);
    // The spec's selection (provider id), as older clients send it.
    const token = await jar.post<{ accessToken: string }>('get-access-token', { providerId: PROVIDER });
    expect(token.status).toBe(200);
    expect(token.json.accessToken).toBeTruthy();
    const stored = await system.query<{ data: string }>(`SELECT data::text FROM events WHERE type = 'user.provider_account_linked.v1'`);
    expect(stored.length).toBeGreaterThan(0);
    for (const row of stored) expect(row.data).not.toContain(token.json.accessToken);
  });

  it('signs the same provider account in again, to callbackURL, as the same user', async () => {
    const account = person('returning');
    const before = await socialFigures();
    const first = browser();
    await throughProvider(first.jar, await startSocial(first.client), account);
    const firstUser = (await first.client.getSession()).data?.user.id;
    // The sign-up through the callback is one sign-up and one sign-in in the api's figures.
    const afterSignUp = await socialFigures();
    expect({ signUps: afterSignUp.signUps - before.signUps, signIns: afterSignUp.signIns - before.signIns }).toEqual({ signUps: 1, signIns: 1 });

    const again = browser();
    const back = await throughProvider(again.jar, await startSocial(again.client, { newUserCallbackURL: '/welcome' }), account);
    expect(back.location.pathname).toBe('/dashboard');
    expect((await again.client.getSession()).data?.user.id).toBe(firstUser);
    expect((await again.client.listAccounts()).data).toHaveLength(1);
    const afterSignIn = await socialFigures();
    expect({ signUps: afterSignIn.signUps - afterSignUp.signUps, signIns: afterSignIn.signIns - afterSignUp.signIns }).toEqual({ signUps: 0, signIns: 1 });
  });
});

describe('social sign-in with GitHub (OAuth2 and its REST API, no OpenID)', () => {
  it('signs up with the primary email GitHub says is verified, the provider account named by its numeric id', async () => {
    const email = uniqueEmail('octo');
    const id = Number.parseInt(randomBytes(3).toString('hex'), 16);
    github.signInNext({ id, login: `octo${id}`, name: null, emails: [{ email: uniqueEmail('secondary'), primary: false, verified: true }, { email, primary: true, verified: true }] });
    const { client, jar } = browser();
    const { data } = await client.signIn.social({ provider: 'github', callbackURL: '/dashboard', disableRedirect: true });
    const url = new URL((data as { url: string }).url);
    expect(url.origin).toBe(github.url);
    expect(url.searchParams.get('scope')).toBe('read:user user:email');
    const answer = await jar.get((await github.authorize(url.href)).href);
    expect(new URL(answer.headers.get('location')!, system.baseUrl).pathname).toBe('/dashboard');
    expect(github.refusedVerifiers).toBe(0);
    expect((await client.getSession()).data?.user).toMatchObject({ email, name: `octo${id}`, emailVerified: true, image: `${github.url}/avatars/${id}` });
    expect((await client.listAccounts()).data).toEqual([expect.objectContaining({ providerId: 'github', accountId: String(id), scopes: ['read:user', 'user:email'] })]);
  });

  it('takes an email GitHub has not verified as unverified: with verification required, email_not_verified and a mail', async () => {
    const email = uniqueEmail('octo-unverified');
    const id = Number.parseInt(randomBytes(3).toString('hex'), 16);
    github.signInNext({ id, login: `octo${id}`, name: 'Octo Cat', emails: [{ email, primary: true, verified: false }] });
    const { client, jar } = browser();
    const { data } = await client.signIn.social({ provider: 'github', callbackURL: '/dashboard', disableRedirect: true });
    const answer = await jar.get((await github.authorize((data as { url: string }).url)).href);
    expect(new URL(answer.headers.get('location')!).searchParams.get('error')).toBe('email_not_verified');
    expect(jar.cookie(cookieNames.sessionToken)).toBeUndefined();
    const users = await system.query<{ emailVerified: boolean }>('SELECT "emailVerified" FROM "user" WHERE email = $1', [email]);
    expect(users).toEqual([{ emailVerified: false }]);
    const mails = await system.events<{ data: { kind: string; to: string } }>(`SELECT type, data, metadata FROM events WHERE type = 'mail.job_queued.v1'`);
    expect(mails.some((mail) => mail.data.kind === 'verification' && mail.data.to === email)).toBe(true);
  });

  it('a provider whose API fails after the exchange: unable_to_get_user_info', async () => {
    const id = Number.parseInt(randomBytes(3).toString('hex'), 16);
    github.signInNext({ id, login: `octo${id}`, name: null, emails: [], apiDown: true });
    const { client, jar } = browser();
    const { data } = await client.signIn.social({ provider: 'github', callbackURL: '/dashboard', disableRedirect: true });
    const answer = await jar.get((await github.authorize((data as { url: string }).url)).href);
    expect(new URL(answer.headers.get('location')!).searchParams.get('error')).toBe('unable_to_get_user_info');
  });

  it("a flow finished at a provider that is not configured: oauth_provider_not_found; at another one: restart", async () => {
    const { client, jar } = browser();
    const url = await startSocial(client);
    const state = new URL(url).searchParams.get('state')!;
    const unknown = await jar.get(`callback/nonesuch?state=${state}&code=abc`);
    expect(new URL(unknown.headers.get('location')!).searchParams.get('error')).toBe('oauth_provider_not_found');

    const other = browser();
    const otherState = new URL(await startSocial(other.client)).searchParams.get('state')!;
    const crossed = await other.jar.get(`callback/github?state=${otherState}&code=abc`);
    expect(new URL(crossed.headers.get('location')!).searchParams.get('error')).toBe('please_restart_the_process');
  });
});

describe('the callback refuses what it cannot trust, with a redirect and a code', () => {
  it("turns a provider's form_post (Apple's) into a GET of itself, so the browser's cookies come along", async () => {
    const { client, jar } = browser();
    const url = await startSocial(client);
    issuer.signInNext(person('form-post'));
    const callback = await issuer.authorize(url);
    const posted = await jar.request('POST', `callback/${PROVIDER}`, {
      rawBody: callback.searchParams.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://appleid.apple.com' },
    });
    expect(posted.status).toBe(302);
    const get = new URL(posted.headers.get('location')!);
    expect(get.pathname).toBe(`/api/auth/callback/${PROVIDER}`);
    expect(get.searchParams.get('state')).toBe(callback.searchParams.get('state'));
    const signedIn = await jar.get(get.href);
    expect(new URL(signedIn.headers.get('location')!, system.baseUrl).pathname).toBe('/dashboard');
    expect(jar.cookie(cookieNames.sessionToken)).toBeDefined();
  });

  it('a state brought by another browser (no state cookie): state_mismatch', async () => {
    const { client } = browser();
    const url = await startSocial(client);
    issuer.signInNext(person('other-browser'));
    const callback = await issuer.authorize(url);
    const stranger = new HttpClient(system.authUrl);
    const answer = await stranger.get(callback.href);
    expect(answer.status).toBe(302);
    expect(new URL(answer.headers.get('location')!).searchParams.get('error')).toBe('state_mismatch');
    expect(stranger.cookie(cookieNames.sessionToken)).toBeUndefined();
  });

  it('no state at all: state_not_found; a state used once already, or tampered: please_restart_the_process', async () => {
    const { client, jar } = browser();
    const missing = await jar.get(`callback/${PROVIDER}?code=abc`);
    expect(new URL(missing.headers.get('location')!).searchParams.get('error')).toBe('state_not_found');

    const url = await startSocial(client);
    issuer.signInNext(person('replay'));
    const callback = await issuer.authorize(url);
    const stateCookie = jar.cookie(cookieNames.state)!;
    expect((await jar.get(callback.href)).status).toBe(302);
    jar.setCookie(cookieNames.state, stateCookie);
    const replayed = await jar.get(callback.href);
    expect(new URL(replayed.headers.get('location')!).searchParams.get('error')).toBe('please_restart_the_process');

    const tampered = browser();
    const tamperedUrl = await startSocial(tampered.client);
    issuer.signInNext(person('tampered'));
    const tamperedCallback = await issuer.authorize(tamperedUrl);
    tampered.jar.setCookie(cookieNames.state, `${tampered.jar.cookie(cookieNames.state)!.slice(0, -4)}AAAA`);
    const refused = await tampered.jar.get(tamperedCallback.href);
    expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('please_restart_the_process');
  });

  it("the provider's own error goes to errorCallbackURL; a missing code is no_code", async () => {
    const { client, jar } = browser();
    await startSocial(client, { errorCallbackURL: '/oops' });
    const state = decodeURIComponent(jar.cookie(cookieNames.state)!).split('.')[0]!;
    const denied = await jar.get(`callback/${PROVIDER}?state=${state}&error=access_denied&error_description=no`);
    const location = new URL(denied.headers.get('location')!, system.baseUrl);
    expect(location.pathname).toBe('/oops');
    expect(location.searchParams.get('error')).toBe('access_denied');

    const other = browser();
    await startSocial(other.client);
    const otherState = decodeURIComponent(other.jar.cookie(cookieNames.state)!).split('.')[0]!;
    const noCode = await other.jar.get(`callback/${PROVIDER}?state=${otherState}`);
    expect(new URL(noCode.headers.get('location')!).searchParams.get('error')).toBe('no_code');
  });

  it('a code the provider refuses: invalid_code; a provider that gives no email: email_not_found', async () => {
    const { client, jar } = browser();
    await startSocial(client);
    const state = decodeURIComponent(jar.cookie(cookieNames.state)!).split('.')[0]!;
    const forged = await jar.get(`callback/${PROVIDER}?state=${state}&code=not-a-code-the-idp-issued`);
    expect(new URL(forged.headers.get('location')!).searchParams.get('error')).toBe('invalid_code');

    const nameless = browser();
    const back = await throughProvider(nameless.jar, await startSocial(nameless.client), { sub: `sub-${randomBytes(6).toString('hex')}`, name: 'No Mail' });
    expect(back.location.searchParams.get('error')).toBe('email_not_found');
    expect(nameless.jar.cookie(cookieNames.sessionToken)).toBeUndefined();
  });

  it('input it cannot read: invalid_callback_request; an issuer that is not the provider: issuer_mismatch', async () => {
    const { client, jar } = browser();
    const unreadable = await jar.get(`callback/${PROVIDER}?state=${'s'.repeat(600)}&code=abc`);
    expect(new URL(unreadable.headers.get('location')!).searchParams.get('error')).toBe('invalid_callback_request');

    const url = await startSocial(client);
    issuer.signInNext(person('issuer'));
    const callback = await issuer.authorize(url);
    callback.searchParams.set('iss', 'https://impostor.example');
    const answer = await jar.get(callback.href);
    expect(new URL(answer.headers.get('location')!).searchParams.get('error')).toBe('issuer_mismatch');
    expect(jar.cookie(cookieNames.sessionToken)).toBeUndefined();
  });

  it('keeps the flow as a verification value until the provider comes back, and deletes it on use', async () => {
    const { client, jar } = browser();
    const url = await startSocial(client);
    const stateHash = createHash('sha256').update(new URL(url).searchParams.get('state')!).digest('hex');
    const rows = await system.query<{ value: string; expiresAt: Date }>('SELECT value, "expiresAt" FROM verification WHERE id = $1', [stateHash]);
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.value)).toMatchObject({ providerId: PROVIDER, callbackURL: '/dashboard' });
    expect(rows[0]!.value).not.toContain(new URL(url).searchParams.get('code_challenge')!);
    expect(rows[0]!.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(10 * 60 * 1000);
    issuer.signInNext(person('verification-value'));
    await jar.get((await issuer.authorize(url)).href);
    expect(await system.query('SELECT 1 FROM verification WHERE id = $1', [stateHash])).toEqual([]);
  });

  it('an unknown provider is Provider not found (404) at sign-in', async () => {
    const { client } = browser();
    const { error } = await client.signIn.social({ provider: 'nonesuch', disableRedirect: true });
    expect(error?.status).toBe(404);
    expect(error?.message).toBe(errorCatalogue.PROVIDER_NOT_FOUND.message);
  });
});

describe('linking', () => {
  it('joins a verified local user only when both sides vouch for the email', async () => {
    const email = uniqueEmail('linked');
    const userId = await createVerifiedUser(email);
    const { client, jar } = browser();
    const back = await throughProvider(jar, await startSocial(client), person('linked', { email }));
    expect(back.location.pathname).toBe('/dashboard');
    expect((await client.getSession()).data?.user.id).toBe(userId);
    const providers = (await client.listAccounts()).data!.map((a) => a.providerId).sort();
    expect(providers).toEqual(['corp', 'credential']);
  });

  it('never takes over an account whose address the provider does not vouch for: account_not_linked', async () => {
    const email = uniqueEmail('unvouched');
    await createVerifiedUser(email);
    const { client, jar } = browser();
    const back = await throughProvider(jar, await startSocial(client), person('unvouched', { email, email_verified: false }));
    expect(back.location.searchParams.get('error')).toBe('account_not_linked');
    expect(jar.cookie(cookieNames.sessionToken)).toBeUndefined();
  });

  it('trusts a listed provider for the email even where it does not say verified (the local one must be)', async () => {
    const email = uniqueEmail('trusted');
    const userId = await createVerifiedUser(email);
    const { client, jar } = browser();
    const url = await startSocial(client, { provider: TRUSTED });
    const back = await throughProvider(jar, url, person('trusted', { email, email_verified: false }));
    expect(back.location.pathname).toBe('/dashboard');
    expect((await client.getSession()).data?.user.id).toBe(userId);
  });

  it('makes a new user through a provider without implicit sign-up only when the sign-in asks (requestSignUp)', async () => {
    const account = person('implicit');
    const implicit = browser();
    const refused = await throughProvider(implicit.jar, await startSocial(implicit.client, { provider: TRUSTED }), account);
    expect(refused.location.searchParams.get('error')).toBe('signup_disabled');
    const asked = browser();
    const back = await throughProvider(asked.jar, await startSocial(asked.client, { provider: TRUSTED, requestSignUp: true, newUserCallbackURL: '/welcome' }), account);
    expect(back.location.pathname).toBe('/welcome');
  });

  it('links from a signed-in session, refuses another email, and unlinks all but the last account', async () => {
    const email = uniqueEmail('link-social');
    await createVerifiedUser(email);
    const { client, jar } = browser();
    expect((await client.signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();

    const mismatch = await client.linkSocial({ provider: PROVIDER, callbackURL: '/settings', disableRedirect: true });
    const mismatchBack = await throughProvider(jar, (mismatch.data as { url: string }).url, person('someone-else'));
    expect(mismatchBack.location.searchParams.get('error')).toBe('email_does_not_match');

    const linked = await client.linkSocial({ provider: PROVIDER, callbackURL: '/settings', disableRedirect: true });
    const linkedBack = await throughProvider(jar, (linked.data as { url: string }).url, person('link-social', { email }));
    expect(linkedBack.location.pathname).toBe('/settings');
    const accounts = (await client.listAccounts()).data!;
    expect(accounts.map((a) => a.providerId).sort()).toEqual(['corp', 'credential']);

    // The same provider account, now saying it is this user's address, is another user's: refused.
    const owner = person('owner');
    const ownerBrowser = browser();
    await throughProvider(ownerBrowser.jar, await startSocial(ownerBrowser.client), owner);
    const taken = await client.linkSocial({ provider: PROVIDER, callbackURL: '/settings', disableRedirect: true });
    const takenBack = await throughProvider(jar, (taken.data as { url: string }).url, { ...owner, email });
    expect(takenBack.location.searchParams.get('error')).toBe('account_already_linked_to_different_user');

    const credential = accounts.find((a) => a.providerId === 'credential')!;
    expect((await client.unlinkAccount({ providerId: 'credential', accountId: credential.accountId } as never)).error).toBeNull();
    const last = (await client.listAccounts()).data!;
    expect(last.map((a) => a.providerId)).toEqual(['corp']);
    const refused = await client.unlinkAccount({ accountId: last[0]!.id });
    expect(refused.error?.message).toBe(errorCatalogue.FAILED_TO_UNLINK_LAST_ACCOUNT.message);
  });
});

describe("the provider's tokens", () => {
  it('get-access-token refreshes an access token that has expired, and keeps the new one', async () => {
    const { client, jar } = browser();
    await throughProvider(jar, await startSocial(client), person('short', { sub: `${SHORT_LIVED}${randomBytes(6).toString('hex')}` }));
    const accountId = (await client.listAccounts()).data![0]!.id;
    const linked = await system.events<{ data: { accessToken: string } }>(
      `SELECT type, data, metadata FROM events WHERE type = 'user.provider_account_linked.v1' AND data->>'accountId' = $1`,
      [accountId],
    );
    const first = await client.getAccessToken({ accountId });
    expect(first.error).toBeNull();
    expect(first.data?.accessToken).toBeTruthy();
    expect(first.data?.accessToken).not.toBe(linked[0]!.data.accessToken);
    const renewed = await system.query(`SELECT 1 FROM events WHERE type = 'user.provider_tokens_updated.v1' AND data->>'accountId' = $1`, [accountId]);
    expect(renewed.length).toBeGreaterThan(0);
  });

  it('refreshes them at the provider and answers the new ones', async () => {
    const { client, jar } = browser();
    await throughProvider(jar, await startSocial(client), person('tokens'));
    // better-auth 1.7's selection: the account's own id, as list-accounts answers it.
    const accountId = (await client.listAccounts()).data![0]!.id;
    const before = await client.getAccessToken({ accountId });
    const refreshed = await client.refreshToken({ accountId });
    expect(refreshed.error).toBeNull();
    expect(refreshed.data).toMatchObject({ providerId: PROVIDER });
    expect(refreshed.data?.accessToken).toBeTruthy();
    expect(refreshed.data?.accessToken).not.toBe(before.data?.accessToken);
    expect((await client.getAccessToken({ accountId })).data?.accessToken).toBe(refreshed.data?.accessToken);

    // Another user naming this one (by user id or by account id) gets nothing of theirs: only a server names users.
    const userId = (await client.getSession()).data!.user.id;
    const other = browser();
    await throughProvider(other.jar, await startSocial(other.client), person('tokens-other'));
    const mine = await other.jar.post<{ accessToken: string }>('get-access-token', { providerId: PROVIDER, userId });
    expect(mine.status).toBe(200);
    expect(mine.json.accessToken).not.toBe(refreshed.data?.accessToken);
    expect((await other.jar.post('get-access-token', { accountId })).json).toMatchObject({ code: 'ACCOUNT_NOT_FOUND' });
  });
});

describe('deleting a user who signed in with a provider', () => {
  it("shreds the provider's tokens with the rest, and frees the provider account for a new user", async () => {
    const account = person('deleted');
    const first = browser();
    await throughProvider(first.jar, await startSocial(first.client), account);
    const userId = (await first.client.getSession()).data!.user.id;
    // No password: the session is fresh, which is what delete-user asks of a user without one.
    expect((await first.client.deleteUser()).error).toBeNull();

    const sealed = await system.events<{ data: Record<string, unknown> }>(
      `SELECT type, data, metadata FROM events WHERE type = 'user.provider_account_linked.v1' AND data->>'userId' = $1`,
      [userId],
    );
    expect(sealed).toHaveLength(1);
    expect(sealed[0]!.data).toMatchObject({ accessToken: ERASED, refreshToken: ERASED, providerAccountId: ERASED });

    const again = browser();
    const back = await throughProvider(again.jar, await startSocial(again.client, { newUserCallbackURL: '/welcome' }), account);
    expect(back.location.pathname).toBe('/welcome');
    expect((await again.client.getSession()).data?.user.id).not.toBe(userId);
  });
});

describe('a banned user', () => {
  it('is refused by the callback (error=banned) and by id-token sign-in (403), and no session opens', async () => {
    const account = person('banned');
    const first = browser();
    await throughProvider(first.jar, await startSocial(first.client), account);
    const userId = (await first.client.getSession()).data!.user.id;
    const root = await admin.signedInRoot();
    expect((await root.admin.banUser({ userId, banReason: 'abuse' })).error).toBeNull();

    const again = browser();
    const back = await throughProvider(again.jar, await startSocial(again.client, { errorCallbackURL: '/sorry' }), account);
    expect(back.location.pathname).toBe('/sorry');
    expect(back.location.searchParams.get('error')).toBe('banned');
    expect(back.location.searchParams.get('error_description')).toBe(errorCatalogue.BANNED_USER.message);
    expect(again.jar.cookie(cookieNames.sessionToken)).toBeUndefined();

    const nonce = randomBytes(16).toString('hex');
    const token = await issuer.idTokenFor(account, { nonce });
    const withToken = browser();
    const { error } = await withToken.client.signIn.social({ provider: PROVIDER, idToken: { token, nonce } });
    expect(error?.status).toBe(403);
    expect(withToken.jar.cookie(cookieNames.sessionToken)).toBeUndefined();
  });
});

describe('id-token sign-in', () => {
  it('signs in with an id token the IdP issued to this client, with its nonce', async () => {
    const account = person('id-token');
    const nonce = randomBytes(16).toString('hex');
    const token = await issuer.idTokenFor(account, { nonce });
    const { client } = browser();
    const { data, error } = await client.signIn.social({ provider: PROVIDER, idToken: { token, nonce } });
    expect(error).toBeNull();
    expect((data as { user: { email: string } }).user.email).toBe(account.email);
    expect((await client.getSession()).data?.user.email).toBe(account.email);
  });

  it('refuses a wrong nonce, another client audience and a forged signature with invalid token (401)', async () => {
    const account = person('id-token-refused');
    const nonce = randomBytes(16).toString('hex');
    const token = await issuer.idTokenFor(account, { nonce });
    const forOther = await issuer.idTokenFor(account, { nonce, client: issuer.otherClient });
    const [header, payload, signature] = token.split('.');
    const forged = `${header}.${payload}.${signature!.slice(0, -6)}AAAAAA`;
    for (const idToken of [{ token, nonce: 'wrong' }, { token: forOther, nonce }, { token: forged, nonce }]) {
      const { client } = browser();
      const { error } = await client.signIn.social({ provider: PROVIDER, idToken });
      expect(error?.status).toBe(401);
      expect(error?.message).toBe(errorCatalogue.INVALID_ID_TOKEN.message);
    }
  });
});
