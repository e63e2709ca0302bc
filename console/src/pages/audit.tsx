import { auditEndpoints, type AuditEvent, type AuditNames } from '@portcullis/contracts/api/audit';
import { actorKinds } from '@portcullis/contracts/events/define-event';
import { eventDefinitions, supersededEvents } from '@portcullis/contracts/events/index';
import { urlOf } from '../api/client.ts';
import { useRead } from '../api/hooks.ts';
import { ChainCheck } from '../audit/chain-check.tsx';
import { auditView, filterCount, filterOf, isAddressOrRange, isoOfLocal, localOfIso, pageSizes, previousCursor, searchQueryOf, type AuditView } from '../audit/filters.ts';
import { ActorRef, AddressLink, auditPaths, OrganizationName, PersonRef, SubjectRefs, ValuesField } from '../audit/parts.tsx';
import { Link, useSearchState } from '../router.tsx';
import { Button, Empty, ErrorNotice, Field, Loading, Page } from '../ui/components.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';

/** Every type the log may hold, for the type filter's suggestions. */
const knownTypes = [...new Set([...eventDefinitions, ...supersededEvents].map((definition) => definition.type))].sort();
const knownPrefixes = [...new Set(knownTypes.map((type) => `${type.split('.')[0]}.`))];

function EventRow({ event, names }: { readonly event: AuditEvent; readonly names: AuditNames }) {
  return (
    <tr>
      <td className="audit-time">
        <span title={`recorded ${formatInstant(event.recordedAt)}`}>{formatInstant(event.occurredAt)}</span>
        <div className="muted">{formatAgo(event.occurredAt)}</div>
      </td>
      <td className="audit-what">
        <Link to={auditPaths.event(event.position)}>{event.sentence}</Link>
        <div className="muted mono">#{event.position}</div>
      </td>
      <td>
        <ActorRef actor={event.actor} people={names.people} />
      </td>
      <td>
        <SubjectRefs data={event.data} names={names} />
      </td>
      <td className="audit-type">
        <Link to={auditPaths.filtered({ type: event.type })} className="mono" title={`Every ${event.type} event`}>
          {event.type}
        </Link>
      </td>
      <td>
        <AddressLink address={event.metadata.ipAddress} />
      </td>
    </tr>
  );
}

