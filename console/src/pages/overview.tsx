import { telemetryEndpoints, type OpsOverview, type RegisteredProcessView } from '@portcullis/contracts/api/telemetry';
import { useMemo } from 'react';
import { useRead } from '../api/hooks.ts';
import { Link } from '../router.tsx';
import { Badge, Card, ErrorNotice, Loading, Page, Stat } from '../ui/components.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';
import { ChartCard, CountsChart, GetSessionChart, TrendChart } from './overview-charts.tsx';
import { formatMs, formatSeconds, lagTone, minuteRows, tally, worstP99, type MinuteRow, type Tally } from './overview-rows.ts';

/** The overview is a wall display: a new answer every few seconds. */
const REFRESH_MS = 5_000;

function TallyStats({ label, figure }: { readonly label: string; readonly figure: Tally }) {
  return <Stat label={`${label}, last hour`} value={formatCount(figure.lastHour)} hint={`${formatCount(figure.thisMinute)} this minute`} />;
}

function Charts({ rows }: { readonly rows: readonly MinuteRow[] }) {
  const success = tally(rows, 'signInSuccess');
  const failure = tally(rows, 'signInFailure');
  const locked = tally(rows, 'signInLocked');
  const signUps = tally(rows, 'signUps');
  const getSessions = tally(rows, 'getSessions');
  const rateLimited = tally(rows, 'rateLimited');
  const captcha = tally(rows, 'captchaRefused');
  const queued = tally(rows, 'mailQueued');
  const sent = tally(rows, 'mailSent');
  const dead = tally(rows, 'mailDead');
  const p99 = worstP99(rows);
  return (
    <div className="grid overview-charts">
      <ChartCard
        title="Sign-ins per minute"
        description="Stacked bars per minute of the last hour: successful, failed and locked-out sign-ins."
        stats={
          <>
            <TallyStats label="Successful sign-ins" figure={success} />
            <Stat label="Failed sign-ins, last hour" value={formatCount(failure.lastHour)} hint={`${formatCount(failure.thisMinute)} this minute`} tone={failure.lastHour > 0 ? 'warn' : undefined} />
            <Stat label="Locked sign-ins, last hour" value={formatCount(locked.lastHour)} hint={`${formatCount(locked.thisMinute)} this minute`} tone={locked.lastHour > 0 ? 'bad' : undefined} />
          </>
        }
      >
        <CountsChart
          rows={rows}
          stacked
          series={[
            { key: 'signInSuccess', name: 'success', color: 'var(--chart-4)' },
            { key: 'signInFailure', name: 'failure', color: 'var(--chart-2)' },
            { key: 'signInLocked', name: 'locked', color: 'var(--chart-3)' },
          ]}
        />
      </ChartCard>
      <ChartCard title="Sign-ups per minute" description="Bars per minute of the last hour: new accounts." stats={<TallyStats label="Sign-ups" figure={signUps} />}>
        <CountsChart rows={rows} series={[{ key: 'signUps', name: 'sign-ups', color: 'var(--chart-1)' }]} />
      </ChartCard>
      <ChartCard
        title="get-session rate and p99"
        description="Bars: get-session requests per minute; line: their 99th percentile latency in milliseconds."
        stats={
          <>
            <TallyStats label="get-session requests" figure={getSessions} />
            <Stat label="get-session p99, this minute" value={formatMs(rows.at(-1)?.getSessionP99Ms)} hint={`worst minute: ${formatMs(p99)}`} />
          </>
        }
      >
        <GetSessionChart rows={rows} />
      </ChartCard>
      <ChartCard
        title="Refusals per minute"
        description="Lines per minute of the last hour: answers refused by the rate limit (429) and by the captcha."
        stats={
          <>
            <TallyStats label="429s (rate limit)" figure={rateLimited} />
            <TallyStats label="Captcha refusals" figure={captcha} />
          </>
        }
      >
        <TrendChart
          rows={rows}
          series={[
            { key: 'rateLimited', name: '429 rate limited', color: 'var(--chart-3)' },
            { key: 'captchaRefused', name: 'captcha refused', color: 'var(--chart-2)' },
          ]}
        />
      </ChartCard>
      <ChartCard
        title="Mail per minute"
        description="Lines per minute of the last hour: mail jobs queued, sent and dead-lettered, for every mailer."
        stats={
          <>
            <TallyStats label="Mail queued" figure={queued} />
            <TallyStats label="Mail sent" figure={sent} />
            <Stat label="Mail dead, last hour" value={formatCount(dead.lastHour)} hint={`${formatCount(dead.thisMinute)} this minute`} tone={dead.lastHour > 0 ? 'bad' : undefined} />
          </>
        }
      >
        <TrendChart
          rows={rows}
          series={[
            { key: 'mailQueued', name: 'queued', color: 'var(--chart-1)' },
            { key: 'mailSent', name: 'sent', color: 'var(--chart-4)' },
            { key: 'mailDead', name: 'dead', color: 'var(--chart-2)' },
          ]}
        />
      </ChartCard>
    </div>
  );
}

