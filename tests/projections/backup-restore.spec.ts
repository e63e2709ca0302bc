import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectionStatus } from '@portcullis/contracts';
import { migrate } from '@portcullis/platform';
import { DEFAULT_PASSWORD, cookieNames, signIn, signUp, uniqueEmail } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { createTestDatabase, postgresAdminUrl, type TestDatabase } from '../support/postgres.ts';
import { postgresClientToolsFor, type PostgresClientTools } from '../support/postgres-client-tools.ts';
import { repoRoot, waitFor } from '../support/processes.ts';
import { nodeArgumentsFor, serviceEntries } from '../../scripts/build.ts';
import { testRedisUrl } from '../support/redis.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient, type HttpResponse } from '../support/system.ts';

/**
 * Backup as the event log (docs/operations.md, "Backups"): a system with a varied history is dumped with the
 * section's own commands, restored into a fresh database, and started again; every projection is rebuilt
 * from the log alone, and what the system answers is what it answered before, with no mail sent again.
 */
const run = promisify(execFile);
const ADMIN_EMAIL = 'backup-admin@example.com';
const ADMIN_PASSWORD = 'backup admin password';
const signingKey = generateKeyPairSync('ed25519');

const tools = await postgresClientToolsFor(postgresAdminUrl());
if ('missing' in tools) console.warn(`[notice] backup-restore: skipped, ${tools.missing}`);

