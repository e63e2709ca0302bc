import { auditEndpoints } from '@portcullis/contracts/api/audit';
import type { Answer } from '../api/client.ts';
import { useRead } from '../api/hooks.ts';
import { ActorRef, AddressLink, auditPaths, ChangesTable, EventData, OrganizationName, PersonRef } from '../audit/parts.tsx';
import { Link } from '../router.tsx';
import { AuditLink, Badge, Card, Empty, ErrorNotice, KeyValues, Loading, Page } from '../ui/components.tsx';
import { formatInstant } from '../ui/format.ts';

export type AuditEventDetail = Answer<typeof auditEndpoints.auditEvent>;

const orNone = (value: string | null | undefined) => (value ? <code>{value}</code> : <span className="muted">—</span>);

function Chain({ detail }: { readonly detail: AuditEventDetail }) {
  const { chain, event } = detail;
  return (
    <Card title="Hash chain">
      {chain.hash === null ? (
        // A KurrentDB log is chained by the chainer as it follows the log: not tampering, only its lag.
        <p>
          <Badge>not chained yet</Badge>{' '}
          <span className="muted">position {event.position}: the chainer has not reached this event; it will be hashed as stored</span>
        </p>
      ) : (
        <p>
          {chain.verifies ? <Badge tone="ok">verifies</Badge> : <Badge tone="bad">does not verify</Badge>}{' '}
          <span className="muted">
            position {event.position}: sha256(previous hash ‖ this event&apos;s canonical bytes){chain.verifies ? ' is its stored hash' : ' is not its stored hash'}
          </span>
        </p>
      )}
      <KeyValues
        entries={[
          ['Position', String(event.position)],
          [
            'Previous event',
            chain.previousPosition > 0 ? <Link to={auditPaths.event(chain.previousPosition)}>#{chain.previousPosition}</Link> : <span className="muted">none: the first event</span>,
          ],
          ['Next event', <Link key="next" to={auditPaths.event(event.position + 1)}>#{event.position + 1}</Link>],
          ['Previous hash', chain.previousHash === null ? <Badge tone="bad">missing</Badge> : <code className="hash">{chain.previousHash}</code>],
          ['Hash', chain.hash === null ? <span key="hash" className="muted">none yet</span> : <code key="hash" className="hash">{chain.hash}</code>],
        ]}
      />
    </Card>
  );
}

function Subjects({ detail }: { readonly detail: AuditEventDetail }) {
  const { event } = detail;
  if (detail.subjects.length === 0) {
    return (
      <Card title="Before and after">
        <Empty>This event changes no user&apos;s or organization&apos;s state (time travel folds none of it).</Empty>
      </Card>
    );
  }
  return (
    <>
      {detail.subjects.map((subject) => (
        <Card
          key={`${subject.kind}-${subject.id}`}
          className="audit-subject"
          title={
            <span>
              {subject.kind === 'user' ? 'User' : 'Organization'}{' '}
              {subject.kind === 'user' ? <PersonRef id={subject.id} people={detail.people} /> : <OrganizationName id={subject.id} organizations={detail.organizations} />}
            </span>
          }
        >
          <div className="audit-subject-links">
            <Link to={auditPaths.timeTravel(subject.kind, subject.id, event.position)}>Time travel to this event</Link>
            <AuditLink filter={{ [subject.kind]: subject.id }}>Audit trail of this {subject.kind}</AuditLink>
          </div>
          <ChangesTable changes={subject.changes} caption={`What this event changed for the ${subject.kind}`} />
          <details>
            <summary>Whole state before and after</summary>
            <div className="grid">
              <pre className="json" aria-label="State before">{JSON.stringify(subject.before, null, 2)}</pre>
              <pre className="json" aria-label="State after">{JSON.stringify(subject.after, null, 2)}</pre>
            </div>
          </details>
        </Card>
      ))}
    </>
  );
}

/** One event as an auditor reads it, from an answer: shown apart from its fetch so a spec can render one. */
export function EventDetailView({ detail }: { readonly detail: AuditEventDetail }) {
  const { event } = detail;
  const metadata = event.metadata;
  return (
    <>
      <p className="audit-sentence">{event.sentence}</p>
      <Card title="Event">
        <KeyValues
          entries={[
            ['Type', <Link key="type" to={auditPaths.filtered({ type: event.type })} className="mono">{event.type}</Link>],
            ['Occurred', formatInstant(event.occurredAt)],
            ['Recorded', formatInstant(event.recordedAt)],
            ['Actor', <ActorRef key="actor" actor={event.actor} people={detail.people} />],
            ['Actor kind', event.actor.kind],
            ['Address', <AddressLink key="address" address={metadata.ipAddress} />],
            ['User agent', orNone(metadata.userAgent)],
            ['Request id', orNone(metadata.requestId)],
            ['Traceparent', orNone(metadata.traceparent)],
            ['Correlation id', orNone(metadata.correlationId)],
            ['Causation id', orNone(metadata.causationId)],
            ['Stream', <Link key="stream" to={auditPaths.filtered({ stream: event.streamId })} className="mono">{event.streamId}</Link>],
            ['Stream version', String(event.streamVersion)],
            ['Event id', <code key="id">{event.eventId}</code>],
          ]}
        />
      </Card>
      <Card title="Data">
        <EventData data={event.data} names={detail} />
      </Card>
      <Chain detail={detail} />
      <Subjects detail={detail} />
    </>
  );
}

export default function AuditEventPage({ params }: { readonly params: Record<string, string> }) {
  const position = Number(params.position);
  const valid = Number.isSafeInteger(position) && position >= 1;
  const detail = useRead(auditEndpoints.auditEvent, { params: { position } }, { enabled: valid });
  const event = detail.data?.event;
  return (
    <Page
      title={`Event #${valid ? position : params.position}`}
      actions={
        event ? (
          <>
            <AuditLink filter={{ stream: event.streamId }}>Its stream</AuditLink>
            {typeof event.data.userId === 'string' ? <AuditLink filter={{ user: event.data.userId }}>Its user&apos;s trail</AuditLink> : null}
            <Link to="/audit">All events</Link>
          </>
        ) : null
      }
    >
      {!valid ? <ErrorNotice error={new Error(`${params.position ?? ''} is not a log position`)} /> : null}
      <ErrorNotice error={detail.error} />
      {valid && detail.isPending ? <Loading what="Reading the event" /> : null}
      {detail.data ? <EventDetailView detail={detail.data} /> : null}
    </Page>
  );
}