function ProjectionLag({ overview }: { readonly overview: OpsOverview }) {
  return (
    <Card title={<Link to="/projections">Projection lag</Link>}>
      <div className="table-wrap">
        <table className="data-table">
          <caption className="visually-hidden">Projection lag</caption>
          <thead>
            <tr>
              <th scope="col">Projection</th>
              <th scope="col">Checkpoint / head</th>
              <th scope="col">Lag</th>
              <th scope="col">Oldest waiting</th>
              <th scope="col">Held by</th>
            </tr>
          </thead>
          <tbody>
            {overview.projections.map((projection) => (
              <tr key={projection.name}>
                <th scope="row">{projection.name}</th>
                <td className="mono">
                  {formatCount(projection.checkpoint)} / {formatCount(projection.head)}
                </td>
                <td>
                  <Badge tone={lagTone(projection.lag, projection.lagSeconds)}>{projection.lag === null ? 'not started' : `${formatCount(projection.lag)} events`}</Badge>
                </td>
                <td>{formatSeconds(projection.lagSeconds)}</td>
                <td className="mono">{projection.holder ?? <span className="muted">none</span>}</td>
              </tr>
            ))}
            {overview.projections.length === 0 ? (
              <tr>
                <td colSpan={5} className="empty">
                  No projection has stored a checkpoint yet.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
    </Card>
  );
}

function CheckBadge({ name, check }: { readonly name: string; readonly check: OpsOverview['health']['postgres'] | null }) {
  if (check === null) return <Badge tone="neutral">{name}: not configured</Badge>;
  return (
    <span title={check.detail}>
      <Badge tone={check.ok ? 'ok' : 'bad'}>
        {name}: {check.ok ? 'up' : 'down'}
        {check.latencyMs !== undefined ? ` · ${formatMs(check.latencyMs)}` : ''}
      </Badge>
    </span>
  );
}

function ProcessRow({ process, now }: { readonly process: RegisteredProcessView; readonly now: number }) {
  return (
    <tr>
      <th scope="row">{process.service}</th>
      <td>
        <Badge tone={process.up ? 'ok' : 'bad'}>{process.up ? 'up' : 'down'}</Badge>
      </td>
      <td className="mono" title={process.instanceId}>
        {process.host} / {process.pid}
      </td>
      <td title={formatInstant(process.seenAt)}>{formatAgo(process.seenAt, now)}</td>
      <td title={formatInstant(process.startedAt)}>{formatAgo(process.startedAt, now)}</td>
      <td>{process.projections.length > 0 ? process.projections.join(', ') : <span className="muted">—</span>}</td>
      <td>{formatMs(process.eventLoopDelayP99Ms)}</td>
    </tr>
  );
}

function Health({ overview }: { readonly overview: OpsOverview }) {
  const now = new Date(overview.generatedAt).getTime();
  const processes = [...overview.health.processes].sort((a, b) => a.service.localeCompare(b.service) || a.host.localeCompare(b.host) || a.pid - b.pid);
  return (
    <Card title="Health">
      <div className="overview-health" role="group" aria-label="Stores">
        <CheckBadge name="Postgres" check={overview.health.postgres} />
        <CheckBadge name="Redis" check={overview.health.redis} />
      </div>
      <div className="table-wrap">
        <table className="data-table">
          <caption className="visually-hidden">Processes</caption>
          <thead>
            <tr>
              <th scope="col">Process</th>
              <th scope="col">State</th>
              <th scope="col">Host / pid</th>
              <th scope="col">Seen</th>
              <th scope="col">Started</th>
              <th scope="col">Projections held</th>
              <th scope="col">Event-loop p99</th>
            </tr>
          </thead>
          <tbody>
            {processes.map((process) => (
              <ProcessRow key={process.instanceId} process={process} now={now} />
            ))}
            {processes.length === 0 ? (
              <tr>
                <td colSpan={7} className="empty">
                  No process has registered.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
    </Card>
  );
}

export default function OverviewPage() {
  const overview = useRead(telemetryEndpoints.opsOverview, {}, { refetchInterval: REFRESH_MS, staleTime: 0 });
  const rows = useMemo(() => (overview.data ? minuteRows(overview.data.series) : []), [overview.data]);
  const data = overview.data;
  return (
    <Page
      title="Overview"
      actions={
        data ? (
          <span className="muted" role="status" aria-live="off">
            Updated {formatInstant(data.generatedAt)} · every api process summed, answered by {data.answeredBy.host} / {data.answeredBy.pid}
          </span>
        ) : null
      }
    >
      <ErrorNotice error={overview.error} />
      {!data ? (
        overview.isLoading ? <Loading what="Loading the overview" /> : null
      ) : (
        <>
          <div className="stats">
            <Stat label="Active sessions" value={formatCount(data.activeSessions)} />
            <Stat label="Mail pending" value={formatCount(data.mail.pending)} tone={data.mail.pending > 0 ? 'warn' : undefined} hint={<Link to="/mail?status=pending">deliveries</Link>} />
            <Stat
              label="Oldest unsent mail"
              value={formatSeconds(data.mail.oldestUnsentSeconds)}
              tone={data.mail.oldestUnsentSeconds !== null && data.mail.oldestUnsentSeconds > 300 ? 'bad' : undefined}
            />
            <Stat label="Dead letters" value={formatCount(data.mail.dead)} tone={data.mail.dead > 0 ? 'bad' : undefined} hint={<Link to="/mail?status=dead">retry</Link>} />
            <Stat label="Mail sent" value={formatCount(data.mail.sent)} hint="all time" />
          </div>
          <Charts rows={rows} />
          <div className="grid overview-lower">
            <ProjectionLag overview={data} />
            <Health overview={data} />
          </div>
        </>
      )}
    </Page>
  );
}
