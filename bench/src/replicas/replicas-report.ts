import { percentiles, type Percentiles } from '../lib/closed-loop.ts';
import { formatMs, formatRate, markdownTable } from '../lib/report.ts';
import type { ReplicaFigures } from './replicas-bench.ts';

/** One sign-out through the proxy, as both apis saw it. */
export interface EndingSeen {
  /**
   * From sending the sign-out until the last of the apis first answered the token with null: the sign-out's
   * own time included, as it answers only once every api has dropped the session.
   */
  readonly everyApiMs: number;
  readonly signOutMs: number;
  /** get-sessions sent to either api once the sign-out had answered that still answered the session. */
  readonly staleAnswers: number;
  readonly signOutStatus: number;
  readonly timedOut: boolean;
}

export interface Takeover {
  /** Projections the killed projector held. */
  readonly projections: number;
  /** From the SIGKILL until the standby held every one of them. */
  readonly takeoverMs: number;
  /** From the SIGKILL until the session read models among them had applied the log as it stood at the kill. */
  readonly caughtUpMs: number;
  readonly signIns: number;
  readonly failed: number;
  readonly signInsPerSecond: number;
  /** Sign-ins sent in the two seconds before the kill, and in the two after. */
  readonly before: Percentiles;
  readonly after: Percentiles;
}

const ENDING_GOAL_P99_MS = 100;
/**
 * How often each watcher asks its api at most, from one question's start to the next. Asked back to back,
 * each api got a get-session the moment it answered the last (about 90 per sign-out on a loaded host), on
 * the two cores the sign-out's own path (proxy, apis, projector, Postgres, Redis) needs: the figure
 * measured the watching as much as the ending. A first null is then seen at most this much late.
 */
export const ENDING_WATCH_INTERVAL_MS = 2;

export function replicasReport(figures: ReplicaFigures): string {
  const { getSession, endings, takeover } = figures;
  const seen = endings.filter((e) => !e.timedOut);
  const everyApi = percentiles(seen.map((e) => e.everyApiMs));
  const signOut = percentiles(endings.map((e) => e.signOutMs));
  // Negative: every api answered null before the sign-out's answer reached the client.
  const afterAnswer = percentiles(seen.map((e) => e.everyApiMs - e.signOutMs));
  const stale = endings.reduce((sum, e) => sum + e.staleAnswers, 0);
  const failed = endings.filter((e) => e.signOutStatus < 200 || e.signOutStatus > 299).length;
  const endingsPassed = everyApi.p99Ms < ENDING_GOAL_P99_MS && stale === 0 && failed === 0 && seen.length === endings.length;
  const ratio = getSession.proxy.requestsPerSecond / getSession.oneApi.requestsPerSecond;
  return [
    '## Several replicas (issue 46): two apis behind a round-robin proxy, two projectors, two mailers, one Postgres and Redis',
    '',
    markdownTable(
      ['get-session (bearer, Redis)', 'ops/s', 'p50 / p99 ms', 'failed', 'share per api'],
      [
        ['api 1 alone', formatRate(getSession.oneApi.requestsPerSecond), `${getSession.oneApi.p50Ms} / ${getSession.oneApi.p99Ms}`, String(getSession.oneApi.failed), ''],
        [
          'both apis, each loaded directly',
          formatRate(getSession.bothDirect.reduce((sum, figures) => sum + figures.requestsPerSecond, 0)),
          getSession.bothDirect.map((figures) => `${figures.p50Ms} / ${figures.p99Ms}`).join(', '),
          String(getSession.bothDirect.reduce((sum, figures) => sum + figures.failed, 0)),
          getSession.bothDirect.map((figures) => formatRate(figures.requestsPerSecond)).join(' / '),
        ],
        [
          'through the proxy (both apis)',
          formatRate(getSession.proxy.requestsPerSecond),
          `${getSession.proxy.p50Ms} / ${getSession.proxy.p99Ms}`,
          String(getSession.proxy.failed),
          getSession.sharePerApi.map((share) => `${(share * 100).toFixed(1)}%`).join(' / '),
        ],
      ],
      new Set([1, 3]),
    ),
    '',
    `Through the proxy: ${(ratio * 100).toFixed(1)}% of one api alone. Every process shares the host's cores: the proxy (one Node process),`,
    `  the load generator (one thread) and both apis; shares through the proxy are from each api's /metrics.`,
    '',
    markdownTable(
      ['sign-outs', 'no session on every api p50 / p99 / max ms', 'sign-out answered p50 / p99 ms', 'every api null after the answer, max ms', 'answered after the sign-out had', 'not seen in 10 s', 'non-2xx', 'goal'],
      [
        [
          String(endings.length),
          `${formatMs(everyApi.p50Ms)} / ${formatMs(everyApi.p99Ms)} / ${formatMs(everyApi.maxMs)}`,
          `${formatMs(signOut.p50Ms)} / ${formatMs(signOut.p99Ms)}`,
          formatMs(afterAnswer.maxMs),
          String(stale),
          String(endings.length - seen.length),
          String(failed),
          `${endingsPassed ? 'PASS' : 'MISS'} (p99 < ${ENDING_GOAL_P99_MS} ms, no api answers a session once its sign-out has answered)`,
        ],
      ],
      new Set([0, 3, 4, 5, 6]),
    ),
    '',
    markdownTable(
      ['projector killed under sign-in load', 'projections', 'held by the standby after ms', 'session read models caught up after ms', 'sign-ins/s', 'p99 / max ms 2 s before', 'p99 / max ms 2 s after', 'failed'],
      [
        [
          'SIGKILL of the holder',
          String(takeover.projections),
          formatMs(takeover.takeoverMs),
          formatMs(takeover.caughtUpMs),
          formatRate(takeover.signInsPerSecond),
          `${formatMs(takeover.before.p99Ms)} / ${formatMs(takeover.before.maxMs)}`,
          `${formatMs(takeover.after.p99Ms)} / ${formatMs(takeover.after.maxMs)}`,
          String(takeover.failed),
        ],
      ],
      new Set([1, 2, 3, 4, 7]),
    ),
    '',
    'Each ended session was held by both apis (a get-session on each just before); the sign-out went through the proxy while both apis were',
    `  asked for the token every ${ENDING_WATCH_INTERVAL_MS} ms (a null seen up to that much late). Caught up: the standby's session and session-cache checkpoints at the log's head as it stood at the kill.`,
  ].join('\n');
}
