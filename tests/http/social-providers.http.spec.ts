import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickFreePort } from '@portcullis/platform/free-port';
import { client, startFakeProvider, type FakeProvider } from '../../services/api/src/social/providers/fake-provider.test-support.ts';
import { idTokenProfileCases } from '../../services/api/src/social/providers/id-token-profile-cases.test-support.ts';
import type { ProfileScenario, ProviderCase } from '../../services/api/src/social/providers/provider-case.test-support.ts';
import { quirkyProviderCases } from '../../services/api/src/social/providers/quirky-provider-cases.test-support.ts';
import { userEndpointCases } from '../../services/api/src/social/providers/user-endpoint-cases.test-support.ts';
import { cookieNames } from '../support/auth.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

/**
 * Every provider of the spec through the api, each against a local server answering as that provider
 * documents (the answers the providers' unit specs hold): POST /sign-in/social, the provider's redirect back
 * to /callback/:id, the code exchanged, the user described, a user signed up and a session opened.
 */
const cases: ProviderCase[] = [...userEndpointCases, ...idTokenProfileCases, ...quirkyProviderCases];
/** The first way each provider describes a user with an email: one who can sign up. */
const signUps = cases.flatMap((c) => {
  const scenario = c.profiles.find((p) => p.profile?.email);
  return scenario ? [{ provider: c, scenario }] : [];
});
/** Providers that never give an email (TikTok, Roblox): their sign-ins can only end in `email_not_found`. */
const emailless = cases.filter((c) => c.profiles.every((p) => !p.profile?.email));
const fakes = new Map<string, FakeProvider>();
let system: System;

/** The settings that move a provider's every endpoint to its fake, as the providers' unit specs do (`settingsAt`). */
function envFor(id: string, fake: FakeProvider): Record<string, string> {
  const name = id.toUpperCase();
  // A self-hosted GitLab: its base URL only, every endpoint under it.
  if (id === 'gitlab') return { AUTH_GITLAB_CLIENT_ID: client.clientId, AUTH_GITLAB_CLIENT_SECRET: client.clientSecret, AUTH_GITLAB_ISSUER: `${fake.url}/` };
  const env: Record<string, string> = {
    [`AUTH_${name}_CLIENT_ID`]: client.clientId,
    [`AUTH_${name}_CLIENT_SECRET`]: client.clientSecret,
    [`AUTH_${name}_AUTHORIZATION_URL`]: `${fake.url}/authorize`,
    [`AUTH_${name}_TOKEN_URL`]: `${fake.url}/token`,
  };
  if (!['apple', 'google', 'twitch'].includes(id)) env[`AUTH_${name}_USERINFO_URL`] = id === 'microsoft' ? `${fake.url}/me` : `${fake.url}/user`;
  if (['apple', 'facebook', 'google', 'microsoft'].includes(id)) {
    env[`AUTH_${name}_JWKS_URL`] = `${fake.url}/jwks`;
    if (id !== 'microsoft') env[`AUTH_${name}_ISSUER`] = fake.url;
  }
  return env;
}

/** The provider's token answer for the scenario: the case's, carrying the tokens the user endpoints expect. */
function tokenAnswer(c: ProviderCase, scenario: ProfileScenario): Record<string, unknown> {
  return {
    ...c.token.answer,
    access_token: scenario.tokens?.accessToken ?? 'access-token',
    ...(scenario.tokens?.idToken ? { id_token: scenario.tokens.idToken } : {}),
  };
}

beforeAll(async () => {
  let env: Record<string, string> = {};
  for (const provider of [...signUps.map((s) => s.provider), ...emailless]) {
    const fake = await startFakeProvider();
    fakes.set(provider.id, fake);
    env = { ...env, ...envFor(provider.id, fake) };
  }
  system = await startSystem({ port: await pickFreePort(), env: { ...env, AUTH_DELETE_USER_ENABLED: 'true' } });
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await Promise.all([...fakes.values()].map((fake) => fake.close()));
});

