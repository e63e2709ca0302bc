import { auditEndpoints, type AuditNames } from '@portcullis/contracts/api/audit';
import { useState, type FormEvent } from 'react';
import { z } from 'zod';
import type { Answer } from '../api/client.ts';
import { useRead } from '../api/hooks.ts';
import { ActorRef, auditPaths, ChangesTable, OrganizationName, PersonRef, ShownValue } from '../audit/parts.tsx';
import { flattenState, isUnder, userSummary } from '../audit/state.ts';
import { Link, useSearchState } from '../router.tsx';
import { AuditLink, Badge, Button, Card, Empty, ErrorNotice, Field, KeyValues, Loading, Page } from '../ui/components.tsx';
import { formatAgo, formatInstant, formText } from '../ui/format.ts';

/** Points on the slider at most: the latest this many of a subject's history. */
const POINTS = 1000;

const travelView = z.object({
  kind: z.enum(['user', 'organization']).catch('user'),
  id: z.string().max(255).catch(''),
  at: z.coerce.number().int().min(1).optional().catch(undefined),
});

type Kind = z.output<typeof travelView>['kind'];
type History = Answer<typeof auditEndpoints.auditUserHistory>;
type Point = History['points'][number];

/** The slider's index of a position: the last point at or before it (the state there is that point's). */
export function indexOfPosition(points: readonly Point[], position: number | undefined): number {
  if (points.length === 0) return 0;
  if (position === undefined) return points.length - 1;
  let index = 0;
  for (const [i, point] of points.entries()) if (point.position <= position) index = i;
  return index;
}

function Subject({ kind, id, names }: { readonly kind: 'user' | 'organization'; readonly id: string; readonly names: AuditNames }) {
  return kind === 'user' ? <PersonRef id={id} people={names.people} /> : <OrganizationName id={id} organizations={names.organizations} />;
}

function UserFacts({ state, names }: { readonly state: unknown; readonly names: AuditNames }) {
  const user = userSummary(state);
  if (!user.exists) return <p className="muted">Not a registered user at this point.</p>;
  return (
    <KeyValues
      entries={[
        ['Name', user.name ?? '—'],
        ['Email', user.email ?? '—'],
        ['Role', user.role ?? '—'],
        ['Banned', user.banned === null ? '—' : user.banned ? <Badge tone="bad">banned</Badge> : <Badge tone="ok">not banned</Badge>],
        ['Live sessions', String(user.sessions)],
        [
          'Organizations',
          user.organizations.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <span className="audit-subjects">
              {user.organizations.map((org) => (
                <span key={org.id}>
                  <OrganizationName id={org.id} organizations={names.organizations} /> {org.role ? <span className="muted">({org.role})</span> : null}
                </span>
              ))}
            </span>
          ),
        ],
      ]}
    />
  );
}

