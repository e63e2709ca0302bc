import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createAuthClient } from 'better-auth/client';
import { organizationClient, usernameClient } from 'better-auth/client/plugins';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { nodeArgumentsFor, serviceEntries } from '../../scripts/build.ts';
import { DEFAULT_PASSWORD } from '../support/auth.ts';
import { cookieJarFetch } from '../support/better-auth-fetch.ts';
import { inheritedEnv, waitFor } from '../support/processes.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { startSystem, type System } from '../support/system.ts';
import { createBetterAuthSource, SOURCE_PASSWORD, type BetterAuthSource } from './better-auth-source.ts';

/**
 * `import better-auth <url>` as an operator runs it: the built CLI, against a better-auth 1.7 database that
 * better-auth itself made, into a running Portcullis whose ring holds better-auth's secret after its own.
 * Then everyone signs in through better-auth's own client, what they belonged to is there, and a session
 * better-auth handed out keeps working, by bearer and by its signed cookie.
 */

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let source: BetterAuthSource;
let system: System;

beforeAll(async () => {
  source = await createBetterAuthSource();
  system = await startSystem({ env: { AUTH_SECRET: '', AUTH_SECRETS: `${randomBytes(32).toString('base64url')},${source.secret}` } });
});
afterAll(async () => {
  await system?.stop();
  await source?.close();
  await source?.database.drop();
});

function importCli(...args: string[]): Promise<CliResult> {
  return importCliWith(system.env, ...args);
}

