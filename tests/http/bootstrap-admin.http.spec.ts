import { createAuthClient } from 'better-auth/client';
import { adminClient } from 'better-auth/client/plugins';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickFreePort } from '@portcullis/platform/free-port';
import { serviceEntries } from '../../scripts/build.ts';
import { cookieJarFetch } from '../support/better-auth-fetch.ts';
import { spawnService, waitFor, type ServiceProcess } from '../support/processes.ts';
import { startSystem, type System } from '../support/system.ts';

const EMAIL = 'first-admin@example.com';
const PASSWORD = 'bootstrap admin password';

describe('the bootstrap admin (AUTH_BOOTSTRAP_ADMIN_EMAIL and _PASSWORD)', () => {
  let system: System;
  const extra: ServiceProcess[] = [];

  beforeAll(async () => {
    system = await startSystem({ env: { AUTH_BOOTSTRAP_ADMIN_EMAIL: EMAIL, AUTH_BOOTSTRAP_ADMIN_PASSWORD: PASSWORD } });
  });

  afterAll(async () => {
    for (const process of extra) await process.stop();
    await system?.stop();
  });

  const client = (baseURL: string) => createAuthClient({ baseURL, fetchOptions: cookieJarFetch(system).fetchOptions, plugins: [adminClient()] });

  it('is registered at start with the admin role and a verified email, and may administer users', async () => {
    const admin = client(system.baseUrl);
    const signedIn = await admin.signIn.email({ email: EMAIL, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data?.user).toMatchObject({ email: EMAIL, emailVerified: true });
    const session = await admin.getSession();
    expect(session.data?.user).toMatchObject({ role: 'admin' });
    const allowed = await admin.admin.hasPermission({ permissions: { user: ['list', 'ban'] } });
    expect(allowed.data?.success).toBe(true);
    const listed = await admin.admin.listUsers({ query: { searchValue: EMAIL } });
    expect(listed.data?.total).toBe(1);
  });

  it('is left alone by a later start: no second user, and a changed password stays changed', async () => {
    const admin = client(system.baseUrl);
    expect((await admin.signIn.email({ email: EMAIL, password: PASSWORD })).error).toBeNull();
    expect((await admin.changePassword({ currentPassword: PASSWORD, newPassword: 'the admin chose this one' })).error).toBeNull();

    const port = await pickFreePort();
    const url = `http://127.0.0.1:${port}`;
    const restarted = spawnService({
      name: 'api-restarted',
      entry: serviceEntries.api.built,
      env: { ...system.env, PORT: String(port), AUTH_BOOTSTRAP_ADMIN_EMAIL: EMAIL, AUTH_BOOTSTRAP_ADMIN_PASSWORD: 'another first password' },
    });
    extra.push(restarted);
    await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200, { timeoutMs: 60_000, intervalMs: 100, message: 'the second api to be ready' });

    const again = client(url);
    expect((await again.signIn.email({ email: EMAIL, password: 'another first password' })).error?.status).toBe(401);
    expect((await again.signIn.email({ email: EMAIL, password: 'the admin chose this one' })).error).toBeNull();
    const listed = await again.admin.listUsers({ query: { searchValue: EMAIL } });
    expect(listed.data?.total).toBe(1);
  });
});
