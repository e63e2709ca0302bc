import {
  DomainError,
  isValidEmail,
  isValidSlug,
  normalizeSlug,
  normalizeUsername,
  parseRoleList,
  creatorRole,
  SessionActiveOrganizationChanged,
  streamModel,
  streams,
  UserBanned,
  type StreamModel,
  UserRoleChanged,
  usernameProblem,
  type DomainEvent,
} from '@portcullis/contracts';
import { hashToken, sessionIdForTokenHash, type CommandHandler, type Config, type RequestMetadata, type UnitOfWork } from '@portcullis/platform';
import { DEFAULT_ROLE } from '../admin/access.decider.ts';
import { emailReservationIn } from '../identity/account-model.ts';
import { userModel } from '../identity/user.decider.ts';
import { linkProviderAccountIn, type NewProviderAccount } from '../identity/provider-accounts.ts';
import { registerUserIn } from '../identity/register-user.command.ts';
import { initialUsernameFields, usernameReservationModel, type UsernameFields } from '../identity/username.decider.ts';
import { decideInvitation } from '../organization/invitation.decider.ts';
import { decideMember } from '../organization/member.decider.ts';
import { recordMembershipChanges } from '../organization/membership-index.ts';
import { foldDecided } from '../organization/organization-answers.ts';
import { decideOrganization } from '../organization/organization.decider.ts';
import { memberByUserId, organizationModel, type OrganizationState } from '../organization/organization.state.ts';
import { claimSlug } from '../organization/slug-reservation.ts';
import { decideTeam } from '../organization/team.decider.ts';
import { socialProviders } from '../social/providers/index.ts';
import { openImpersonationSession, openSession } from '../session/session-lifecycle.ts';
import { sessionModel } from '../session/session.decider.ts';
import type { BetterAuthSource, SourceAccount, SourceOrganization, SourceOrganizationRows, SourceSession, SourceUser } from './better-auth-source.ts';

/**
 * A better-auth 1.x database read into Portcullis (`npm run import -- better-auth <url>`): every row becomes
 * the events the api appends for the same facts, decided by the api's own deciders through the command
 * handler, on the store that seals personal data as the api's does. Nothing is written to a read model: the
 * projectors build them from these events whenever they run (now, or once started).
 *
 * better-auth's ids are kept (users, organizations, members, teams, team members, invitations), so an app's
 * own tables that refer to them keep working; sessions take the id Portcullis derives from their token.
 * Each row is one command that first reads what the log holds of it: a rerun finds what an earlier run
 * wrote and moves on, so it continues where one stopped and never writes anything twice.
 */

export type ImportKind = 'users' | 'accounts' | 'organizations' | 'members' | 'teams' | 'team members' | 'invitations' | 'sessions' | 'verifications';

export const importKinds: readonly ImportKind[] = ['users', 'accounts', 'organizations', 'members', 'teams', 'team members', 'invitations', 'sessions', 'verifications'];

export interface KindTally {
  imported: number;
  /** Written by an earlier run (or present already under the same id). */
  present: number;
  /** Reason → rows. */
  skipped: Map<string, number>;
}

export type ImportSummary = ReadonlyMap<ImportKind, KindTally>;

export interface ImportOptions {
  /** Live sessions carried over, so nobody is signed out (their tokens and cookies keep working). */
  readonly keepSessions: boolean;
  /** Rows read per page. */
  readonly batchSize: number;
  /** Commands at once. */
  readonly concurrency: number;
  readonly now: () => Date;
  /** A line of progress. */
  readonly report: (line: string) => void;
  /** The run, as it appears in every event's metadata (`requestId`): the audit trail finds the import by it. */
  readonly runId: string;
}

export interface ImportPorts {
  readonly commands: CommandHandler;
  readonly config: Config;
  /** Provider ids with credentials configured (Portcullis cannot refresh or use an account of any other). */
  readonly providers: ReadonlySet<string>;
}