/** The state at a point, leaf by leaf, the leaves that differ from now marked. */
function StateTable({ state, changed, position }: { readonly state: unknown; readonly changed: ReadonlySet<string>; readonly position: number }) {
  const rows = flattenState(state);
  return (
    <table className="data-table audit-state">
      <caption className="visually-hidden">State at position {position}</caption>
      <thead>
        <tr>
          <th scope="col">Path</th>
          <th scope="col">Value then</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.path} className={isUnder(row.path, changed) ? 'audit-changed' : undefined}>
            <th scope="row" className="mono">
              {row.path}
            </th>
            <td>
              <ShownValue value={row.value} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function PointView({ kind, id, point }: { readonly kind: 'user' | 'organization'; readonly id: string; readonly point: Point }) {
  const endpoint = kind === 'user' ? auditEndpoints.auditUserAt : auditEndpoints.auditOrganizationAt;
  const then = useRead(endpoint, { params: { id }, query: { at: String(point.position) } });
  const now = useRead(endpoint, { params: { id }, query: { diffFrom: String(point.position) } });
  const event = useRead(auditEndpoints.auditEvent, { params: { position: point.position } });
  const names: AuditNames = {
    people: { ...then.data?.people, ...now.data?.people, ...event.data?.people },
    organizations: { ...then.data?.organizations, ...now.data?.organizations, ...event.data?.organizations },
  };
  const changes = now.data?.diff?.changes ?? [];
  return (
    <>
      <Card title={`Event #${point.position}`}>
        <ErrorNotice error={event.error} />
        {event.data ? (
          <>
            <p className="audit-sentence">
              <Link to={auditPaths.event(point.position)}>{event.data.event.sentence}</Link>
            </p>
            <KeyValues
              entries={[
                ['Occurred', `${formatInstant(point.occurredAt)} (${formatAgo(point.occurredAt)})`],
                ['Type', <code key="type">{point.type}</code>],
                ['Actor', <ActorRef key="actor" actor={event.data.event.actor} people={names.people} />],
              ]}
            />
          </>
        ) : (
          <Loading what="Reading the event" />
        )}
      </Card>
      <div className="grid time-travel-grid">
        <Card title={`State at #${point.position}`}>
          <ErrorNotice error={then.error} />
          {then.data ? (
            <>
              {kind === 'user' ? <UserFacts state={then.data.state} names={names} /> : null}
              <StateTable state={then.data.state} changed={new Set(changes.map((c) => c.path))} position={point.position} />
            </>
          ) : (
            <Loading what="Folding the log" />
          )}
        </Card>
        <Card title="What changed between then and now">
          <ErrorNotice error={now.error} />
          {now.data ? (
            <>
              {kind === 'user' ? <UserFacts state={now.data.state} names={names} /> : null}
              <ChangesTable changes={changes} caption={`Changes from position ${point.position} to now`} beforeLabel="Then" afterLabel="Now" />
            </>
          ) : (
            <Loading what="Folding the log to now" />
          )}
        </Card>
      </div>
    </>
  );
}

function Slider({ points, total, index, onIndex }: { readonly points: readonly Point[]; readonly total: number; readonly index: number; readonly onIndex: (index: number) => void }) {
  const point = points[index]!;
  const label = (p: Point) => `#${p.position}, ${p.type}, ${formatInstant(p.occurredAt)}`;
  return (
    <Card title="History" className="time-travel-slider">
      <label className="field">
        <span className="field-label">
          Point {index + 1} of {points.length}
          {total > points.length ? ` (the latest ${points.length} of ${total})` : ''}
        </span>
        <input
          type="range"
          min={0}
          max={points.length - 1}
          step={1}
          value={index}
          list="time-travel-marks"
          aria-valuetext={label(point)}
          onChange={(event) => onIndex(Number(event.target.value))}
        />
      </label>
      {/* A mark for each point of the history. */}
      <datalist id="time-travel-marks">
        {points.map((p, i) => (
          <option key={p.position} value={i} label={`#${p.position}`} />
        ))}
      </datalist>
      <div className="time-travel-ends muted">
        <span>{formatInstant(points[0]!.occurredAt)}</span>
        <span>{formatInstant(points.at(-1)!.occurredAt)}</span>
      </div>
      <div className="filters">
        <Button onClick={() => onIndex(0)} disabled={index === 0}>
          First
        </Button>
        <Button onClick={() => onIndex(index - 1)} disabled={index === 0}>
          ← Earlier
        </Button>
        <Button onClick={() => onIndex(index + 1)} disabled={index === points.length - 1}>
          Later →
        </Button>
        <Button onClick={() => onIndex(points.length - 1)} disabled={index === points.length - 1}>
          Latest
        </Button>
        <span role="status" aria-live="polite">
          At {label(point)}
        </span>
      </div>
    </Card>
  );
}

/** Whose history: a kind and an id pasted from a log. */
function WhoseHistory({ kind: shownKind, id, onShow }: { readonly kind: Kind; readonly id: string; readonly onShow: (kind: Kind, id: string) => void }) {
  const [kind, setKind] = useState<Kind>(shownKind);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    onShow(kind, formText(new FormData(event.currentTarget), 'id').trim());
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Whose history">
      <Field label="Kind">
        <select value={kind} onChange={(event) => setKind(event.target.value === 'organization' ? 'organization' : 'user')}>
          <option value="user">user</option>
          <option value="organization">organization</option>
        </select>
      </Field>
      <Field label="Id">
        <input name="id" defaultValue={id} placeholder="paste an id from a log" spellCheck={false} size={40} />
      </Field>
      <Button type="submit" tone="primary">
        Show history
      </Button>
    </form>
  );
}

export default function TimeTravelPage() {
  const [view, setView] = useSearchState(travelView);
  const historyEndpoint = view.kind === 'user' ? auditEndpoints.auditUserHistory : auditEndpoints.auditOrganizationHistory;
  const history = useRead(historyEndpoint, { params: { id: view.id }, query: { order: 'newest', limit: POINTS } }, { enabled: view.id !== '' });
  const points = [...(history.data?.points ?? [])].reverse();
  const index = indexOfPosition(points, view.at);
  const point = points[index];
  const nowEndpoint = view.kind === 'user' ? auditEndpoints.auditUserAt : auditEndpoints.auditOrganizationAt;
  const current = useRead(nowEndpoint, { params: { id: view.id }, query: {} }, { enabled: view.id !== '' });
  const names: AuditNames = { people: current.data?.people ?? {}, organizations: current.data?.organizations ?? {} };
  return (
    <Page
      title="Time travel"
      actions={
        view.id ? (
          <>
            <Subject kind={view.kind} id={view.id} names={names} />
            <AuditLink filter={{ [view.kind]: view.id }}>Its audit trail</AuditLink>
          </>
        ) : null
      }
    >
      <WhoseHistory key={`${view.kind}:${view.id}`} kind={view.kind} id={view.id} onShow={(kind, id) => setView({ kind, id, at: undefined })} />
      {view.id === '' ? <Empty>Paste the id of a user or an organization to move through its history.</Empty> : null}
      <ErrorNotice error={history.error ?? current.error} />
      {view.id !== '' && history.isPending ? <Loading what="Reading the history" /> : null}
      {history.data && points.length === 0 ? <Empty>The log holds nothing of this {view.kind}.</Empty> : null}
      {point ? (
        <>
          <Slider points={points} total={history.data?.total ?? points.length} index={index} onIndex={(next) => setView({ at: points[next]?.position }, { replace: true })} />
          <PointView kind={view.kind} id={view.id} point={point} />
        </>
      ) : null}
    </Page>
  );
}