describe.skipIf('missing' in tools)('a backup of the event log', () => {
  const redis = testRedisUrl() !== null;
  const commonEnv = {
    AUTH_BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL,
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
    AUDIT_SIGNING_KEY: signingKey.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
  let original: MailSystem | undefined;
  let restored: MailSystem | undefined;
  let restoredDatabase: TestDatabase | undefined;
  let workDir: string;

  beforeAll(async () => {
    if (!redis) console.warn('[notice] backup-restore: Redis not reachable; the session cache is not part of this run');
    workDir = await mkdtemp(path.join(tmpdir(), 'portcullis-backup-'));
    original = await startMailSystem({ redis, env: commonEnv });
  }, 120_000);

  afterAll(async () => {
    await restored?.stop();
    await original?.stop();
    if (!restored) await restoredDatabase?.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('restores into a fresh database with the same answers, ended sessions still ended and no mail sent again', async () => {
    const source = original!;
    const history = await makeHistory(source);
    await caughtUp(source, history.admin);
    await source.mailerIdle();
    expect(source.smtp!.mails.length).toBeGreaterThanOrEqual(4);
    const before = await answers(source.baseUrl, history);
    expectHistoryShown(before);

    // A head signed before the dump, kept where the database's owners cannot write (audit-trail practice).
    const signedHead = path.join(workDir, 'head.json');
    await writeFile(signedHead, (await auditCli(source.env, 'head')).stdout);
    const publicKey = path.join(workDir, 'audit-public-key.pem');
    await writeFile(publicKey, signingKey.publicKey.export({ format: 'pem', type: 'spki' }));

    const [backupCommands, restoreCommands] = await backupSectionCommands();
    await shell(backupCommands!, source.database.url, tools as PostgresClientTools, workDir);

    // Written after the dump, so gone once it is restored, whatever the Redis cache kept from before says:
    // alice's sessions all ended, and one opened since.
    const admin = new HttpClient(source.authUrl, { cookie: history.admin });
    expect((await admin.post('admin/revoke-user-sessions', { userId: history.users.alice })).status).toBe(200);
    const afterDump = new HttpClient(source.authUrl);
    await signIn(afterDump, { email: history.aliceEmail });
    await caughtUp(source, history.admin);
    // The old system is gone; its Redis stays, holding a cache of a history the restored log does not have.
    await Promise.all([source.api.stop(), source.mailer.stop(), source.projector.stop()]);

    restoredDatabase = await createTestDatabase('restored');
    await migrate(restoredDatabase.url);
    await shell(restoreCommands!, restoredDatabase.url, tools as PostgresClientTools, workDir);
    restored = await startMailSystem({
      redis,
      database: restoredDatabase,
      env: { ...commonEnv, AUTH_SECRET: source.env.AUTH_SECRET!, REDIS_KEY_PREFIX: source.env.REDIS_KEY_PREFIX! },
    });
    await caughtUp(restored, history.admin);
    await restored.mailerIdle();

    expect(await answers(restored.baseUrl, history)).toEqual(before);
    const sessionAfterDump = await new HttpClient(restored.authUrl).get('get-session?disableRefresh=true', { headers: { cookie: sessionCookieOf(afterDump) } });
    expect({ status: sessionAfterDump.status, body: sessionAfterDump.json }).toEqual({ status: 200, body: null });
    const [delivered] = await restored.query<{ sent: number }>(`SELECT count(*)::int AS sent FROM mail_delivery WHERE status = 'sent'`);
    expect(delivered!.sent).toBe(source.smtp!.mails.length);
    expect(restored.smtp!.mails).toEqual([]);

    // The restored log goes on where the dump ended, in the same chain, as the same log the head was signed for.
    const [head] = await restored.query<{ position: string }>('SELECT position::text FROM event_log_head');
    await signUp(new HttpClient(restored.authUrl), { name: 'After the restore' });
    const verdict = JSON.parse((await auditCli(restored.env, 'verify', '--head', signedHead, '--public-key', publicKey)).stdout) as {
      ok: boolean;
      verifiedTo: number;
    };
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    expect(verdict.verifiedTo).toBeGreaterThan(Number(head!.position));
  }, 300_000);
});

/** A session's cookie, as its client sent it while the session was live. */
type SessionCookie = string;

interface History {
  readonly admin: SessionCookie;
  readonly users: Readonly<Record<'alice' | 'bob' | 'carol' | 'dave' | 'erin', string>>;
  readonly aliceEmail: string;
  readonly organizationId: string;
  /** Every session opened, live or ended, by what happened to it. */
  readonly sessions: Readonly<Record<string, SessionCookie>>;
}

function sessionCookieOf(client: HttpClient): SessionCookie {
  const token = client.cookie(cookieNames.sessionToken);
  if (!token) throw new Error('the client holds no session');
  return `${cookieNames.sessionToken}=${token}`;
}

/**
 * Sign-ups, sign-ins by email and by username, a verified email, an organization with a member and a pending
 * invitation, a ban lifted and one kept, a deleted user, a password change that ended another session, a
 * revoked session and a signed-out one, a password reset asked for.
 */
async function makeHistory(system: MailSystem): Promise<History> {
  const client = (): HttpClient => new HttpClient(system.authUrl);
  const ok = (response: HttpResponse, what: string): void => expect(response.status, `${what}: ${response.text}`).toBe(200);

  const admin = client();
  await signIn(admin, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  const adminSession = sessionCookieOf(admin);

  const aliceEmail = uniqueEmail('alice');
  const aliceName = `alice_${aliceEmail.slice(6, 16)}`;
  const alice = client();
  const aliceUp = await alice.post<{ user: { id: string } }>('sign-up/email', { name: 'Alice', email: aliceEmail, password: DEFAULT_PASSWORD, username: aliceName });
  ok(aliceUp, 'alice signs up with a username');
  ok(await client().post('send-verification-email', { email: aliceEmail }), 'a verification mail');
  const verified = await client().get(linkIn(await system.smtp!.waitForMail(aliceEmail, { subject: /Verify/ })));
  expect(verified.status, verified.text).toBeLessThan(400);
  const aliceRevoked = client();
  const aliceRevokedIn = await signIn(aliceRevoked, { email: aliceEmail });
  const aliceSignedOut = client();
  ok(await aliceSignedOut.post('sign-in/username', { username: aliceName, password: DEFAULT_PASSWORD }), 'alice signs in by username');
  const sessions: Record<string, SessionCookie> = {
    admin: adminSession,
    alice: sessionCookieOf(alice),
    aliceRevoked: sessionCookieOf(aliceRevoked),
    aliceSignedOut: sessionCookieOf(aliceSignedOut),
  };
  ok(await aliceSignedOut.post('sign-out', {}), 'alice signs out of one session');
  ok(await alice.post('revoke-session', { token: aliceRevokedIn.token }), 'alice revokes another');

  const bobEmail = uniqueEmail('bob');
  const bob = client();
  const bobUp = await signUp(bob, { name: 'Bob', email: bobEmail });
  const bobElsewhere = client();
  await signIn(bobElsewhere, { email: bobEmail });
  sessions.bobBeforePasswordChange = sessionCookieOf(bob);
  sessions.bobElsewhere = sessionCookieOf(bobElsewhere);
  ok(await bob.post('change-password', { currentPassword: DEFAULT_PASSWORD, newPassword: 'a new password for bob', revokeOtherSessions: true }), 'bob changes his password');
  sessions.bob = sessionCookieOf(bob);

  const carolEmail = uniqueEmail('carol');
  const carol = client();
  const carolUp = await signUp(carol, { name: 'Carol', email: carolEmail });
  sessions.carolBeforeBan = sessionCookieOf(carol);
  const dave = client();
  const daveUp = await signUp(dave, { name: 'Dave', email: uniqueEmail('dave') });
  sessions.daveBanned = sessionCookieOf(dave);
  const erin = client();
  const erinUp = await signUp(erin, { name: 'Erin', email: uniqueEmail('erin') });
  sessions.erinDeleted = sessionCookieOf(erin);

  const organization = await alice.post<{ id: string }>('organization/create', { name: 'Acme Backups', slug: `acme-${aliceEmail.slice(6, 16)}` });
  ok(organization, 'alice creates an organization');
  const organizationId = organization.json.id;
  const bobInvited = await alice.post<{ id: string }>('organization/invite-member', { organizationId, email: bobEmail, role: 'member' });
  ok(bobInvited, 'alice invites bob');
  ok(await bob.post('organization/accept-invitation', { invitationId: bobInvited.json.id }), 'bob accepts');
  ok(await alice.post('organization/invite-member', { organizationId, email: carolEmail, role: 'admin' }), 'alice invites carol');

  ok(await admin.post('admin/ban-user', { userId: carolUp.user.id, banReason: 'a mistake' }), 'carol banned');
  ok(await admin.post('admin/unban-user', { userId: carolUp.user.id }), 'and unbanned');
  ok(await admin.post('admin/ban-user', { userId: daveUp.user.id, banReason: 'for good' }), 'dave banned');
  ok(await admin.post('admin/remove-user', { userId: erinUp.user.id }), 'erin removed');
  ok(await client().post('request-password-reset', { email: carolEmail, redirectTo: '/reset' }), 'carol asks for a reset');
  await signIn(carol, { email: carolEmail });
  sessions.carol = sessionCookieOf(carol);

  return {
    admin: adminSession,
    users: { alice: aliceUp.json.user.id, bob: bobUp.user.id, carol: carolUp.user.id, dave: daveUp.user.id, erin: erinUp.user.id },
    aliceEmail,
    organizationId,
    sessions,
  };
}

interface Answers {
  readonly [read: string]: { readonly status: number; readonly body: unknown };
}

/** The reads compared across the restore: the users' own, the admin's, and the operators' views of the log. */
async function answers(baseUrl: string, history: History): Promise<Answers> {
  const read = async (path: string, cookie: SessionCookie): Promise<{ status: number; body: unknown }> => {
    const response = await new HttpClient(`${baseUrl}/api/auth`).get(path, { headers: { cookie } });
    return { status: response.status, body: response.json ?? response.text };
  };
  const reads: Record<string, { status: number; body: unknown }> = {};
  for (const [name, cookie] of Object.entries(history.sessions)) {
    reads[`get-session as ${name}`] = await read('get-session?disableRefresh=true', cookie);
  }
  for (const name of ['alice', 'bob', 'carol'] as const) {
    reads[`list-sessions as ${name}`] = await read('list-sessions', history.sessions[name]!);
    reads[`organizations of ${name}`] = await read('organization/list', history.sessions[name]!);
  }
  reads['the organization, for alice'] = await read(`organization/get-full-organization?organizationId=${history.organizationId}`, history.sessions.alice!);
  reads['invitations, for alice'] = await read(`organization/list-invitations?organizationId=${history.organizationId}`, history.sessions.alice!);
  reads['list-users'] = await read('admin/list-users?sortBy=createdAt&sortDirection=asc&limit=500', history.admin);
  reads['ops sessions'] = await read('/ops/sessions?sortBy=createdAt&sortDirection=asc&limit=500', history.admin);
  reads['ops organization'] = await read(`/ops/organizations/${history.organizationId}`, history.admin);
  reads['mail deliveries'] = await read('/ops/mail/deliveries?limit=500', history.admin);
  for (const [name, id] of Object.entries(history.users)) {
    reads[`ops user ${name}`] = await read(`/ops/users/${id}`, history.admin);
    reads[`lookup ${name}`] = await read(`/ops/lookup?id=${id}`, history.admin);
    reads[`time travel ${name}`] = await read(`/ops/audit/users/${id}`, history.admin);
  }
  let cursor: number | null = 0;
  for (let page = 1; cursor !== null; page += 1) {
    const answer = await read(`/ops/audit/events?order=oldest&limit=25&cursor=${cursor}`, history.admin);
    reads[`audit page ${page}`] = answer;
    cursor = answer.status === 200 ? (answer.body as { nextCursor: number | null }).nextCursor : null;
  }
  return reads;
}

/** What the history made is there to be compared: ended sessions read as none, live ones as theirs. */
function expectHistoryShown(before: Answers): void {
  const session = (name: string): unknown => (before[`get-session as ${name}`]!.body as { session?: unknown } | null)?.session ?? null;
  for (const ended of ['aliceRevoked', 'aliceSignedOut', 'bobElsewhere', 'bobBeforePasswordChange', 'carolBeforeBan', 'daveBanned', 'erinDeleted']) {
    expect(session(ended), ended).toBeNull();
  }
  for (const live of ['admin', 'alice', 'bob', 'carol']) expect(session(live), live).not.toBeNull();
  // The deleted user is gone from the read models; the log still holds what they did.
  const refused: Record<string, number> = { 'ops user erin': 404 };
  for (const [name, answer] of Object.entries(before)) expect(answer.status, `${name}: ${JSON.stringify(answer.body)}`).toBe(refused[name] ?? 200);
  expect(Object.keys(before).filter((name) => name.startsWith('audit page')).length).toBeGreaterThan(2);
}

/** Every projection has applied the whole log, as the operators' view of them says. */
async function caughtUp(system: MailSystem, admin: SessionCookie): Promise<void> {
  const client = new HttpClient(system.baseUrl);
  await waitFor(
    async () => {
      const listed = await client.get<{ projections: ProjectionStatus[] }>('/ops/projections', { headers: { cookie: admin } });
      return listed.status === 200 && listed.json.projections.every((projection) => projection.lagEvents === 0);
    },
    { timeoutMs: 60_000, intervalMs: 100, message: 'every projection to reach the head of the log' },
  );
}

/** The shell blocks of docs/operations.md's "Backups": taking a dump, then loading it. */
async function backupSectionCommands(): Promise<string[]> {
  const operations = await readFile(path.join(repoRoot, 'docs', 'operations.md'), 'utf8');
  const section = /^## Backups\n([\s\S]*?)(?=^## )/m.exec(operations)?.[1];
  if (!section) throw new Error('docs/operations.md has no "## Backups" section');
  const blocks = [...section.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!.split('\n').map((line) => line.slice(indent!.length)).join('\n'),
  );
  if (blocks.length !== 2) throw new Error(`docs/operations.md "Backups" should have two sh blocks (dump, load), has ${blocks.length}`);
  return blocks;
}

/** The audit CLI, built, against a system's database (it exits 1 on a chain that does not hold). */
async function auditCli(env: Readonly<Record<string, string>>, ...args: string[]): Promise<{ stdout: string }> {
  const entry = serviceEntries.audit.built;
  return run(process.execPath, [...nodeArgumentsFor(entry), entry, ...args], { env: { ...process.env, ...env } });
}

/** Runs documented commands as an operator would, against one database, with the client tools that fit it. */
async function shell(commands: string, databaseUrl: string, found: PostgresClientTools, cwd: string): Promise<void> {
  await run('bash', ['-euo', 'pipefail', '-c', commands], {
    cwd,
    env: { ...process.env, PATH: `${found.binDir}${path.delimiter}${process.env.PATH ?? ''}`, DATABASE_URL: databaseUrl },
  });
}
