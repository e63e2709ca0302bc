import { createHash } from 'node:crypto';
import { DomainError, streams, type AuditChange, type AuditEvent, type AuditNames } from '@portcullis/contracts';
import { sql, type CommonQueryMethods, type PersonalData } from '@portcullis/platform';
import { eventColumns, shownEvents, type EventRow } from './audit-search.ts';
import { MentionedIds, namesOf } from './audit-names.ts';
import { diffStates, type PointInLog } from './fold-at.ts';
import { mentionedIn, type TimeTravel } from './time-travel.ts';

/** The chain's hash before the first event, as the hash-chain migration seeds the head. */
const GENESIS_HASH = '0'.repeat(64);

export interface ChainLink {
  readonly previousPosition: number;
  /** Null when the previous event is missing: the chain is broken here. */
  readonly previousHash: string | null;
  readonly hash: string;
  readonly verifies: boolean;
}

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

interface DetailRow extends EventRow {
  readonly canonical: string;
  readonly previous_hash: string | null;
}

/**
 * The link as the log made it: `sha256(previous hash || canonical bytes)`, the canonical bytes drawn by the
 * same SQL function the append hashed with and `verifyChain` walks with, so a stored event changed since
 * (or its hash) does not verify.
 */
function chainLink(row: DetailRow): ChainLink {
  const position = Number(row.position);
  const previousHash = position === 1 ? GENESIS_HASH : row.previous_hash;
  const computed = previousHash === null ? null : createHash('sha256').update(Buffer.from(previousHash, 'hex')).update(row.canonical, 'utf8').digest('hex');
  return { previousPosition: position - 1, previousHash, hash: row.hash, verifies: computed === row.hash };
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
  deps: { db: CommonQueryMethods; personalData: PersonalData; travel: TimeTravel; withOrganizations: boolean },
  position: number,
): Promise<AuditEventDetail> {
  const row = (await deps.db.maybeOne(sql.unsafe`
    SELECT ${eventColumns},
      portcullis_event_canonical(e.position, e.event_id, e.stream_id, e.stream_version, e.type, e.data, e.metadata, e.recorded_at) AS canonical,
      (SELECT encode(p.hash, 'hex') FROM events p WHERE p.position = e.position - 1) AS previous_hash
    FROM events e WHERE e.position = ${position}`)) as DetailRow | null;
  if (row === null) throw new DomainError('NOT_FOUND');
  const { events, names } = await shownEvents(deps.db, deps.personalData, [row]);
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
  const more = await namesOf(deps.db, deps.personalData, mentioned);
  return {
    event,
    chain: chainLink(row),
    subjects,
    people: { ...names.people, ...more.people },
    organizations: { ...names.organizations, ...more.organizations },
  };
}
