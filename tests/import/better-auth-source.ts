import { randomBytes } from 'node:crypto';
import { betterAuth, type BetterAuthOptions } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { admin } from 'better-auth/plugins/admin';
import { organization } from 'better-auth/plugins/organization';
import { username } from 'better-auth/plugins/username';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

/**
 * A better-auth 1.7 database made by better-auth itself: its own migrations with the username, admin and
 * organization (teams on) plugins, and everything in it created through its server API, as an app that ran
 * better-auth would have it. What the import spec reads, and then signs in to Portcullis with.
 */

export const SOURCE_PASSWORD = 'better-auth-password-1';
const SOURCE_URL = 'http://127.0.0.1:3999';

export interface SourceUser {
  readonly id: string;
  readonly email: string;
  readonly username: string | null;
}

export interface BetterAuthSource {
  readonly database: TestDatabase;
  /** The secret better-auth signed its cookies with: the one an operator adds to AUTH_SECRETS. */
  readonly secret: string;
  readonly users: {
    readonly alice: SourceUser;
    readonly bob: SourceUser;
    readonly carol: SourceUser;
    readonly dave: SourceUser;
    readonly root: SourceUser;
    /** Whose address the spec gives a Portcullis user of its own before importing. */
    readonly frank: SourceUser;
  };
  readonly organizations: { readonly acme: { id: string; slug: string }; readonly beta: { id: string; slug: string } };
  readonly teams: { readonly platform: string };
  readonly invitation: { readonly id: string; readonly email: string };
  /** A live session of alice's, as better-auth handed it out: the bare token and the signed cookie value. */
  readonly aliceSession: { readonly token: string; readonly signedCookie: string };
  /** The session root opened by impersonating bob: its bare token. */
  readonly impersonation: { readonly token: string };
  /** Closes the source's pool (the database is dropped by `database.drop`). */
  close(): Promise<void>;
}

function sessionCookieOf(headers: Headers): string {
  const line = headers.getSetCookie().find((cookie) => cookie.startsWith('better-auth.session_token='));
  if (!line) throw new Error('better-auth set no session cookie');
  return decodeURIComponent(line.slice('better-auth.session_token='.length).split(';')[0]!);
}

export async function createBetterAuthSource(): Promise<BetterAuthSource> {
  const database = await createTestDatabase('import_source');
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  const secret = randomBytes(32).toString('base64url');
  const options = {
    secret,
    baseURL: SOURCE_URL,
    database: pool,
    emailAndPassword: { enabled: true },
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    plugins: [username(), admin(), organization({ teams: { enabled: true } })],
  } satisfies BetterAuthOptions;
  try {
    const { runMigrations } = await getMigrations(options);
    await runMigrations();
    const auth = betterAuth(options);

    const signUp = async (name: string, email: string, handle: string | null): Promise<SourceUser> => {
      const { user } = await auth.api.signUpEmail({
        body: { name, email, password: SOURCE_PASSWORD, ...(handle ? { username: handle, displayUsername: handle } : {}) },
      });
      return { id: user.id, email, username: handle?.toLowerCase() ?? null };
    };
    const signIn = async (email: string): Promise<{ headers: Headers; token: string; signedCookie: string }> => {
      const { headers, response } = await auth.api.signInEmail({ body: { email, password: SOURCE_PASSWORD }, returnHeaders: true });
      const signedCookie = sessionCookieOf(headers);
      return { headers: new Headers({ cookie: `better-auth.session_token=${encodeURIComponent(signedCookie)}` }), token: response.token, signedCookie };
    };

    const alice = await signUp('Alice', 'alice@example.com', 'Alice');
    const bob = await signUp('Bob', 'bob@example.com', 'bob_builder');
    const carol = await signUp('Carol', 'carol@example.com', null);
    const dave = await signUp('Dave', 'dave@example.com', null);
    const created = await auth.api.createUser({ body: { email: 'root@example.com', password: SOURCE_PASSWORD, name: 'Root', role: 'admin' } });
    const root: SourceUser = { id: created.user.id, email: 'root@example.com', username: null };

    const frank = await signUp('Frank', 'frank@example.com', null);

    const rootSession = await signIn(root.email);
    await auth.api.banUser({ headers: rootSession.headers, body: { userId: carol.id, banReason: 'spam' } });
    const impersonating = await auth.api.impersonateUser({ headers: rootSession.headers, body: { userId: bob.id } });

    const aliceSession = await signIn(alice.email);
    const acme = await auth.api.createOrganization({ headers: aliceSession.headers, body: { name: 'Acme', slug: 'acme' } });
    if (!acme) throw new Error('better-auth created no organization');
    await auth.api.addMember({ body: { organizationId: acme.id, userId: bob.id, role: 'admin' } });
    await auth.api.addMember({ body: { organizationId: acme.id, userId: dave.id, role: 'member' } });
    const platform = await auth.api.createTeam({ headers: aliceSession.headers, body: { name: 'Platform', organizationId: acme.id } });
    await auth.api.addTeamMember({ headers: aliceSession.headers, body: { teamId: platform.id, userId: bob.id } });
    const invitation = await auth.api.createInvitation({
      headers: aliceSession.headers,
      body: { organizationId: acme.id, email: 'erin@example.com', role: 'member', teamId: platform.id },
    });
    await auth.api.setActiveOrganization({ headers: aliceSession.headers, body: { organizationId: acme.id } });

    const bobSession = await signIn(bob.email);
    const beta = await auth.api.createOrganization({ headers: bobSession.headers, body: { name: 'Beta', slug: 'beta' } });
    if (!beta) throw new Error('better-auth created no organization');
    await auth.api.addMember({ body: { organizationId: beta.id, userId: dave.id, role: 'member' } });

    // What better-auth's API cannot make on demand: time passing (dave's sessions expire) and an account of a
    // provider this Portcullis has no credentials for (bob's GitHub link).
    await pool.query(`update session set "expiresAt" = now() - interval '1 hour' where "userId" = $1`, [dave.id]);
    await pool.query(
      `insert into account (id, "accountId", "providerId", "userId", "accessToken", "createdAt", "updatedAt") values ($1, '4242', 'github', $2, 'gho_example', now(), now())`,
      [randomBytes(16).toString('hex'), bob.id],
    );

    return {
      database,
      secret,
      users: { alice, bob, carol, dave, root, frank },
      organizations: { acme: { id: acme.id, slug: 'acme' }, beta: { id: beta.id, slug: 'beta' } },
      teams: { platform: platform.id },
      invitation: { id: invitation.id, email: 'erin@example.com' },
      aliceSession: { token: aliceSession.token, signedCookie: aliceSession.signedCookie },
      impersonation: { token: impersonating.session.token },
      close: () => pool.end(),
    };
  } catch (error) {
    await pool.end().catch(() => {});
    await database.drop().catch(() => {});
    throw error;
  }
}
