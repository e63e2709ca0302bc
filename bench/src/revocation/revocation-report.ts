import { percentiles } from '../lib/closed-loop.ts';
import { formatMs, markdownTable } from '../lib/report.ts';
import type { Revocation } from './revocation-bench.ts';

export function revocationReport(revocations: readonly Revocation[], killedClients: number): string {
  const seen = revocations.filter((r) => !r.timedOut);
  const visible = percentiles(seen.map((r) => r.visibleMs));
  const signOut = percentiles(revocations.map((r) => r.signOutMs));
  // Negative: B answered null before A's answer reached the client.
  const afterAnswer = percentiles(seen.map((r) => r.visibleMs - r.signOutMs));
  const stale = revocations.filter((r) => r.answeredAfterSignOut > 0);
  const failed = revocations.filter((r) => r.signOutStatus < 200 || r.signOutStatus > 299).length;
  const timedOut = revocations.length - seen.length;
  const killed = revocations.find((r) => r.channelKilled);
  const passed = stale.length === 0 && timedOut === 0 && failed === 0;
  const table = markdownTable(
    ['sign-outs', 'visible on B p50 / p99 / max ms', 'sign-out on A p50 / p99 / max ms', 'B null after A answered, max ms', 'B answered after A answered', 'not visible in 10 s', 'sign-out non-2xx', 'goal'],
    [
      [
        String(revocations.length),
        `${formatMs(visible.p50Ms)} / ${formatMs(visible.p99Ms)} / ${formatMs(visible.maxMs)}`,
        `${formatMs(signOut.p50Ms)} / ${formatMs(signOut.p99Ms)} / ${formatMs(signOut.maxMs)}`,
        formatMs(afterAnswer.maxMs),
        `${stale.length} (${stale.reduce((sum, r) => sum + r.answeredAfterSignOut, 0)} answers)`,
        String(timedOut),
        String(failed),
        `${passed ? 'PASS' : 'MISS'} (B never answers a session A has signed out)`,
      ],
    ],
    new Set([0, 1, 2, 3, 4, 5, 6]),
  );
  return [
    '## Revocation on a second api process (issue 19): api A and api B, each with its in-process session cache, one projector',
    '',
    table,
    '',
    'Each session was held in B\'s cache (a get-session through B just before); the sign-out went to A (bearer) while B was',
    '  asked for the same token back to back. visible: from sending the sign-out to B\'s first null. B answered after A',
    '  answered: get-sessions sent to B once A had answered the sign-out that still answered the session (sessions, and answers).',
    ...stale.map(
      (r) =>
        `sign-out ${revocations.indexOf(r) + 1}: B answered the session ${r.answeredAfterSignOut} time(s) after A had answered (${formatMs(r.signOutMs)} ms), the last asked ${formatMs(r.lastAnsweredAfterMs)} ms after A's answer; B's null came ${formatMs(r.visibleMs)} ms after the sign-out was sent.`,
    ),
    killed
      ? `B's invalidation subscriber (${killedClients} connection${killedClients === 1 ? '' : 's'}) was killed with CLIENT KILL right after sign-out ${revocations.indexOf(killed) + 1} was sent: that one was visible on B after ${formatMs(killed.visibleMs)} ms, ${killed.answeredAfterSignOut} answer(s) after A's.`
      : '',
  ].join('\n');
}
