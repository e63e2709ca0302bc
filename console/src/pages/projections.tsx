import { adminEndpoints } from '@portcullis/contracts/api/admin';
import { projectionOpsEndpoints, type ProjectionRebuild, type ProjectionStatus } from '@portcullis/contracts/api/projection-ops';
import { z } from 'zod';
import { useRead, useWrite } from '../api/hooks.ts';
import { useSearchState } from '../router.tsx';
import { Badge, Card, ConfirmButton, ErrorNotice, KeyValues, Loading, Page, Stat, UserRef } from '../ui/components.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';
import { formatSeconds, lagTone } from './overview-rows.ts';
import { rebuildEnded, rebuildPercent, rebuildTone } from './rebuild-progress.ts';

/** The list moves with the log: a fresh answer every two seconds. */
const REFRESH_MS = 2_000;
/** A rebuild under way is watched closer than the list. */
const PROGRESS_MS = 1_000;

/** The rebuild being watched, in the address, so a reload (or a shared link) keeps watching it. */
const projectionsView = z.object({
  rebuild: z.uuid().optional().catch(undefined),
});

/** Position reached over head, as a bar and in words, with the rebuild's status and error. */
export function RebuildProgress({ rebuild }: { readonly rebuild: ProjectionRebuild }) {
  const percent = rebuildPercent(rebuild);
  const label = `Rebuild of ${rebuild.projection}`;
  return (
    <div className="rebuild-progress">
      <div className="rebuild-progress-line">
        <Badge tone={rebuildTone(rebuild.status)}>{rebuild.status}</Badge>
        <progress aria-label={label} max={100} {...(percent === null ? {} : { value: percent })} />
        <span className="mono">{percent === null ? '—' : `${percent.toFixed(percent === 100 || percent === 0 ? 0 : 1)} %`}</span>
        <span className="muted">
          position {formatCount(rebuild.position)} / head {formatCount(rebuild.head)}
        </span>
      </div>
      {rebuild.error ? (
        <div className="notice tone-bad" role="alert">
          {rebuild.error}
        </div>
      ) : null}
    </div>
  );
}

/** The rebuild carries the admin's id only: their name and email come from the user. */
function Requester({ id }: { readonly id: string }) {
  const user = useRead(adminEndpoints.getUser, { query: { id } }, { staleTime: 60_000 });
  return <UserRef id={id} name={user.data?.name} email={user.data?.email} />;
}

/** The rebuild the operator started, polled until it ends. */
function WatchedRebuild({ id }: { readonly id: string }) {
  const rebuild = useRead(
    projectionOpsEndpoints.projectionRebuild,
    { params: { id } },
    { refetchInterval: (query) => (query.state.data && rebuildEnded(query.state.data.status) ? false : PROGRESS_MS), staleTime: 0 },
  );
  if (rebuild.error) return <ErrorNotice error={rebuild.error} />;
  if (!rebuild.data) return <Loading what="Loading the rebuild" />;
  const data = rebuild.data;
  return (
    <Card title={`Rebuild of ${data.projection}`} className="rebuild-card">
      <div role="status" aria-live="polite" aria-label={`Rebuild of ${data.projection} progress`}>
        <RebuildProgress rebuild={data} />
      </div>
      <KeyValues
        entries={[
          ['Rebuild', <span className="mono">{data.id}</span>],
          ['Requested', `${formatInstant(data.requestedAt)} (${formatAgo(data.requestedAt)})`],
          ['Requested by', data.requestedBy ? <Requester id={data.requestedBy} /> : 'a server call'],
          ['Started', formatInstant(data.startedAt)],
          ['Finished', formatInstant(data.finishedAt)],
          ['Run by', data.worker ?? '—'],
        ]}
      />
    </Card>
  );
}

function Holder({ holder }: { readonly holder: ProjectionStatus['holder'] }) {
  if (!holder) return <Badge tone="warn">no process</Badge>;
  // A projector that names its connections shows by name; else the Postgres backend holding the lock.
  const detail = [holder.applicationName ? `backend ${holder.pid}` : null, holder.clientAddress, holder.connectedAt ? `since ${formatAgo(holder.connectedAt)}` : null];
  return (
    <span className="ref" title={`Postgres backend ${holder.pid} holds its advisory lock`}>
      <span>{holder.applicationName || `Postgres backend ${holder.pid}`}</span>
      <span className="ref-detail">{detail.filter((part) => part !== null).join(' · ')}</span>
    </span>
  );
}

