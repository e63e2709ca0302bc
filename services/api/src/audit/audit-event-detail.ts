import { DomainError, streams, type AuditChange, type AuditEvent, type AuditNames } from '@portcullis/contracts';
import type { ChainLink, LogChain } from '@portcullis/platform';
import { shownEvents, type AuditReads } from './audit-search.ts';
import { MentionedIds, namesOf } from './audit-names.ts';
import { diffStates, type PointInLog } from './fold-at.ts';
import { mentionedIn, type TimeTravel } from './time-travel.ts';

interface SubjectChange {
  readonly kind: 'user' | 'organization';
  readonly id: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly changes: AuditChange[];
}

export interface AuditEventDetail extends AuditNames {
  readonly event: AuditEvent;
  readonly chain: ChainLink;
  readonly subjects: SubjectChange[];
}

/**
 * The users and organizations whose time-travel state this event can change: the streams time travel folds
 * for them (a user's own, their sessions', their organizations' index, and an organization's, which holds
 * members' roles). A sign-in failure names a user but changes nothing folded, so it has none.
 */
function subjectsOf(event: AuditEvent, withOrganizations: boolean): Array<{ kind: 'user' | 'organization'; id: string }> {
  const subjects: Array<{ kind: 'user' | 'organization'; id: string }> = [];
  const userId = typeof event.data.userId === 'string' ? event.data.userId : null;
  const organizationId = typeof event.data.organizationId === 'string' ? event.data.organizationId : null;
  if (userId !== null) {
    const folded = [streams.user(userId), streams.userSessions(userId), streams.userOrganizations(userId)];
    const organizationEvent = withOrganizations && organizationId !== null && event.streamId === streams.organization(organizationId);
    if (folded.includes(event.streamId) || organizationEvent) subjects.push({ kind: 'user', id: userId });
  }
  if (withOrganizations && organizationId !== null && event.streamId === streams.organization(organizationId)) {
    subjects.push({ kind: 'organization', id: organizationId });
  }
  return subjects;
}

/**
 * One event, as the search shows it, with its link in the hash chain, and the state of each user and
 * organization it concerns folded just before it and with it (at the event's own instant both times, so
 * the difference is this event's alone, not sessions that expired in between).
 */
export async function auditEventDetail(
  deps: Omit<AuditReads, 'chain'> & { chain: Pick<LogChain, 'linkAt'>; travel: TimeTravel; withOrganizations: boolean },
  position: number,
): Promise<AuditEventDetail> {
  const [[recorded], link] = await Promise.all([deps.store.eventsAt([position]), deps.chain.linkAt(position)]);
  if (!recorded || link === null) throw new DomainError('NOT_FOUND');
  const { events, names } = await shownEvents(deps, [recorded], new Map([[position, link.hash]]));
  const event = events[0]!;
  const before: PointInLog = { position: position - 1, instant: event.occurredAt, byInstant: false };
  const after: PointInLog = { position, instant: event.occurredAt, byInstant: false };
  const mentioned = new MentionedIds();
  const subjects: SubjectChange[] = [];
  for (const { kind, id } of subjectsOf(event, deps.withOrganizations)) {
    const fold = kind === 'user' ? deps.travel.userStateAt : deps.travel.organizationStateAt;
    const [then, now] = await Promise.all([fold(id, before), fold(id, after)]);
    subjects.push({ kind, id, before: then.state, after: now.state, changes: diffStates(then.state, now.state) });
    const inStates = mentionedIn(kind, id, [then.state, now.state]);
    for (const user of inStates.users) mentioned.user(user);
    for (const organization of inStates.organizations) mentioned.organization(organization);
  }
  for (const id of Object.keys(names.people)) mentioned.users.delete(id);
  for (const id of Object.keys(names.organizations)) mentioned.organizations.delete(id);
  const more = await namesOf(deps, mentioned);
  return {
    event,
    chain: link,
    subjects,
    people: { ...names.people, ...more.people },
    organizations: { ...names.organizations, ...more.organizations },
  };
}