type Outcome = { readonly kind: ImportKind; readonly result: 'imported' | 'present' } | { readonly kind: ImportKind; readonly result: 'skipped'; readonly reason: string };

const imported = (kind: ImportKind): Outcome => ({ kind, result: 'imported' });
const present = (kind: ImportKind): Outcome => ({ kind, result: 'present' });
const skipped = (kind: ImportKind, reason: string): Outcome => ({ kind, result: 'skipped', reason });

/** What the import runs on: the command handler over the sealed store, and the configuration's providers. */
export function importPortsOf(commands: CommandHandler, config: Config): ImportPorts {
  return { commands, config, providers: new Set(socialProviders(config.social).keys()) };
}

export { BetterAuthSource, SourceSchemaError } from './better-auth-source.ts';

/** better-auth's admin plugin bans with this reason when none is given. */
const DEFAULT_BAN_REASON = 'No reason';
const CREDENTIAL_PROVIDER = 'credential';

class Tally {
  readonly kinds = new Map<ImportKind, KindTally>(importKinds.map((kind) => [kind, { imported: 0, present: 0, skipped: new Map() }]));

  add(outcomes: readonly Outcome[]): void {
    for (const outcome of outcomes) {
      const kind = this.kinds.get(outcome.kind)!;
      if (outcome.result === 'skipped') kind.skipped.set(outcome.reason, (kind.skipped.get(outcome.reason) ?? 0) + 1);
      else kind[outcome.result] += 1;
    }
  }

  line(kind: ImportKind): string {
    const k = this.kinds.get(kind)!;
    const skippedCount = [...k.skipped.values()].reduce((a, b) => a + b, 0);
    return `${k.imported} imported, ${k.present} already there, ${skippedCount} skipped`;
  }
}

/** Runs `work` over `items`, `concurrency` at a time, in order of starting. */
async function eachConcurrently<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