describe('every provider, through the api', () => {
  it('covers every provider of the spec', () => {
    expect(emailless.map((c) => c.id).sort()).toEqual(['roblox', 'tiktok']);
    expect(signUps.map((s) => s.provider.id).sort()).toEqual(
      ['apple', 'discord', 'dropbox', 'facebook', 'github', 'gitlab', 'google', 'kick', 'linkedin', 'microsoft', 'reddit', 'spotify', 'twitch', 'twitter', 'vk', 'zoom'].sort(),
    );
  });

  it.each(signUps.map((s) => [s.provider.id, s] as const))('%s: signs a new user up from the provider\'s answers', async (_id, { provider, scenario }) => {
    const fake = fakes.get(provider.id)!;
    fake.serve({ ...scenario.routes, [`POST ${provider.token.path}`]: { json: tokenAnswer(provider, scenario) } });
    const browser = new HttpClient(system.authUrl);
    const started = await browser.post<{ url: string }>('sign-in/social', { provider: provider.id, callbackURL: '/dashboard', disableRedirect: true });
    expect(started.status, started.text).toBe(200);
    const authorization = new URL(started.json.url);
    expect(`${authorization.origin}${authorization.pathname}`).toBe(`${fake.url}${provider.authorize.path}`);

    // The provider sends the browser back with a code and the state (Apple's name as its one-time `user`).
    const back = new URLSearchParams({ code: 'code-from-the-provider', state: authorization.searchParams.get('state')! });
    if (scenario.user) back.set('user', JSON.stringify(scenario.user));
    const answer = await browser.get(`callback/${provider.id}?${back}`);
    expect(answer.status).toBe(302);
    const location = new URL(answer.headers.get('location')!, system.baseUrl);
    expect(location.searchParams.get('error'), location.href).toBeNull();
    expect(location.pathname).toBe('/dashboard');
    expect(browser.cookie(cookieNames.sessionToken)).toBeDefined();

    const exchange = fake.request(`POST ${provider.token.path}`);
    expect(exchange.form.get('grant_type')).toBe('authorization_code');
    expect(exchange.form.get('code')).toBe('code-from-the-provider');
    expect(exchange.form.get('redirect_uri')).toBe(`${system.authUrl}/callback/${provider.id}`);

    const session = await browser.get<{ user: { email: string; name: string; emailVerified: boolean; image: string | null } }>('get-session');
    const expected = scenario.profile!;
    expect(session.json.user).toMatchObject({ email: expected.email!.toLowerCase(), name: expected.name, emailVerified: expected.emailVerified, image: expected.image });
    const accounts = await browser.get<Array<{ id: string; providerId: string; accountId: string }>>('list-accounts');
    expect(accounts.json).toEqual([expect.objectContaining({ providerId: provider.id, accountId: expected.id })]);

    // account-info asks the provider again with the kept tokens: its own answer in `data`.
    const info = await browser.get<{ user: unknown; data: unknown; account: unknown }>(`account-info?accountId=${accounts.json[0]!.id}`);
    expect(info.status, info.text).toBe(200);
    expect(info.json.data).toEqual(expected.raw);
    expect(info.json.account).toMatchObject({ id: accounts.json[0]!.id, providerId: provider.id, accountId: expected.id });

    // Several providers' documented examples share an address: each user leaves, so the next signs up anew.
    expect((await browser.post('delete-user', {})).status).toBe(200);
  });

  it.each(emailless.map((c) => [c.id, c] as const))('%s: gives no email, so the sign-in ends in email_not_found', async (_id, provider) => {
    const scenario = provider.profiles.find((p) => p.profile !== null)!;
    fakes.get(provider.id)!.serve({ ...scenario.routes, [`POST ${provider.token.path}`]: { json: tokenAnswer(provider, scenario) } });
    const browser = new HttpClient(system.authUrl);
    const started = await browser.post<{ url: string }>('sign-in/social', { provider: provider.id, callbackURL: '/dashboard', disableRedirect: true });
    const state = new URL(started.json.url).searchParams.get('state')!;
    const answer = await browser.get(`callback/${provider.id}?${new URLSearchParams({ code: 'code-from-the-provider', state })}`);
    expect(new URL(answer.headers.get('location')!).searchParams.get('error')).toBe('email_not_found');
    expect(browser.cookie(cookieNames.sessionToken)).toBeUndefined();
  });
});
