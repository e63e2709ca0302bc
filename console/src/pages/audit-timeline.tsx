import { auditEndpoints, type AuditEvent, type AuditPerson } from '@portcullis/contracts/api/audit';
import type { EventActor } from '@portcullis/contracts/events/define-event';
import { useState } from 'react';
import type { Answer } from '../api/client.ts';
import { useRead } from '../api/hooks.ts';
import { Link } from '../router.tsx';
import { Badge, Button, Empty, ErrorNotice, Loading, UserRef } from '../ui/components.tsx';
import { formatAgo, formatInstant } from '../ui/format.ts';

// An object's history as a timeline, newest first, paged by log position: the user page's (and an
// organization's) short view of what the audit page searches in full.

type People = Answer<typeof auditEndpoints.auditEvents>['people'];

const PAGE = 20;
/** The newest page follows what happens (a ban just made shows once the audit index has it); older pages stay put. */
const REFRESH_MS = 5_000;

function Person({ id, people }: { readonly id: string; readonly people: People }) {
  const known: AuditPerson | undefined = people[id];
  if (known === 'erased') return <span className="muted" title={id}>an erased user</span>;
  return <UserRef id={id} name={known?.name ?? null} email={known?.email ?? null} />;
}

const NOBODY: Record<Exclude<EventActor['kind'], 'user' | 'admin' | 'impersonator'>, string> = {
  server: 'a server (API key)',
  system: 'the system',
  anonymous: 'an anonymous client',
};

/** Who did it, by name: an impersonation names the admin and whom they acted as. */
export function Actor({ actor, people }: { readonly actor: EventActor; readonly people: People }) {
  if (actor.kind === 'impersonator' && actor.id) {
    return (
      <span className="actor">
        {actor.impersonatorId ? <Person id={actor.impersonatorId} people={people} /> : <span className="muted">an admin</span>}
        <Badge tone="warn">impersonating</Badge>
        <Person id={actor.id} people={people} />
      </span>
    );
  }
  if ((actor.kind === 'user' || actor.kind === 'admin') && actor.id) {
    return (
      <span className="actor">
        <Person id={actor.id} people={people} />
        {actor.kind === 'admin' ? <Badge tone="info">admin</Badge> : null}
      </span>
    );
  }
  return <span className="actor muted">{actor.kind in NOBODY ? NOBODY[actor.kind as keyof typeof NOBODY] : actor.kind}</span>;
}

/** The events of one page, each linking to its detail (metadata, hash-chain link, before and after). */
export function TimelineEvents({ events, people, now }: { readonly events: readonly AuditEvent[]; readonly people: People; readonly now?: number }) {
  if (events.length === 0) return <Empty>No events.</Empty>;
  return (
    <ol className="timeline">
      {events.map((event) => (
        <li key={event.position} className="timeline-event">
          <span className="timeline-when" title={formatInstant(event.recordedAt)}>
            {formatAgo(event.recordedAt, now)}
          </span>
          <span className="timeline-what">
            <Link to={`/audit/events/${event.position}`} aria-label={`Event ${event.position}: ${event.sentence}`}>
              {event.sentence}
            </Link>
            <span className="timeline-meta">
              <Actor actor={event.actor} people={people} />
              <code>{event.type}</code>
              {event.metadata.ipAddress ? <code>{event.metadata.ipAddress}</code> : null}
              <span className="muted">#{event.position}</span>
            </span>
          </span>
        </li>
      ))}
    </ol>
  );
}

/**
 * A subject's events, newest first. Paging goes by the log position the previous page ended at (the
 * search's cursor), so a page stays the same while new events arrive on top.
 */
export function AuditTimeline({ filter }: { readonly filter: { readonly user: string } | { readonly organization: string } }) {
  // The cursors of the pages before this one; the last is this page's (undefined: the newest).
  const [cursors, setCursors] = useState<readonly (number | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const events = useRead(
    auditEndpoints.auditEvents,
    { query: { ...filter, order: 'newest', limit: PAGE, ...(cursor === undefined ? {} : { cursor }) } },
    { refetchInterval: cursor === undefined ? REFRESH_MS : false },
  );
  if (events.isPending) return <Loading what="Reading the audit trail" />;
  if (events.error) return <ErrorNotice error={events.error} />;
  const { nextCursor } = events.data;
  return (
    <div className="timeline-wrap" aria-busy={events.isFetching}>
      <TimelineEvents events={events.data.events} people={events.data.people} />
      <nav className="pager" aria-label="Audit timeline pages">
        <span className="pager-count">
          page {cursors.length}
          {cursors.length === 1 ? ' (newest)' : ''}
        </span>
        <Button disabled={cursors.length === 1} onClick={() => setCursors((all) => all.slice(0, -1))}>
          Newer
        </Button>
        <Button disabled={nextCursor === null} onClick={() => nextCursor !== null && setCursors((all) => [...all, nextCursor])}>
          Older
        </Button>
      </nav>
    </div>
  );
}