export async function importFromBetterAuth(ports: ImportPorts, source: BetterAuthSource, options: ImportOptions): Promise<ImportSummary> {
  const request: RequestMetadata = {
    ipAddress: null,
    userAgent: 'portcullis-import (better-auth)',
    requestId: options.runId,
    correlationId: options.runId,
    traceparent: null,
  };
  const tally = new Tally();
  /** Users this run can refer to: imported now or by an earlier run (same id, same address). */
  const users = new Set<string>();
  const run = async <T>(name: string, serialize: readonly string[], work: (unit: UnitOfWork) => Promise<T>): Promise<T> =>
    (await ports.commands.handle({ name, request, actorId: null, actorKind: 'system', serialize, settle: 'none' }, work)).result;
  const walk = async <Row extends { id: string }>(
    label: string,
    total: number,
    page: (after: string | null) => Promise<Row[]>,
    each: (rows: Row[]) => Promise<void>,
    kind: ImportKind,
  ): Promise<void> => {
    let after: string | null = null;
    let done = 0;
    for (;;) {
      const rows = await page(after);
      if (rows.length === 0) break;
      await each(rows);
      done += rows.length;
      after = rows.at(-1)!.id;
      options.report(`${label}: ${done}/${total} (${tally.line(kind)})`);
    }
  };

  // Users, with their accounts: one command each.
  await walk(
    'users',
    await source.count('user'),
    (after) => source.users(after, options.batchSize),
    async (rows) => {
      const accounts = new Map<string, SourceAccount[]>();
      for (const account of await source.accountsOf(rows.map((r) => r.id))) accounts.set(account.userId, [...(accounts.get(account.userId) ?? []), account]);
      await eachConcurrently(rows, options.concurrency, async (row) => {
        tally.add(await importUser(row, accounts.get(row.id) ?? []));
      });
    },
    'users',
  );

  async function importUser(row: SourceUser, accounts: readonly SourceAccount[]): Promise<Outcome[]> {
    const email = row.email.trim().toLowerCase();
    const accountsSkipped = (reason: string) => accounts.map(() => skipped('accounts', reason));
    if (!isValidEmail(email)) return [skipped('users', 'invalid email'), ...accountsSkipped('its user was not imported')];
    const now = options.now();
    const credential = accounts.find((a) => a.providerId === CREDENTIAL_PROVIDER) ?? null;
    const providerAccounts = accounts.filter((a) => a.providerId !== CREDENTIAL_PROVIDER);
    const username = usernameOf(row);
    try {
      return await run('import.user', [streams.email(email)], async (unit) => {
        const outcomes: Outcome[] = [];
        const [user, reservation] = await Promise.all([unit.load(streams.user(row.id), userModel), emailReservationIn(unit, email)]);
        // Imported before (its address may have changed since), or deleted since: either way not again.
        if (user.version > 0) {
          if (user.state.status !== 'registered') return [skipped('users', 'deleted in Portcullis since it was imported'), ...accountsSkipped('its user was not imported')];
          users.add(row.id);
          return [present('users'), ...accounts.map(() => present('accounts'))];
        }
        if (reservation.state.status === 'reserved') return [skipped('users', 'email already present under another id'), ...accountsSkipped('its user was not imported')];
        let fields: UsernameFields = initialUsernameFields({});
        if (username.fields) {
          const claim = await unit.load(streams.username(username.fields.username!), usernameReservationModel);
          if (claim.state.status === 'reserved') outcomes.push(skipped('users', 'username left out: taken in Portcullis'));
          else fields = username.fields;
        } else if (username.problem) outcomes.push(skipped('users', `username left out: ${username.problem}`));

        const links: DomainEvent[] = [];
        for (const account of providerAccounts) {
          if (!ports.providers.has(account.providerId)) {
            outcomes.push(skipped('accounts', `provider ${account.providerId} not configured`));
            continue;
          }
          const link = await linkProviderAccountIn(unit, row.id, providerAccountOf(account));
          if (link.outcome === 'linked') {
            links.push(...link.userEvents);
            outcomes.push(imported('accounts'));
          } else outcomes.push(skipped('accounts', `${account.providerId} account linked to another user`));
        }
        const rights: DomainEvent[] = [];
        if (row.role && row.role !== DEFAULT_ROLE) rights.push(UserRoleChanged({ userId: row.id, role: row.role }));
        if (row.banned) {
          if (row.banExpires === null || row.banExpires > now) {
            rights.push(UserBanned({ userId: row.id, reason: row.banReason ?? DEFAULT_BAN_REASON, expiresAt: row.banExpires?.toISOString() ?? null }));
          } else outcomes.push(skipped('users', 'ban left out: expired'));
        }
        await registerUserIn(unit, ports, request, {
          registration: {
            userId: row.id,
            email,
            name: row.name,
            image: row.image,
            emailVerified: row.emailVerified,
            passwordHash: credential?.password ?? null,
            refusal: 'USER_ALREADY_EXISTS',
          },
          username: fields,
          alsoOnUser: () => [...links, ...rights],
          verificationMail: null,
          session: null,
          whenTaken: 'refuse',
        });
        if (credential) outcomes.push(credential.password ? imported('accounts') : skipped('accounts', 'credential account without a password'));
        users.add(row.id);
        return [imported('users'), ...outcomes];
      });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return [skipped('users', `refused: ${error.code}`), ...accountsSkipped('its user was not imported')];
    }
  }

  function usernameOf(row: SourceUser): { fields: UsernameFields | null; problem: string | null } {
    if (row.username === null) return { fields: row.displayUsername ? initialUsernameFields({ displayUsername: row.displayUsername }) : null, problem: null };
    const problem = usernameProblem(row.username, ports.config.username);
    if (problem) return { fields: null, problem: `breaks the username rules (${problem})` };
    return { fields: initialUsernameFields({ username: normalizeUsername(row.username), displayUsername: row.displayUsername ?? undefined }), problem: null };
  }

  // Organizations, each with its members, teams and invitations in one command.
  if (source.hasOrganizations) {
    await walk(
      'organizations',
      await source.count('organization'),
      (after) => source.organizations(after, options.batchSize),
      (rows) =>
        eachConcurrently(rows, options.concurrency, async (row) => {
          tally.add(await importOrganization(row, await source.organizationRows(row.id)));
        }),
      'organizations',
    );
  }

  async function importOrganization(row: SourceOrganization, rows: SourceOrganizationRows): Promise<Outcome[]> {
    const all = (reason: string): Outcome[] => [
      skipped('organizations', reason),
      ...rows.members.map(() => skipped('members', 'its organization was not imported')),
      ...rows.teams.map(() => skipped('teams', 'its organization was not imported')),
      ...rows.teamMembers.map(() => skipped('team members', 'its organization was not imported')),
      ...rows.invitations.map(() => skipped('invitations', 'its organization was not imported')),
    ];
    const slug = normalizeSlug(row.slug);
    if (!isValidSlug(slug)) return all('slug not valid in Portcullis');
    const streamId = streams.organization(row.id);
    try {
      return await run('import.organization', [streamId], async (unit) => {
        const [loaded, held] = await Promise.all([unit.load(streamId, organizationModel), unit.load(streamId, everHeldModel)]);
        // What the organization ever held: a member, team or invitation gone since (removed, accepted) stays gone.
        const heldBefore = (id: string): boolean => held.state.ids.has(id);
        let state: OrganizationState = loaded.state;
        const outcomes: Outcome[] = [];
        const events: DomainEvent[] = [];
        /** Members this command adds (the creator with the organization): not "already there" below. */
        const addedNow = new Set<string>();
        const decide = (decided: readonly DomainEvent[]): void => {
          events.push(...decided);
          state = foldDecided(state, decided, unit.now);
        };
        if (state.status === 'deleted') return all('id already used in Portcullis (by a deleted organization)');
        const importable = rows.members.filter((m) => users.has(m.userId));
        if (state.status === 'none') {
          // The first owner stands as the creator, the one the organization is created with.
          const creator = importable.find((m) => parseRoleList(m.role).includes(creatorRole));
          if (!creator) return all('no owner among its imported members');
          decide(
            decideOrganization(
              {
                type: 'create',
                organizationId: row.id,
                name: row.name,
                slug,
                logo: row.logo,
                metadata: metadataOf(row.metadata),
                creatorUserId: creator.userId,
                memberId: creator.id,
                defaultTeam: null,
                byServer: true,
                creatorMemberships: 0,
                policy: { allowCreate: true, organizationLimit: null },
              },
              state,
            ),
          );
          await claimSlug(unit, { slug, organizationId: row.id, refusal: 'ORGANIZATION_ALREADY_EXISTS' });
          if (creator.role !== creatorRole) decide(decideMember({ type: 'update-role', actorUserId: creator.userId, memberId: creator.id, role: creator.role }, state));
          addedNow.add(creator.id);
          outcomes.push(imported('organizations'), imported('members'));
        } else outcomes.push(present('organizations'));
        if (state.status !== 'active') throw new Error('an organization just decided is not active');
        const owner = [...state.members.values()].find((m) => parseRoleList(m.role).includes(creatorRole)) ?? [...state.members.values()][0]!;

        const attempt = (kind: ImportKind, work: () => readonly DomainEvent[]): void => {
          try {
            decide(work());
            outcomes.push(imported(kind));
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
            outcomes.push(skipped(kind, `refused: ${error.code}`));
          }
        };
        for (const member of rows.members) {
          if (addedNow.has(member.id)) continue;
          if (heldBefore(member.id)) {
            outcomes.push(present('members'));
            continue;
          }
          if (!users.has(member.userId)) outcomes.push(skipped('members', 'its user was not imported'));
          else if (memberByUserId(state, member.userId)) outcomes.push(skipped('members', 'user already a member under another id'));
          else
            attempt('members', () =>
              decideMember(
                {
                  type: 'add',
                  memberId: member.id,
                  userId: member.userId,
                  userExists: true,
                  role: member.role,
                  teamId: null,
                  teamMemberId: member.id,
                  membershipLimit: Number.POSITIVE_INFINITY,
                  teams: { enabled: true, maximumMembersPerTeam: null },
                },
                state,
              ),
            );
        }
        for (const team of rows.teams) {
          if (heldBefore(team.id)) outcomes.push(present('teams'));
          else attempt('teams', () => decideTeam({ type: 'create-team', actorUserId: owner.userId, teamId: team.id, name: team.name, maximumTeams: null }, state));
        }
        for (const teamMember of rows.teamMembers) {
          const team = state.teams.get(teamMember.teamId);
          if (heldBefore(teamMember.id) || team?.members.has(teamMember.userId)) outcomes.push(present('team members'));
          else if (!team) outcomes.push(skipped('team members', 'its team was not imported'));
          else if (!memberByUserId(state, teamMember.userId)) outcomes.push(skipped('team members', 'its user is not a member'));
          else
            attempt('team members', () =>
              decideTeam(
                { type: 'add-team-member', actorUserId: owner.userId, teamId: team.id, userId: teamMember.userId, teamMemberId: teamMember.id, maximumMembersPerTeam: null },
                state,
              ),
            );
        }
        for (const invitation of rows.invitations) {
          if (heldBefore(invitation.id)) outcomes.push(present('invitations'));
          else if (invitation.status !== 'pending') outcomes.push(skipped('invitations', `${invitation.status}, not pending`));
          else if (invitation.expiresAt <= unit.now) outcomes.push(skipped('invitations', 'expired'));
          else {
            // Invited by whoever invited, while they may; else in the owner's name, so the invitation stands.
            const inviter = memberByUserId(state, invitation.inviterId) ? invitation.inviterId : owner.userId;
            attempt('invitations', () =>
              decideInvitation(
                {
                  type: 'invite',
                  inviterId: inviter,
                  email: invitation.email,
                  role: invitation.role ?? 'member',
                  teamIds: (invitation.teamId ?? '').split(',').filter((id) => id !== '' && state.status === 'active' && state.teams.has(id)),
                  invitedUserId: null,
                  invitationId: invitation.id,
                  now: unit.now,
                  // Its own expiry, not a new one: the decider counts from now.
                  expiresInSeconds: (invitation.expiresAt.getTime() - unit.now.getTime()) / 1000,
                  invitationLimit: Number.POSITIVE_INFINITY,
                  teams: { enabled: true, maximumMembersPerTeam: null },
                  resend: false,
                },
                state,
              ),
            );
          }
        }
        unit.append(streamId, events);
        recordMembershipChanges(unit, events);
        return outcomes;
      });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return all(error.code === 'ORGANIZATION_ALREADY_EXISTS' ? 'slug taken in Portcullis' : `refused: ${error.code}`);
    }
  }

  // Sessions: only the live ones, and only when asked to keep them.
  await walk(
    'sessions',
    await source.count('session'),
    (after) => source.sessions(after, options.batchSize),
    (rows) =>
      eachConcurrently(rows, options.concurrency, async (row) => {
        tally.add([await importSession(row)]);
      }),
    'sessions',
  );

  async function importSession(row: SourceSession): Promise<Outcome> {
    if (row.expiresAt <= options.now()) return skipped('sessions', 'expired');
    if (!options.keepSessions) return skipped('sessions', 'live, not kept (run with --keep-sessions to keep them)');
    if (!users.has(row.userId)) return skipped('sessions', 'its user was not imported');
    if (row.impersonatedBy !== null && !users.has(row.impersonatedBy)) return skipped('sessions', 'impersonation by a user not imported');
    const tokenHash = hashToken(row.token);
    const sessionId = sessionIdForTokenHash(tokenHash);
    try {
      return await run('import.session', [streams.session(sessionId)], async (unit) => {
        const [session, organization] = await Promise.all([
          unit.load(streams.session(sessionId), sessionModel),
          row.activeOrganizationId ? unit.load(streams.organization(row.activeOrganizationId), organizationModel) : null,
        ]);
        if (session.version > 0) return present('sessions');
        const opening = { sessionId, tokenHash, expiresAt: row.expiresAt, ipAddress: row.ipAddress, userAgent: row.userAgent?.slice(0, 512) ?? null, rememberMe: true };
        if (row.impersonatedBy !== null) openImpersonationSession(unit, row.userId, row.impersonatedBy, opening);
        else openSession(unit, row.userId, opening, 'email-password');
        // The organization (and team) it worked in, while the user is still a member there.
        const org = organization?.state;
        if (org?.status === 'active' && memberByUserId(org, row.userId)) {
          const team = row.activeTeamId !== null && org.teams.get(row.activeTeamId)?.members.has(row.userId) ? row.activeTeamId : null;
          unit.append(streams.session(sessionId), [SessionActiveOrganizationChanged({ sessionId, userId: row.userId, activeOrganizationId: org.id, activeTeamId: team })]);
        }
        return imported('sessions');
      });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return skipped('sessions', `refused: ${error.code}`);
    }
  }

  // Verification values (password-reset and other links in flight): counted, not carried over.
  await walk(
    'verifications',
    await source.count('verification'),
    (after) => source.verifications(after, options.batchSize),
    async (rows) => {
      const now = options.now();
      tally.add(rows.map((r) => skipped('verifications', r.expiresAt <= now ? 'expired' : 'a link in flight, not carried over (its user asks again)')));
    },
    'verifications',
  );

  return tally.kinds;
}