function ProjectionRow({ projection, onRebuild, busy }: { readonly projection: ProjectionStatus; readonly onRebuild: (name: string) => void; readonly busy: boolean }) {
  const underWay = projection.rebuild !== null && !rebuildEnded(projection.rebuild.status);
  return (
    <tr>
      <th scope="row">
        {projection.name}
        <div className="ref-detail">{projection.store}</div>
      </th>
      <td className="mono">
        {formatCount(projection.checkpoint)}
        {projection.checkpointUpdatedAt ? <div className="ref-detail">{formatAgo(projection.checkpointUpdatedAt)}</div> : null}
      </td>
      <td>
        <Badge tone={lagTone(projection.lagEvents, projection.lagSeconds)}>{projection.lagEvents === null ? 'not started' : `${formatCount(projection.lagEvents)} events`}</Badge>
        {projection.detail ? <div className="ref-detail">{projection.detail}</div> : null}
      </td>
      <td>{formatSeconds(projection.lagSeconds)}</td>
      <td>
        <Holder holder={projection.holder} />
      </td>
      <td>
        {projection.rebuild ? (
          <span className="ref">
            <Badge tone={rebuildTone(projection.rebuild.status)}>{projection.rebuild.status}</Badge>
            <span className="ref-detail">{formatAgo(projection.rebuild.finishedAt ?? projection.rebuild.startedAt ?? projection.rebuild.requestedAt)}</span>
          </span>
        ) : (
          <span className="muted">never</span>
        )}
      </td>
      <td>
        {projection.rebuildable ? (
          <ConfirmButton
            label={`Rebuild ${projection.name}`}
            confirm={`Rebuild ${projection.name} from the whole log?`}
            disabled={busy || underWay}
            onConfirm={() => onRebuild(projection.name)}
          />
        ) : (
          <span className="muted" title="Replaying it would redo its side effects">
            not rebuildable
          </span>
        )}
      </td>
    </tr>
  );
}

export default function ProjectionsPage() {
  const [view, setView] = useSearchState(projectionsView);
  const list = useRead(projectionOpsEndpoints.listProjections, {}, { refetchInterval: REFRESH_MS, staleTime: 0 });
  const rebuild = useWrite(projectionOpsEndpoints.rebuildProjection);
  const start = (name: string) => rebuild.mutate({ params: { name } }, { onSuccess: (answer) => setView({ rebuild: answer.rebuild.id }) });
  const projections = list.data?.projections ?? [];
  const behind = projections.filter((p) => (p.lagEvents ?? 0) > 0).length;
  return (
    <Page title="Projections">
      <ErrorNotice error={list.error ?? rebuild.error} />
      {rebuild.data && !rebuild.data.started ? (
        <div className="notice tone-ok" role="status">
          A rebuild of {rebuild.data.rebuild.projection} was already under way: watching that one.
        </div>
      ) : null}
      {view.rebuild ? <WatchedRebuild id={view.rebuild} /> : null}
      {list.data ? (
        <>
          <div className="stats">
            <Stat label="Log head" value={formatCount(list.data.head)} />
            <Stat label="Projections" value={formatCount(projections.length)} />
            <Stat label="Behind the head" value={formatCount(behind)} tone={behind > 0 ? 'warn' : 'ok'} />
            <Stat label="Without a process" value={formatCount(projections.filter((p) => p.holder === null).length)} />
          </div>
          <div className="table-wrap">
            <table className="data-table projections-table">
              <caption className="visually-hidden">Projections</caption>
              <thead>
                <tr>
                  <th scope="col">Projection</th>
                  <th scope="col">Checkpoint</th>
                  <th scope="col">Lag</th>
                  <th scope="col">Oldest waiting</th>
                  <th scope="col">Held by</th>
                  <th scope="col">Latest rebuild</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {projections.map((projection) => (
                  <ProjectionRow key={projection.name} projection={projection} onRebuild={start} busy={rebuild.isPending} />
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : list.isLoading ? (
        <Loading what="Loading the projections" />
      ) : null}
    </Page>
  );
}
