import { formatMs, formatRate, markdownTable } from '../lib/report.ts';
import type { CacheFlushFigures } from './cache-flush-bench.ts';

const WHOLE_GOAL_MS = 10_000;

const pass = (passed: boolean, goal: string): string => `${passed ? 'PASS' : 'MISS'} (${goal})`;

export function cacheFlushReport(figures: CacheFlushFigures): string {
  const { signIns, getSession } = figures;
  const longestAllowed = 2 * signIns.before.p99Ms;
  const seconds = (ms: number): string => (Number.isNaN(ms) ? 'never' : `${(ms / 1000).toFixed(1)} s`);
  return [
    `## The session cache lost under load (issue 46): ${figures.keysFlushed.toLocaleString('en-US')} keys deleted at once, ${figures.windowS} s either side`,
    '',
    markdownTable(
      ['figure', 'before', 'after', 'goal'],
      [
        ['sign-in p50 / p99 ms', `${formatMs(signIns.before.p50Ms)} / ${formatMs(signIns.before.p99Ms)}`, `${formatMs(signIns.after.p50Ms)} / ${formatMs(signIns.after.p99Ms)}`, ''],
        ['longest sign-in ms', formatMs(signIns.before.maxMs), formatMs(signIns.after.maxMs), pass(signIns.after.maxMs <= longestAllowed, `≤ 2 × p99 before, ${formatMs(longestAllowed)}`)],
        [
          'get-session per s; p50 / p99 ms',
          `${formatRate(getSession.before.perSecond)}; ${formatMs(getSession.before.p50Ms)} / ${formatMs(getSession.before.p99Ms)}`,
          `${formatRate(getSession.after.perSecond)}; ${formatMs(getSession.after.p50Ms)} / ${formatMs(getSession.after.p99Ms)}`,
          '',
        ],
        ['cache whole again (a new generation at the log head of the flush)', '', seconds(figures.wholeMs), pass(figures.wholeMs <= WHOLE_GOAL_MS, '≤ 10 s')],
        ['keys of the lost generation left; gone after', '', `${Number.isNaN(figures.oldKeysLeft) ? 'not counted' : figures.oldKeysLeft}; ${seconds(figures.oldKeysGoneMs)}`, pass(figures.oldKeysLeft === 0, 'none')],
        ['get-sessions not answering the session just signed in', '', String(figures.wrongAnswers), pass(figures.wrongAnswers === 0, 'none')],
        ['failed operations (whole run)', '', String(figures.failed), ''],
      ],
      new Set([1, 2]),
    ),
  ].join('\n');
}
