import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { hashToken } from '@portcullis/platform';
import { startAdminSystem, type AdminSystem } from '../support/admin-system.ts';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { testRedisUrl } from '../support/redis.ts';

/**
 * better-auth's own `adminClient()`, unchanged, against two real api processes on one log (with the Redis
 * session cache where Redis is reachable): the first serves users, the second also names the root admin in
 * ADMIN_USER_IDS. A ban or an impersonation done through one is what the other answers at once.
 */
let admins: AdminSystem;

beforeAll(async () => {
  admins = await startAdminSystem({ redis: testRedisUrl() !== null });
}, 120_000);

afterAll(async () => {
  await admins?.stop();
});

const client = (on: 'users' | 'admin') => admins.client(on);
const signedInRoot = () => admins.signedInRoot();

describe('better-auth adminClient against Portcullis', () => {
  it('creates, lists, finds and updates users, and sets roles', async () => {
    const root = await signedInRoot();
    const email = uniqueEmail('managed');
    const created = await root.admin.createUser({ email, password: DEFAULT_PASSWORD, name: 'Managed', role: 'user' });
    expect(created.error).toBeNull();
    expect(created.data?.user).toMatchObject({ email, name: 'Managed', role: 'user', banned: false });

    const listed = await root.admin.listUsers({ query: { searchValue: email, searchField: 'email', searchOperator: 'starts_with', limit: 10 } });
    expect(listed.error).toBeNull();
    expect(listed.data).toMatchObject({ total: 1, limit: 10 });
    expect(listed.data?.users.map((u) => u.email)).toEqual([email]);

    const userId = created.data!.user.id;
    const found = await root.admin.getUser({ query: { id: userId } });
    expect(found.data).toMatchObject({ id: userId, email });
    expect((await root.admin.updateUser({ userId, data: { name: 'Managed Renamed' } })).data).toMatchObject({ name: 'Managed Renamed' });
    expect((await root.admin.setRole({ userId, role: ['user', 'admin'] })).data?.user.role).toBe('user,admin');
    expect((await root.admin.hasPermission({ permissions: { user: ['list'], session: ['revoke'] } })).data).toEqual({ error: null, success: true });

    // The new admin's role counts on the other process, which has no ADMIN_USER_IDS.
    const managed = client('users');
    expect((await managed.signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();
    expect((await managed.admin.listUsers({ query: { limit: 1 } })).error).toBeNull();
    expect((await managed.getSession()).data?.user).toMatchObject({ role: 'user,admin' });
  });

  it('refuses a user without the permission with better-auth\'s status and message', async () => {
    const plain = client('users');
    expect((await plain.signUp.email({ email: uniqueEmail('plain'), password: DEFAULT_PASSWORD, name: 'Plain' })).error).toBeNull();
    const refused = await plain.admin.listUsers({ query: {} });
    expect(refused.error).toMatchObject({ status: 403, code: 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS', message: 'You are not allowed to list users' });
  });

  it('bans across processes: the sessions end at once and sign-in answers 403 until unbanned', async () => {
    const root = await signedInRoot();
    const email = uniqueEmail('banned');
    const victim = client('users');
    const signedUp = await victim.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Victim' });
    expect((await victim.getSession()).data?.user.id).toBe(signedUp.data?.user.id);

    const banned = await root.admin.banUser({ userId: signedUp.data!.user.id, banReason: 'spam', banExpiresIn: 3600 });
    expect(banned.data?.user).toMatchObject({ banned: true, banReason: 'spam' });
    expect(banned.data?.user.banExpires).toBeInstanceOf(Date);
    expect((await victim.getSession()).data).toBeNull();
    const refused = await client('users').signIn.email({ email, password: DEFAULT_PASSWORD });
    expect(refused.error).toMatchObject({ status: 403, code: 'BANNED_USER', message: errorCatalogue.BANNED_USER.message });

    expect((await root.admin.unbanUser({ userId: signedUp.data!.user.id })).data?.user).toMatchObject({ banned: false, banReason: null });
    expect((await client('users').signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();
  });

  it('lists, on another api process, the session a user signed in with a moment before on the first', async () => {
    const root = await signedInRoot();
    const target = client('users');
    const signedUp = await target.signUp.email({ email: uniqueEmail('listed'), password: DEFAULT_PASSWORD, name: 'Listed' });
    const signedIn = await target.signIn.email({ email: signedUp.data!.user.email, password: DEFAULT_PASSWORD });
    expect(signedIn.error).toBeNull();
    // The session table may show new sessions a moment after the answer: the listing waits for it.
    const listed = await root.admin.listUserSessions({ userId: signedUp.data!.user.id });
    expect(listed.error).toBeNull();
    expect(listed.data?.sessions.map((s) => s.userId)).toEqual([signedUp.data!.user.id, signedUp.data!.user.id]);
    // The admin's listing shows each session by its token's hash.
    expect(listed.data?.sessions.map((s) => s.token)).toContain(hashToken(signedIn.data!.token));
  });

  it('impersonates a user and stops, the admin session restored from admin_session', async () => {
    const root = await signedInRoot();
    const rootId = (await root.getSession()).data!.user.id;
    const target = client('users');
    const signedUp = await target.signUp.email({ email: uniqueEmail('target'), password: DEFAULT_PASSWORD, name: 'Target' });
    const targetId = signedUp.data!.user.id;

    const impersonated = await root.admin.impersonateUser({ userId: targetId });
    expect(impersonated.error).toBeNull();
    expect(impersonated.data?.session).toMatchObject({ userId: targetId, impersonatedBy: rootId });
    const asTarget = await root.getSession();
    expect(asTarget.data?.user.id).toBe(targetId);
    expect(asTarget.data?.session.impersonatedBy).toBe(rootId);

    // While impersonating, the client is the user, with the user's permissions.
    expect((await root.admin.listUserSessions({ userId: targetId })).error).toMatchObject({ status: 403 });
    const sessions = await (await signedInRoot()).admin.listUserSessions({ userId: targetId });
    expect(sessions.data?.sessions.filter((s) => s.impersonatedBy === rootId)).toHaveLength(1);

    const stopped = await root.admin.stopImpersonating();
    expect(stopped.error).toBeNull();
    expect(stopped.data?.user.id).toBe(rootId);
    expect((await root.getSession()).data?.user.id).toBe(rootId);
    expect((await root.admin.stopImpersonating()).error).toMatchObject({ status: 400, message: 'You are not impersonating anyone' });
  });

  it('lists the accounts a user has: none without a password, the password one once an admin sets it', async () => {
    const root = await signedInRoot();
    const created = await root.admin.createUser({ email: uniqueEmail('no-password'), name: 'No Password', role: 'user' });
    expect(created.error).toBeNull();
    const userId = created.data!.user.id;
    const asUser = async () => {
      const admin = await signedInRoot();
      expect((await admin.admin.impersonateUser({ userId })).error).toBeNull();
      return admin;
    };
    const accountsAsUser = async () => {
      const listed = await (await asUser()).listAccounts();
      expect(listed.error).toBeNull();
      return listed.data;
    };

    expect(await accountsAsUser()).toEqual([]);
    // Without any account, whatever unlink-account names is not one of the user's.
    const unlinked = await (await asUser()).unlinkAccount({ accountId: 'no-such-account' });
    expect(unlinked.error).toMatchObject({ code: 'ACCOUNT_NOT_FOUND', message: 'Account not found', status: 400 });
    expect((await root.admin.setUserPassword({ userId, newPassword: DEFAULT_PASSWORD })).error).toBeNull();
    expect(await accountsAsUser()).toEqual([expect.objectContaining({ providerId: 'credential', accountId: userId, userId })]);
  });

  it('revokes a user\'s sessions and removes the user', async () => {
    const root = await signedInRoot();
    const email = uniqueEmail('removed');
    const user = client('users');
    const signedUp = await user.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Removed' });
    const userId = signedUp.data!.user.id;
    expect((await root.admin.revokeUserSessions({ userId })).data).toEqual({ success: true });
    expect((await user.getSession()).data).toBeNull();
    expect((await root.admin.setUserPassword({ userId, newPassword: 'a new password for you' })).data).toEqual({ status: true });
    expect((await client('users').signIn.email({ email, password: 'a new password for you' })).error).toBeNull();
    expect((await root.admin.removeUser({ userId })).data).toEqual({ success: true });
    expect((await root.admin.getUser({ query: { id: userId } })).error).toMatchObject({ status: 404, message: 'User not found' });
  });
});
