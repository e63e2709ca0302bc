import { auditVerificationEndpoints, type ChainVerification } from '@portcullis/contracts/api/audit-verification';
import { useRead, useWrite } from '../api/hooks.ts';
import { Badge, Button, Card, ErrorNotice, Loading } from '../ui/components.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';
import { auditPaths } from './parts.tsx';
import { Link } from '../router.tsx';

const tones = { running: 'info', intact: 'ok', broken: 'bad', failed: 'warn' } as const;

function Verdict({ check }: { readonly check: ChainVerification }) {
  return (
    <div className="chain-check-verdict">
      <Badge tone={tones[check.status]}>{check.status}</Badge>{' '}
      {check.status === 'running' ? (
        <span>
          started <span title={formatInstant(check.startedAt)}>{formatAgo(check.startedAt)}</span> ({check.source})
        </span>
      ) : (
        <span>
          {formatInstant(check.finishedAt ?? check.startedAt)} <span className="muted">({formatAgo(check.finishedAt ?? check.startedAt)}, {check.source})</span>
        </span>
      )}
      <div className="muted">
        {formatCount(check.checked)} events checked, verified to position {formatCount(check.verifiedTo)}
        {check.head !== null ? ` of ${formatCount(check.head)}` : ''}
      </div>
      {check.failure ? (
        <div className="notice tone-bad" role="alert">
          Position <Link to={auditPaths.event(check.failure.position)}>{check.failure.position}</Link> does not hold: {check.failure.problem}
        </div>
      ) : null}
      {check.error ? <div className="notice tone-bad">{check.error}</div> : null}
    </div>
  );
}

/**
 * The last hash-chain check (when, what it found) and a button to run one; while one runs, its progress,
 * asked again every second until it ends.
 */
export function ChainCheck() {
  const start = useWrite(auditVerificationEndpoints.verifyAuditChain);
  // The check this page started is followed until it has finished, whatever one read in between said.
  const startedId = start.data?.verification.id;
  const checks = useRead(
    auditVerificationEndpoints.auditVerification,
    {},
    {
      refetchInterval: (query) => {
        const answer = query.state.data;
        const following = startedId !== undefined && answer?.lastFinished?.id !== startedId && answer?.latest?.status !== 'failed';
        return answer?.latest?.status === 'running' || following ? 1000 : false;
      },
      staleTime: 0,
    },
  );
  const latest = checks.data?.latest ?? null;
  const lastFinished = checks.data?.lastFinished ?? null;
  const running = latest?.status === 'running';
  return (
    <Card title="Hash chain" className="chain-check">
      <ErrorNotice error={checks.error ?? start.error} />
      {checks.isPending ? <Loading what="Reading the last check" /> : null}
      {checks.data && !latest ? <p className="muted">The chain was never checked.</p> : null}
      {running && latest ? (
        <div role="status" aria-live="polite">
          <progress max={100} value={latest.percent ?? undefined} aria-label="Hash-chain check progress" />{' '}
          {latest.percent !== null ? `${Math.floor(latest.percent)} %` : ''}
          <Verdict check={latest} />
        </div>
      ) : null}
      {lastFinished ? (
        <div>
          <span className="muted">Last check: </span>
          <Verdict check={lastFinished} />
        </div>
      ) : null}
      <Button onClick={() => start.mutate({})} disabled={running || start.isPending}>
        {running ? 'Checking…' : 'Check the chain now'}
      </Button>
    </Card>
  );
}