/**
 * The ids an organization's stream ever held (members, teams, team members, invitations), gone since or not:
 * what a rerun must not bring back. Its set only grows, so a fold adds to it in place; never snapshotted.
 */
const everHeldModel: StreamModel<{ readonly ids: Set<string> }> = {
  ...streamModel('import-organization-ids', 1, () => ({ ids: new Set<string>() }), (state, event) => {
    const data = event.data as Record<string, unknown>;
    for (const key of ['memberId', 'teamId', 'teamMemberId', 'invitationId']) {
      const id = data[key];
      if (typeof id === 'string') state.ids.add(id);
    }
    return state;
  }),
  snapshots: false,
};

function providerAccountOf(account: SourceAccount): NewProviderAccount {
  return {
    providerId: account.providerId,
    providerAccountId: account.accountId,
    scope: account.scope,
    tokens: {
      accessToken: account.accessToken,
      refreshToken: account.refreshToken,
      idToken: account.idToken,
      accessTokenExpiresAt: account.accessTokenExpiresAt?.toISOString() ?? null,
      refreshTokenExpiresAt: account.refreshTokenExpiresAt?.toISOString() ?? null,
    },
  };
}

/** better-auth keeps metadata as JSON text; what is not a JSON object is left out. */
function metadataOf(text: string | null): Record<string, unknown> | undefined {
  if (text === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The summary's lines: counts per kind, then each reason rows were skipped for. */
export function describeSummary(summary: ImportSummary): string[] {
  const lines: string[] = [];
  for (const [kind, t] of summary) {
    const skippedCount = [...t.skipped.values()].reduce((a, b) => a + b, 0);
    lines.push(`${kind}: ${t.imported} imported, ${t.present} already there, ${skippedCount} skipped`);
    for (const [reason, count] of [...t.skipped].sort((a, b) => b[1] - a[1])) lines.push(`  skipped ${count}: ${reason}`);
  }
  return lines;
}
