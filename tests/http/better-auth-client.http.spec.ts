import { createAuthClient } from 'better-auth/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { cookieNames, DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { cookieJarFetch } from '../support/better-auth-fetch.ts';
import { startSystem, type HttpClient, type System } from '../support/system.ts';

/**
 * better-auth's own browser client, unchanged, as a black box against our server: if it works with ours the
 * way it works with better-auth's, apps can switch servers without touching their code.
 */
let system: System;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system?.stop();
});

function authClient(): { client: ReturnType<typeof createAuthClient>; jar: HttpClient } {
  const { jar, fetchOptions } = cookieJarFetch(system);
  return { client: createAuthClient({ baseURL: system.baseUrl, fetchOptions }), jar };
}

describe('better-auth client against Portcullis', () => {
  it('signs up, reads the session, and gets Date objects for every date', async () => {
    const { client, jar } = authClient();
    const email = uniqueEmail('client');
    const { data, error } = await client.signUp.email({ email: email.toUpperCase(), password: DEFAULT_PASSWORD, name: 'Client User' });
    expect(error).toBeNull();
    expect(data?.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(data?.user).toMatchObject({ email, name: 'Client User', emailVerified: false, image: null });
    expect(data?.user.createdAt).toBeInstanceOf(Date);
    expect(data?.user.updatedAt).toBeInstanceOf(Date);
    expect(jar.cookie(cookieNames.sessionToken)).toBeDefined();

    const session = await client.getSession();
    expect(session.error).toBeNull();
    expect(session.data?.session.token).toBe(data?.token);
    expect(session.data?.session.userId).toBe(data?.user.id);
    expect(session.data?.session.expiresAt).toBeInstanceOf(Date);
    expect(session.data?.session.createdAt).toBeInstanceOf(Date);
    expect(session.data?.user.id).toBe(data?.user.id);
  });

  it('signs in, lists and revokes sessions, updates the user, and signs out', async () => {
    const first = authClient();
    const email = uniqueEmail('client-flow');
    const up = await first.client.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Flow' });
    expect(up.error).toBeNull();

    const second = authClient();
    const signedIn = await second.client.signIn.email({ email, password: DEFAULT_PASSWORD });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data).toMatchObject({ redirect: false, user: { id: up.data?.user.id, email } });
    expect(signedIn.data).not.toHaveProperty('url');

    const listed = await second.client.listSessions();
    expect(listed.error).toBeNull();
    expect(listed.data).toHaveLength(2);
    for (const s of listed.data ?? []) expect(s.expiresAt).toBeInstanceOf(Date);
    const firstId = (await first.client.getSession()).data?.session.id;
    const firstListed = listed.data?.find((s) => s.id === firstId);
    expect(firstListed).toBeDefined();
    expect(listed.data?.find((s) => s.id !== firstId)?.token).toBe(signedIn.data?.token);

    const revoked = await second.client.revokeSession({ token: firstListed!.token });
    expect(revoked).toEqual({ data: { status: true }, error: null });
    expect(await first.client.getSession()).toEqual({ data: null, error: null });

    const third = authClient();
    expect((await third.client.signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();
    expect(await second.client.revokeOtherSessions()).toEqual({ data: { status: true }, error: null });
    expect((await third.client.getSession()).data).toBeNull();
    expect((await second.client.getSession()).data?.session.token).toBe(signedIn.data?.token);

    expect(await second.client.updateUser({ name: 'Flow Renamed', image: 'https://example.com/flow.png' })).toEqual({
      data: { status: true },
      error: null,
    });
    expect((await second.client.getSession()).data?.user).toMatchObject({ name: 'Flow Renamed', image: 'https://example.com/flow.png' });

    expect(await second.client.revokeSessions()).toEqual({ data: { status: true }, error: null });
    expect(await second.client.getSession()).toEqual({ data: null, error: null });
    expect(second.jar.cookie(cookieNames.sessionToken)).toBeUndefined();

    const fourth = authClient();
    expect((await fourth.client.signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();
    expect(await fourth.client.signOut()).toEqual({ data: { success: true }, error: null });
    expect(fourth.jar.cookie(cookieNames.sessionToken)).toBeUndefined();
    expect(await fourth.client.getSession()).toEqual({ data: null, error: null });
  });

  it('surfaces a wrong password as error.code INVALID_EMAIL_OR_PASSWORD with status 401', async () => {
    const { client } = authClient();
    const email = uniqueEmail('client-wrong');
    expect((await client.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Wrong' })).error).toBeNull();

    const { data, error } = await authClient().client.signIn.email({ email, password: 'not the password' });
    expect(data).toBeNull();
    expect(error).toEqual({
      code: 'INVALID_EMAIL_OR_PASSWORD',
      message: errorCatalogue.INVALID_EMAIL_OR_PASSWORD.message,
      status: errorCatalogue.INVALID_EMAIL_OR_PASSWORD.status,
      statusText: 'Unauthorized',
    });
  });

  it('surfaces a duplicate sign-up as error.code USER_ALREADY_EXISTS with status 422', async () => {
    const email = uniqueEmail('client-dup');
    expect((await authClient().client.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Dup' })).error).toBeNull();

    const { data, error } = await authClient().client.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Dup again' });
    expect(data).toBeNull();
    expect(error).toMatchObject({
      code: 'USER_ALREADY_EXISTS',
      message: errorCatalogue.USER_ALREADY_EXISTS.message,
      status: errorCatalogue.USER_ALREADY_EXISTS.status,
    });
  });

  it('lists the caller\'s accounts: the email and password one, without its secrets', async () => {
    const { client } = authClient();
    const email = uniqueEmail('client-accounts');
    const up = await client.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Accounts' });
    expect(up.error).toBeNull();
    const userId = up.data!.user.id;

    const { data, error } = await client.listAccounts();
    expect(error).toBeNull();
    expect(data).toHaveLength(1);
    const [account] = data!;
    // better-auth's credential account: its accountId is the user's id.
    expect(account).toMatchObject({ providerId: 'credential', provider: 'credential', accountId: userId, userId, scopes: [] });
    expect(account!.createdAt).toBeInstanceOf(Date);
    expect(account!.updatedAt).toBeInstanceOf(Date);
    expect(Object.keys(account!).sort()).toEqual(['accountId', 'createdAt', 'id', 'provider', 'providerId', 'scopes', 'updatedAt', 'userId']);

    const anonymous = await authClient().client.listAccounts();
    expect(anonymous.data).toBeNull();
    expect(anonymous.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });

  it('refuses to unlink the last account, named either way better-auth has named it', async () => {
    const { client } = authClient();
    const up = await client.signUp.email({ email: uniqueEmail('client-unlink'), password: DEFAULT_PASSWORD, name: 'Unlink' });
    expect(up.error).toBeNull();
    const [account] = (await client.listAccounts()).data!;
    const lastAccount = {
      code: 'FAILED_TO_UNLINK_LAST_ACCOUNT',
      message: "You can't unlink your last account",
      status: errorCatalogue.FAILED_TO_UNLINK_LAST_ACCOUNT.status,
    };
    expect(lastAccount.status).toBe(400);

    // better-auth 1.7 names the account by its own id; the spec's clients by provider.
    const byId = await client.unlinkAccount({ accountId: account!.id });
    expect(byId.data).toBeNull();
    expect(byId.error).toMatchObject(lastAccount);
    const byProvider = await client.$fetch('/unlink-account', { method: 'POST', body: { providerId: 'credential' } });
    expect(byProvider.error).toMatchObject(lastAccount);
    // Still there, still signing in.
    expect((await client.listAccounts()).data).toHaveLength(1);
    expect((await authClient().client.signIn.email({ email: up.data!.user.email, password: DEFAULT_PASSWORD })).error).toBeNull();

    const unnamed = await client.$fetch('/unlink-account', { method: 'POST', body: {} });
    expect(unnamed.error).toMatchObject({ status: 400 });
    const anonymous = await authClient().client.unlinkAccount({ accountId: account!.id });
    expect(anonymous.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });

  it('reaches the misc endpoints through $fetch', async () => {
    const { client } = authClient();
    expect(await client.$fetch('/ok')).toEqual({ data: { ok: true }, error: null });
  });
});