/** Pages by log position: older follows the answer's cursor, newer reads back from this page's first event. */
function Pager({ view, setView, events, nextCursor, indexedTo }: { readonly view: AuditView; readonly setView: (patch: Partial<AuditView>) => void; readonly events: readonly AuditEvent[]; readonly nextCursor: number | null; readonly indexedTo: number }) {
  const newest = view.order === 'newest';
  const start = events[0]?.position ?? (view.cursor === undefined ? undefined : newest ? view.cursor - 1 : view.cursor + 1);
  const before = useRead(
    auditEndpoints.auditEvents,
    { query: { ...filterOf(view), order: newest ? 'oldest' : 'newest', limit: view.limit, ...(start !== undefined ? { cursor: start } : {}) } },
    { enabled: view.cursor !== undefined && start !== undefined },
  );
  const earlierWord = newest ? 'Newer' : 'Older';
  const laterWord = newest ? 'Older' : 'Newer';
  const goBack = () => {
    const found = before.data?.events ?? [];
    setView({ cursor: previousCursor(view.order, found.at(-1)?.position, found.length, view.limit) });
  };
  return (
    <nav className="pager" aria-label="Audit pages">
      <span className="pager-count">
        {formatCount(events.length)} {events.length === 1 ? 'event' : 'events'} on this page{view.cursor !== undefined ? ` (after position ${formatCount(view.cursor)})` : ''} · the audit index has
        reached position {formatCount(indexedTo)}
      </span>
      <Button onClick={() => setView({ cursor: undefined })} disabled={view.cursor === undefined}>
        {newest ? 'Newest' : 'Oldest'}
      </Button>
      <Button onClick={goBack} disabled={view.cursor === undefined || before.data === undefined}>
        ← {earlierWord}
      </Button>
      <Button onClick={() => nextCursor !== null && setView({ cursor: nextCursor })} disabled={nextCursor === null}>
        {laterWord} →
      </Button>
      <label className="pager-size">
        Per page
        <select value={view.limit} onChange={(event) => setView({ limit: Number(event.target.value), cursor: undefined })}>
          {[...new Set([...pageSizes, view.limit])].sort((a, b) => a - b).map((size) => (
            <option key={size} value={size}>
              {size}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}

function Filters({ view, setFilter, names }: { readonly view: AuditView; readonly setFilter: (patch: Partial<AuditView>, options?: { readonly replace?: boolean }) => void; readonly names: AuditNames }) {
  const person = (id: string) => <PersonRef id={id} people={names.people} />;
  return (
    <form className="filters audit-filters" role="search" aria-label="Audit filters" onSubmit={(event) => event.preventDefault()}>
      <ValuesField label="User" values={view.user} onChange={(user) => setFilter({ user })} chip={person} placeholder="user ids, comma-separated" />
      <ValuesField
        label="Organization"
        values={view.organization}
        onChange={(organization) => setFilter({ organization })}
        chip={(id) => <OrganizationName id={id} organizations={names.organizations} />}
        placeholder="organization ids"
      />
      <ValuesField label="Actor" values={view.actor} onChange={(actor) => setFilter({ actor })} chip={person} placeholder="who did it (user ids)" />
      <ValuesField
        label="Address"
        values={view.ip}
        onChange={(ip) => setFilter({ ip })}
        accepts={isAddressOrRange}
        refusal="not an IP address or CIDR range"
        placeholder="203.0.113.7, 10.0.0.0/8"
      />
      <ValuesField label="Event type" values={view.type} onChange={(type) => setFilter({ type })} placeholder="user.banned.v1, …" list="audit-known-types" />
      <datalist id="audit-known-types">
        {knownTypes.map((type) => (
          <option key={type} value={type} />
        ))}
      </datalist>
      <Field label="Type prefix">
        <input value={view.typePrefix ?? ''} list="audit-known-prefixes" onChange={(event) => setFilter({ typePrefix: event.target.value || undefined }, { replace: true })} placeholder="credentials." />
      </Field>
      <datalist id="audit-known-prefixes">
        {knownPrefixes.map((prefix) => (
          <option key={prefix} value={prefix} />
        ))}
      </datalist>
      <ValuesField label="Stream" values={view.stream} onChange={(stream) => setFilter({ stream })} placeholder="user-<id>, organization-<id>" />
      <Field label="From">
        <input type="datetime-local" value={localOfIso(view.from)} onChange={(event) => setFilter({ from: isoOfLocal(event.target.value) })} />
      </Field>
      <Field label="To">
        <input type="datetime-local" value={localOfIso(view.to)} onChange={(event) => setFilter({ to: isoOfLocal(event.target.value) })} />
      </Field>
      <Field label="Order">
        <select value={view.order} onChange={(event) => setFilter({ order: event.target.value === 'oldest' ? 'oldest' : 'newest' })}>
          <option value="newest">newest first</option>
          <option value="oldest">oldest first</option>
        </select>
      </Field>
      <fieldset className="audit-kinds">
        <legend className="field-label">Actor kind</legend>
        {actorKinds.map((kind) => (
          <label key={kind}>
            <input
              type="checkbox"
              checked={view.actorKind.includes(kind)}
              onChange={(event) => setFilter({ actorKind: event.target.checked ? [...view.actorKind, kind] : view.actorKind.filter((k) => k !== kind) })}
            />{' '}
            {kind}
          </label>
        ))}
      </fieldset>
    </form>
  );
}

export default function AuditPage() {
  const [view, setView] = useSearchState(auditView);
  // The newest page follows the log as it grows; a page further back stays put while it is read.
  const live = view.cursor === undefined && view.order === 'newest';
  const search = useRead(auditEndpoints.auditEvents, { query: searchQueryOf(view) }, { refetchInterval: live ? 10_000 : false });
  const names: AuditNames = { people: search.data?.people ?? {}, organizations: search.data?.organizations ?? {} };
  // A changed filter starts again from the first page: the cursor belongs to the old one.
  const setFilter = (patch: Partial<AuditView>, options?: { readonly replace?: boolean }) => setView({ ...patch, cursor: undefined }, options);
  const exportHref = urlOf(auditEndpoints.auditExport, { query: filterOf(view) });
  const filters = filterCount(view);
  return (
    <Page
      title="Audit trail"
      actions={
        <>
          {filters > 0 ? <Button onClick={() => setView({ ...auditView.parse({}), order: view.order, limit: view.limit })}>Clear {filters} filters</Button> : null}
          <a className="button" href={exportHref} download="audit.ndjson">
            Export NDJSON
          </a>
          <Link className="button" to="/audit/time-travel">
            Time travel
          </Link>
        </>
      }
    >
      <ChainCheck />
      <Filters view={view} setFilter={setFilter} names={names} />
      <ErrorNotice error={search.error} />
      {search.isPending ? <Loading what="Searching the audit trail" /> : null}
      {search.data ? (
        <>
          <Pager view={view} setView={setView} events={search.data.events} nextCursor={search.data.nextCursor} indexedTo={search.data.indexedTo} />
          {search.data.events.length === 0 ? (
            <Empty>No event matches these filters.</Empty>
          ) : (
            <div className="table-wrap" aria-busy={search.isFetching}>
              <table className="data-table audit-table">
                <caption className="visually-hidden">Audit events</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">What happened</th>
                    <th scope="col">Actor</th>
                    <th scope="col">Subjects</th>
                    <th scope="col">Type</th>
                    <th scope="col">Address</th>
                  </tr>
                </thead>
                <tbody>
                  {search.data.events.map((event) => (
                    <EventRow key={event.position} event={event} names={names} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager view={view} setView={setView} events={search.data.events} nextCursor={search.data.nextCursor} indexedTo={search.data.indexedTo} />
        </>
      ) : null}
    </Page>
  );
}