/** The built CLI with the environment an operator gives it (the services' own: DATABASE_URL, the ring). */
function importCliWith(env: Readonly<Record<string, string>>, ...args: string[]): Promise<CliResult> {
  const entry = serviceEntries.import.built;
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeArgumentsFor(entry), entry, ...args], { env: { ...inheritedEnv(), ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

function client(into: System = system) {
  const { fetchOptions } = cookieJarFetch(into);
  return createAuthClient({ baseURL: into.baseUrl, fetchOptions, plugins: [usernameClient(), organizationClient({ teams: { enabled: true } })] });
}

/** The summary's line for a kind (`users: 5 imported, 0 already there, 1 skipped`) and its reasons. */
function summaryOf(stdout: string, kind: string): string {
  const lines = stdout.split('\n').map((line) => line.replace(/^\[import\]\s+/, ''));
  let start = -1;
  lines.forEach((line, index) => {
    if (line.startsWith(`${kind}: `) && line.includes('already there')) start = index;
  });
  if (start < 0) throw new Error(`no summary for ${kind} in:\n${stdout}`);
  const reasons = [];
  for (let i = start + 1; i < lines.length && lines[i]!.startsWith('skipped'); i += 1) reasons.push(lines[i]!.trim());
  return [lines[start], ...reasons].join('\n');
}

describe('import better-auth', () => {
  let first: CliResult;

  beforeAll(async () => {
    // An address Portcullis already has under an id of its own: that better-auth user stays out.
    const frank = client();
    const signedUp = await frank.signUp.email({ email: source.users.frank.email, password: DEFAULT_PASSWORD, name: 'Frank in Portcullis' });
    expect(signedUp.error).toBeNull();
    first = await importCli('better-auth', source.database.url, '--keep-sessions');
  });

  it('reports what it imported and what it skipped, and why', () => {
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(first.stdout).toMatch(/\[import\] users: \d+\/6/);
    expect(summaryOf(first.stdout, 'users')).toBe('users: 5 imported, 0 already there, 1 skipped\nskipped 1: email already present under another id');
    expect(summaryOf(first.stdout, 'accounts').split('\n').sort()).toEqual(
      ['accounts: 5 imported, 0 already there, 2 skipped', 'skipped 1: its user was not imported', 'skipped 1: provider github not configured'].sort(),
    );
    expect(summaryOf(first.stdout, 'organizations')).toBe('organizations: 2 imported, 0 already there, 0 skipped');
    expect(summaryOf(first.stdout, 'members')).toBe('members: 5 imported, 0 already there, 0 skipped');
    expect(summaryOf(first.stdout, 'teams')).toBe('teams: 3 imported, 0 already there, 0 skipped');
    expect(summaryOf(first.stdout, 'team members')).toBe('team members: 3 imported, 0 already there, 0 skipped');
    expect(summaryOf(first.stdout, 'invitations')).toBe('invitations: 1 imported, 0 already there, 0 skipped');
    expect(summaryOf(first.stdout, 'sessions').split('\n').sort()).toEqual(
      ['sessions: 6 imported, 0 already there, 2 skipped', 'skipped 1: expired', 'skipped 1: its user was not imported'].sort(),
    );
  });

  it('signs every imported user in with their better-auth password, under their better-auth id, by email and by username', async () => {
    for (const user of [source.users.alice, source.users.bob, source.users.dave, source.users.root]) {
      const signedIn = await client().signIn.email({ email: user.email, password: SOURCE_PASSWORD });
      expect(signedIn.error, user.email).toBeNull();
      expect(signedIn.data?.user.id).toBe(user.id);
    }
    const byUsername = await client().signIn.username({ username: 'BOB_builder', password: SOURCE_PASSWORD });
    expect(byUsername.error).toBeNull();
    expect(byUsername.data?.user.id).toBe(source.users.bob.id);
    const wrong = await client().signIn.email({ email: source.users.alice.email, password: 'not-the-password' });
    expect(wrong.error?.status).toBe(401);

    // Each sign-in replaced better-auth's scrypt hash with an argon2id one; the old one is no longer used.
    const rehashed = await system.query<{ user_id: string }>(
      `select data->>'userId' as user_id from events where type = 'user.password_rehashed.v1' and data->>'previous' = 'better-auth-scrypt'`,
    );
    expect(rehashed.map((r) => r.user_id).sort()).toEqual([source.users.alice.id, source.users.bob.id, source.users.dave.id, source.users.root.id].sort());
    const again = await client().signIn.email({ email: source.users.alice.email, password: SOURCE_PASSWORD });
    expect(again.error).toBeNull();
  });

  it('refuses the banned user with the ban answer', async () => {
    const banned = await client().signIn.email({ email: source.users.carol.email, password: SOURCE_PASSWORD });
    expect(banned.error?.status).toBe(403);
    expect(banned.error?.code).toBe('BANNED_USER');
    expect(banned.error?.message).toBe(errorCatalogue.BANNED_USER.message);
  });

  it('brings the organizations with their members, teams and invitations, under their better-auth ids', async () => {
    const alice = client();
    expect((await alice.signIn.email({ email: source.users.alice.email, password: SOURCE_PASSWORD })).error).toBeNull();
    const { acme } = source.organizations;
    const fullOrganization = async () => (await alice.organization.getFullOrganization({ query: { organizationId: acme.id } })).data;
    await waitFor(
      async () => {
        const full = await fullOrganization();
        return full?.members.length === 3 && full.invitations.length === 1;
      },
      { timeoutMs: 30_000, intervalMs: 100, message: 'Acme with its three members and its invitation' },
    );
    const organization = (await fullOrganization())!;
    expect(organization).toMatchObject({ id: acme.id, name: 'Acme', slug: 'acme' });
    expect(Object.fromEntries(organization.members.map((m) => [m.userId, m.role]))).toEqual({
      [source.users.alice.id]: 'owner',
      [source.users.bob.id]: 'admin',
      [source.users.dave.id]: 'member',
    });
    expect(organization.invitations[0]).toMatchObject({ id: source.invitation.id, email: source.invitation.email, role: 'member', status: 'pending', teamId: source.teams.platform });

    const teams = await alice.organization.listTeams({ query: { organizationId: acme.id } });
    expect(teams.data?.map((t) => t.name).sort()).toEqual(['Acme', 'Platform']);
    const bob = client();
    expect((await bob.signIn.email({ email: source.users.bob.email, password: SOURCE_PASSWORD })).error).toBeNull();
    const platform = await bob.organization.listTeamMembers({ query: { teamId: source.teams.platform } });
    expect(platform.error).toBeNull();
    expect(platform.data?.map((m: { userId: string }) => m.userId)).toEqual([source.users.bob.id]);

    const dave = client();
    expect((await dave.signIn.email({ email: source.users.dave.email, password: SOURCE_PASSWORD })).error).toBeNull();
    const daves = await dave.organization.list();
    expect(daves.data?.map((o) => o.slug).sort()).toEqual(['acme', 'beta']);
  });

  it('keeps a live session: its token works as a bearer and its better-auth cookie verifies under the ring, in the organization it worked in', async () => {
    const { token, signedCookie } = source.aliceSession;
    const presented: Array<Record<string, string>> = [{ authorization: `Bearer ${token}` }, { cookie: `better-auth.session_token=${encodeURIComponent(signedCookie)}` }];
    for (const headers of presented) {
      const response = await fetch(`${system.authUrl}/get-session`, { headers });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as { user: { id: string }; session: { token: string; activeOrganizationId: string | null } } | null;
      expect(answer?.user.id).toBe(source.users.alice.id);
      expect(answer?.session).toMatchObject({ token, activeOrganizationId: source.organizations.acme.id });
    }
  });

  it('keeps an impersonation as one: a session of bob’s, opened by root', async () => {
    const response = await fetch(`${system.authUrl}/get-session`, { headers: { authorization: `Bearer ${source.impersonation.token}` } });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { user: { id: string }; session: { impersonatedBy?: string | null } } | null;
    expect(answer?.user.id).toBe(source.users.bob.id);
    expect(answer?.session.impersonatedBy).toBe(source.users.root.id);
  });

  it('seals personal data as the api does, and names the run in every event it appended', async () => {
    const [raw] = await system.query<{ email: string; request_id: string }>(
      `select data->>'email' as email, metadata->>'requestId' as request_id from events where type = 'user.registered.v1' and data->>'userId' = $1`,
      [source.users.alice.id],
    );
    expect(raw!.email).toMatch(/^pd1\./);
    expect(raw!.request_id).toMatch(/^import-/);
    const [opened] = await system.events<{ type: string; data: { email: string } }>(
      `select type, data, metadata from events where type = 'user.registered.v1' and data->>'userId' = $1`,
      [source.users.alice.id],
    );
    expect(opened!.data.email).toBe(source.users.alice.email);
  });

  it('imports nothing new when run again, nor brings back what was removed in Portcullis since', async () => {
    const alice = client();
    expect((await alice.signIn.email({ email: source.users.alice.email, password: SOURCE_PASSWORD })).error).toBeNull();
    const removed = await alice.organization.removeMember({ memberIdOrEmail: source.users.dave.email, organizationId: source.organizations.acme.id });
    expect(removed.error).toBeNull();

    const again = await importCli('better-auth', source.database.url, '--keep-sessions');
    expect(again.code, again.stderr + again.stdout).toBe(0);
    for (const kind of ['users', 'accounts', 'organizations', 'members', 'teams', 'team members', 'invitations', 'sessions']) {
      expect(summaryOf(again.stdout, kind)).toMatch(new RegExp(`^${kind}: 0 imported`));
    }
    expect(summaryOf(again.stdout, 'users')).toMatch(/^users: 0 imported, 5 already there, 1 skipped/);
    expect(summaryOf(again.stdout, 'members')).toBe('members: 0 imported, 5 already there, 0 skipped');
    expect(summaryOf(again.stdout, 'sessions')).toMatch(/^sessions: 0 imported, 6 already there, 2 skipped/);
    const members = await alice.organization.getFullOrganization({ query: { organizationId: source.organizations.acme.id } });
    expect(members.data?.members.map((m) => m.userId).sort()).toEqual([source.users.alice.id, source.users.bob.id].sort());
  });

  it('refuses a database that is not better-auth’s, and a command line it cannot read', async () => {
    const notBetterAuth = await importCli('better-auth', system.database.url);
    expect(notBetterAuth.code).toBe(65);
    expect(notBetterAuth.stderr).toContain('a Portcullis database (it has an event log), not a better-auth one');
    const usage = await importCli('clerk', source.database.url);
    expect(usage.code).toBe(64);
    expect(usage.stderr).toContain('usage: npm run import -- better-auth');
  });
});

describe('import better-auth into a Portcullis that is not running', () => {
  it('imports with no service up, and the services started afterwards serve what it wrote', async () => {
    const database = await createTestDatabase('import_offline', { migrated: true });
    const secrets = `${randomBytes(32).toString('base64url')},${source.secret}`;
    const run = await importCliWith(
      { NODE_ENV: 'test', DATABASE_URL: database.url, AUTH_SECRET: '', AUTH_SECRETS: secrets, LOG_LEVEL: 'warn', REDIS_URL: '', KAFKA_BROKERS: '' },
      'better-auth',
      source.database.url,
      '--keep-sessions',
    );
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(summaryOf(run.stdout, 'users')).toBe('users: 6 imported, 0 already there, 0 skipped');

    const later = await startSystem({ database, env: { AUTH_SECRET: '', AUTH_SECRETS: secrets } });
    try {
      const alice = client(later);
      const signedIn = await alice.signIn.email({ email: source.users.alice.email, password: SOURCE_PASSWORD });
      expect(signedIn.error).toBeNull();
      expect(signedIn.data?.user.id).toBe(source.users.alice.id);
      const kept = await fetch(`${later.authUrl}/get-session`, { headers: { authorization: `Bearer ${source.aliceSession.token}` } });
      expect(((await kept.json()) as { user: { id: string } } | null)?.user.id).toBe(source.users.alice.id);
    } finally {
      await later.stop();
    }
  });
});
