import { createAuthClient } from 'better-auth/client';
import { adminClient, organizationClient } from 'better-auth/client/plugins';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { cookieJarFetch } from '../support/better-auth-fetch.ts';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { startSystem, type System } from '../support/system.ts';

const ADMIN_EMAIL = 'sign-up-off-admin@example.com';
const ADMIN_PASSWORD = 'bootstrap admin password';

/**
 * AUTH_DISABLE_SIGN_UP on email sign-up: nobody signs themselves up (better-auth's
 * `emailAndPassword.disableSignUp` answer), while an admin still creates users and an organization still
 * invites them.
 */
describe('email sign-up with AUTH_DISABLE_SIGN_UP', () => {
  let system: System;

  beforeAll(async () => {
    system = await startSystem({
      env: { AUTH_DISABLE_SIGN_UP: 'true', AUTH_BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL, AUTH_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD },
    });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
  });

  const client = () => createAuthClient({ baseURL: system.baseUrl, fetchOptions: cookieJarFetch(system).fetchOptions, plugins: [adminClient(), organizationClient()] });

  it('refuses a sign-up with 400 EMAIL_PASSWORD_SIGN_UP_DISABLED and writes no user', async () => {
    const email = uniqueEmail('refused');
    const response = await fetch(`${system.authUrl}/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: system.baseUrl },
      body: JSON.stringify({ email, password: DEFAULT_PASSWORD, name: 'Refused' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: 'EMAIL_PASSWORD_SIGN_UP_DISABLED', message: 'Email and password sign up is not enabled' });
    expect(errorCatalogue.EMAIL_PASSWORD_SIGN_UP_DISABLED).toEqual({ status: 400, message: 'Email and password sign up is not enabled' });
    expect(await system.query(`SELECT 1 FROM "user" WHERE email = $1`, [email])).toEqual([]);
  });

  it('still lets an admin create a user, who signs in and accepts an invitation to an organization', async () => {
    const admin = client();
    expect((await admin.signIn.email({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).error).toBeNull();
    const email = uniqueEmail('created');
    const created = await admin.admin.createUser({ email, password: DEFAULT_PASSWORD, name: 'Created', role: 'user' });
    expect(created.error).toBeNull();
    expect(created.data?.user).toMatchObject({ email, name: 'Created' });

    const organization = await admin.organization.create({ name: 'Closed Shop', slug: `closed-${Date.now()}` });
    expect(organization.error).toBeNull();
    const invited = await admin.organization.inviteMember({ email, role: 'member', organizationId: organization.data!.id });
    expect(invited.error).toBeNull();

    const user = client();
    expect((await user.signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();
    const accepted = await user.organization.acceptInvitation({ invitationId: invited.data!.id });
    expect(accepted.error).toBeNull();
    expect(accepted.data?.member).toMatchObject({ userId: created.data!.user.id, role: 'member' });
  });
});
