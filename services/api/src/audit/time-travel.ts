import { DomainError, streams, type AuditNames, type StreamModel } from '@portcullis/contracts';
import type { CommonQueryMethods, EventStore, PersonalData } from '@portcullis/platform';
import { accountModel } from '../identity/account.decider.ts';
import { userModel } from '../identity/user.decider.ts';
import { sessionIndexModel } from '../session/session-index.decider.ts';
import { diffStates, foldUpTo, plain, type Change, type PointInLog } from './fold-at.ts';
import { MentionedIds, namesOf } from './audit-names.ts';

/**
 * The models of the streams a leaf area owns (organizations, an admin's view of a user), handed in by the
 * app: a leaf imports no other leaf, and time travel must fold with the deciders' own models, not copies.
 */
export interface AuditStreamModels {
  /** `user-<id>` as admin commands fold it: the role that set-role gives (a ban is the account's too). */
  readonly adminUser: StreamModel<{ readonly status: string; readonly role?: string; readonly banned?: boolean }>;
  /** `organization-<id>`, as organization commands fold it. */
  readonly organization: StreamModel<unknown>;
  /** `user-organizations-<userId>`: the ids of the organizations a user belongs to. */
  readonly userOrganizations: StreamModel<{ readonly organizationIds: readonly string[] }>;
  /** The roles the admin plugin defines: the security view counts who holds each. */
  readonly adminRoles?: readonly string[];
}

interface OrganizationLike {
  readonly status: string;
  readonly name?: string;
  readonly members?: ReadonlyMap<string, { readonly userId: string; readonly role: string }>;
}

interface StateAt extends AuditNames {
  readonly id: string;
  readonly position: number;
  readonly state: unknown;
  readonly diff: { readonly fromPosition: number; readonly changes: Change[] } | null;
}

export interface TimeTravel {
  /** The user's state (see `timeTravel`) at a point of the log: what the event detail shows before and after. */
  readonly userStateAt: (userId: string, point: PointInLog) => Promise<{ state: unknown; position: number }>;
  readonly organizationStateAt: (organizationId: string, point: PointInLog) => Promise<{ state: unknown; position: number }>;
  userAt(userId: string, query: { at?: string | undefined; diffFrom?: string | undefined }): Promise<StateAt>;
  organizationAt(organizationId: string, query: { at?: string | undefined; diffFrom?: string | undefined }): Promise<StateAt>;
}

/**
 * A user or an organization as it was at an instant or a log position (`at`: an ISO instant or a
 * position; absent: now), folded from the log by the models the deciders use, and what changed since
 * `diffFrom`. A user is their profile, their account (email, verification, password account, ban), their
 * role (admin or not) and whether an admin's ban holds, the sessions live at that instant and their
 * organizations with their roles. Plain values in, so routes and the CLI run the same code.
 */
export function timeTravel(deps: {
  store: Pick<EventStore, 'headPosition' | 'readStream' | 'readStreams' | 'eventsAt'>;
  db: CommonQueryMethods;
  personalData: PersonalData;
  clock: () => Date;
  models?: AuditStreamModels | undefined;
}): TimeTravel {
  const { store, models } = deps;

  async function pointOf(at: string | undefined): Promise<PointInLog> {
    const head = await store.headPosition();
    if (at === undefined) return { position: head, instant: deps.clock().toISOString(), byInstant: false };
    if (/^\d+$/.test(at)) {
      const position = Math.min(Number(at), head);
      const [event] = await store.eventsAt([position]);
      return { position, instant: event?.metadata.occurredAt ?? new Date(0).toISOString(), byInstant: false };
    }
    return { position: head, instant: new Date(at).toISOString(), byInstant: true };
  }

  async function userAt(userId: string, point: PointInLog): Promise<{ state: unknown; position: number }> {
    const ids = [streams.user(userId), streams.userSessions(userId), streams.userOrganizations(userId)];
    const reads = await store.readStreams(ids);
    const userEvents = reads.get(ids[0]!)!.events;
    const profile = foldUpTo(userModel, userEvents, point);
    const account = foldUpTo(accountModel, userEvents, point);
    const sessions = foldUpTo(sessionIndexModel, reads.get(ids[1]!)!.events, point);
    let position = Math.max(profile.position, sessions.position);
    let organizations: Record<string, unknown> = {};
    let role: string | null = null;
    let banned: boolean | null = null;
    if (models) {
      const admin = foldUpTo(models.adminUser, userEvents, point).state;
      role = admin.status === 'registered' ? (admin.role ?? null) : null;
      banned = admin.status === 'registered' ? (admin.banned ?? false) : null;
      const index = foldUpTo(models.userOrganizations, reads.get(ids[2]!)!.events, point);
      position = Math.max(position, index.position);
      const orgReads = await store.readStreams(index.state.organizationIds.map((id) => streams.organization(id)));
      organizations = Object.fromEntries(
        index.state.organizationIds.map((id) => {
          const org = foldUpTo(models.organization, orgReads.get(streams.organization(id))?.events ?? [], point).state as OrganizationLike;
          const member = [...(org.members?.values() ?? [])].find((m) => m.userId === userId);
          return [id, { name: org.name ?? null, role: member?.role ?? null }];
        }),
      );
    }
    const live = sessions.state.open.filter((s) => Date.parse(s.expiresAt) > Date.parse(point.instant));
    const state = {
      profile: plain(profile.state),
      account: plain(account.state),
      role,
      banned,
      sessions: Object.fromEntries(live.map((s) => [s.sessionId, { expiresAt: s.expiresAt }])),
      organizations,
    };
    return { state, position };
  }

  async function organizationAt(organizationId: string, point: PointInLog): Promise<{ state: unknown; position: number }> {
    if (!models) throw new DomainError('NOT_FOUND');
    const read = await store.readStream(streams.organization(organizationId));
    const folded = foldUpTo(models.organization, read.events, point);
    return { state: plain(folded.state), position: folded.position };
  }

  async function answer(
    kind: 'user' | 'organization',
    id: string,
    query: { at?: string | undefined; diffFrom?: string | undefined },
    at: (id: string, point: PointInLog) => Promise<{ state: unknown; position: number }>,
  ): Promise<StateAt> {
    const now = await at(id, await pointOf(query.at));
    const then = query.diffFrom === undefined ? null : await at(id, await pointOf(query.diffFrom));
    const names = await namesOf(deps, mentionedIn(kind, id, [now.state, then?.state]));
    const diff = then === null ? null : { fromPosition: then.position, changes: diffStates(then.state, now.state) };
    return { id, position: now.position, state: now.state, diff, ...names };
  }

  return {
    userStateAt: userAt,
    organizationStateAt: organizationAt,
    userAt: (userId, query) => answer('user', userId, query, userAt),
    organizationAt: (organizationId, query) => answer('organization', organizationId, query, organizationAt),
  };
}

/** The subject and every user and organization its states name (a user's organizations are keyed by id). */
export function mentionedIn(kind: 'user' | 'organization', id: string, states: readonly unknown[]): MentionedIds {
  const mentioned = kind === 'user' ? new MentionedIds().user(id) : new MentionedIds().organization(id);
  for (const state of states) {
    mentioned.within(state);
    if (kind !== 'user' || state === null || typeof state !== 'object') continue;
    const organizations = (state as { organizations?: unknown }).organizations;
    if (organizations !== null && typeof organizations === 'object') for (const orgId of Object.keys(organizations)) mentioned.organization(orgId);
  }
  return mentioned;
}
