import type { DomainEventType } from './events/index.ts';

/**
 * Projection names shared by the projector (which runs them) and the api (which waits for them to reach an
 * appended position before it answers, so a client reads its own writes).
 */
export const projectionNames = {
  identity: 'identity',
  sessions: 'sessions',
  sessionCache: 'session-cache',
  organizations: 'organizations',
} as const;
export type ProjectionName = (typeof projectionNames)[keyof typeof projectionNames];

/**
 * The read models whose checkpoints decide whether a session they answer is believed (the api trusts one
 * only while it has applied what the log held a moment ago): theirs must not trail the log for long, even
 * over batches with nothing for them.
 */
export const sessionReadModelNames: ReadonlySet<string> = new Set([projectionNames.sessions, projectionNames.sessionCache]);

/**
 * The audit index the audit search reads. Not among `projectionNames`: no write waits for it (it is built
 * from every event, so every write would), and the audit search says how far it has indexed instead.
 */
export const auditIndexProjectionName = 'audit-index';

/**
 * Completes a user's erasure (keys and the copies outside the log) if the api that appended the deletion
 * died before doing it. No write waits for it: the api erases before it answers.
 */
export const erasureProjectionName = 'erasure';

/** A session's own history. */
const sessionLifecycle = [
  'session.created.v2',
  'session.impersonation_started.v1',
  'session.refreshed.v1',
  'session.updated.v1',
  'session.revoked.v2',
  'session.active_organization_changed.v1',
] as const satisfies readonly DomainEventType[];

/** What ends a session's active organization or team without naming the session. */
const activeSelectionEnders = [
  'organization.member_removed.v1',
  'organization.deleted.v1',
  'organization.team_removed.v1',
  'organization.team_member_removed.v1',
] as const satisfies readonly DomainEventType[];

/**
 * The events each read model is built from. The projector hands a projection only these, and the api waits
 * only for the projections an append concerns (`projectionsToAwait`): a sign-in waits for the session
 * cache, not for organizations.
 */
export const projectionEventTypes: Record<ProjectionName, ReadonlySet<DomainEventType>> = {
  identity: new Set([
    'user.registered.v1',
    'user.credential_account_created.v2',
    'user.provider_account_linked.v1',
    'user.provider_tokens_updated.v1',
    'user.account_unlinked.v1',
    'user.updated.v1',
    'user.username_changed.v1',
    'user.email_verified.v1',
    'user.email_changed.v1',
    'user.password_changed.v1',
    'user.password_rehashed.v1',
    'user.deleted.v1',
    'user.role_changed.v1',
    'user.banned.v1',
    'user.unbanned.v1',
    'verification.token_issued.v1',
    'verification.token_consumed.v1',
    'social.flow_started.v1',
    'social.flow_finished.v1',
    'verification.token_revoked.v1',
  ]),
  sessions: new Set([...sessionLifecycle, ...activeSelectionEnders, 'user.deleted.v1']),
  // Each cached session carries its user, so every change of what get-session shows of a user is here too.
  'session-cache': new Set([
    'user.registered.v1',
    'user.updated.v1',
    'user.username_changed.v1',
    'user.email_verified.v1',
    'user.email_changed.v1',
    'user.deleted.v1',
    'user.role_changed.v1',
    'user.banned.v1',
    'user.unbanned.v1',
    ...sessionLifecycle,
    ...activeSelectionEnders,
  ]),
  organizations: new Set([
    'organization.created.v1',
    'organization.updated.v1',
    'organization.deleted.v1',
    'organization.member_added.v1',
    'organization.member_role_changed.v1',
    'organization.member_removed.v1',
    'organization.invitation_created.v1',
    'organization.invitation_resent.v1',
    'organization.invitation_accepted.v1',
    'organization.invitation_rejected.v1',
    'organization.invitation_canceled.v1',
    'organization.team_created.v1',
    'organization.team_updated.v1',
    'organization.team_removed.v1',
    'organization.team_member_added.v1',
    'organization.team_member_removed.v1',
    'user.deleted.v1',
  ]),
};

/** The projections whose read models change with events of these types. */
function projectionsConcernedWith(types: Iterable<string>, among: readonly ProjectionName[]): ProjectionName[] {
  const wanted = [...types] as DomainEventType[];
  return among.filter((name) => wanted.some((type) => projectionEventTypes[name].has(type)));
}

/**
 * Events some read models may show late while the Redis session cache is served, as no answer reads them
 * there first: get-session finds a new session in the cache (which its append waits for), else on the log,
 * never in the session table. The table's readers (the session listings) wait for it to
 * reach the log's head first. The projector gathers these into fewer writes (`ProjectionTarget.holdsBack`).
 */
export const shownLateBesideSessionCache: Partial<Record<ProjectionName, ReadonlySet<DomainEventType>>> = {
  sessions: new Set(['session.created.v2']),
};

/**
 * The projections an append of events of these types must wait for, among the read models `among` the api
 * reads, before it answers (read-your-writes): those concerned, less one that may show them late while the
 * session cache, which is among them, shows them at once.
 */
export function projectionsToAwait(types: Iterable<string>, among: readonly ProjectionName[]): ProjectionName[] {
  const wanted = [...types] as DomainEventType[];
  const concerned = projectionsConcernedWith(wanted, among);
  if (!concerned.includes(projectionNames.sessionCache)) return concerned;
  return concerned.filter((name) => {
    const late = shownLateBesideSessionCache[name];
    return late === undefined || wanted.some((type) => projectionEventTypes[name].has(type) && !late.has(type));
  });
}
