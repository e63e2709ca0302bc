import { describeFailures } from '../lib/closed-loop.ts';
import { formatMs as fmtMs, formatRate as fmtRate, markdownTable } from '../lib/report.ts';
import { settings } from '../settings.ts';
import type { LargeOrganizationFigures, StreamFigures } from './stream-bench.ts';

const GOALS = {
  /** Commands/s on the long streams within this share of the fresh stream's, both ways. */
  streamLengthShare: 0.8,
  /** 32 writers on one stream: at least this share of one writer's rate, with no non-2xx. */
  sharedWritersShare: 0.5,
  largeOrganizationP99Ms: 50,
};

export function streamsReport(figures: readonly StreamFigures[], large: LargeOrganizationFigures): string {
  const fresh = figures.filter((f) => f.writers === 1 && f.label.startsWith('fresh'));
  const freshRate = fresh.reduce((sum, f) => sum + f.loop.opsPerSecond, 0) / fresh.length;
  const header = ['session stream', 'writers', 'events at start', 'commands', 'commands/s', 'p50 ms', 'p99 ms', 'first ms', 'non-2xx', 'events per command', 'of fresh', 'goal'];
  const cells = figures.map((f) => {
    const share = f.loop.opsPerSecond / freshRate;
    let goal = '';
    if (f.writers > 1) {
      const passed = share >= GOALS.sharedWritersShare && f.loop.failed === 0;
      goal = `${passed ? 'PASS' : 'MISS'} (>= ${GOALS.sharedWritersShare * 100}% of fresh, no non-2xx)`;
    } else if (!f.label.startsWith('fresh')) {
      const passed = share >= GOALS.streamLengthShare && share <= 1 / GOALS.streamLengthShare;
      goal = `${passed ? 'PASS' : 'MISS'} (within 20% of fresh)`;
    }
    return [
      f.label,
      String(f.writers),
      f.eventsAtStart.toLocaleString('en-US'),
      `${f.loop.ok + f.loop.failed} in ${f.loop.windowS.toFixed(1)} s`,
      `${fmtRate(f.loop.opsPerSecond)}${f.loop.cutShort ? '*' : ''}`,
      fmtMs(f.loop.latency.p50Ms),
      fmtMs(f.loop.latency.p99Ms),
      fmtMs(f.loop.firstMs),
      describeFailures(f.loop),
      f.appendedPerCommand.toFixed(2),
      f.label.startsWith('fresh') && f.writers === 1 ? '' : `${(share * 100).toFixed(1)}%`,
      goal,
    ];
  });
  const invite = large.loop.steps.get('invite');
  const accept = large.loop.steps.get('accept');
  const largePassed = large.loop.latency.p99Ms < GOALS.largeOrganizationP99Ms && large.loop.failed === 0;
  const largeTable = markdownTable(
    ['organization', 'pairs', 'pairs/s', 'p50 ms', 'p99 ms', 'max ms', 'first ms', 'invite p50 / p99', 'accept p50 / p99', 'non-2xx', 'goal'],
    [
      [
        `${large.members.toLocaleString('en-US')} members`,
        `${large.loop.ok + large.loop.failed} in ${large.loop.windowS.toFixed(1)} s`,
        `${fmtRate(large.loop.opsPerSecond)}${large.loop.cutShort ? '*' : ''}`,
        fmtMs(large.loop.latency.p50Ms),
        fmtMs(large.loop.latency.p99Ms),
        fmtMs(large.loop.latency.maxMs),
        fmtMs(large.loop.firstMs),
        invite ? `${fmtMs(invite.p50Ms)} / ${fmtMs(invite.p99Ms)}` : '',
        accept ? `${fmtMs(accept.p50Ms)} / ${fmtMs(accept.p99Ms)}` : '',
        describeFailures(large.loop),
        `${largePassed ? 'PASS' : 'MISS'} (pair p99 < ${GOALS.largeOrganizationP99Ms} ms, no non-2xx)`,
      ],
    ],
    new Set([1, 2, 3, 4, 5, 6, 7, 8, 9]),
  );
  return [
    `## Streams (issue 22, Portcullis only): set-active toggling through HTTP, ${settings.warmupS} s warm-up then ${settings.durationS} s per figure`,
    '',
    markdownTable(header, cells, new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])),
    '',
    'The long streams were written to the log beforehand as the api writes set-active (session.active_organization_changed.v1),',
    '  and measured once every read model had applied them. first ms: the first command on that stream, before anything was',
    '  warm. events per command: what the stream gained over the run per 2xx (a command that finds the session already as',
    '  asked appends nothing). of fresh: against the mean of the two fresh streams, measured before and after the long ones.',
    '  A window that held fewer than 10 commands (3 pairs below) stayed open until it did, or for at most 120 s (240 s).',
    '',
    `invite + accept on one organization (its members written to the log as add-member writes them), one client:`,
    '',
    largeTable,
    '',
    'first ms: the first pair, which folds the organization stream the bench wrote without snapshots; a pair sent in the',
    '  warm-up is not counted, so a first pair slower than the warm-up leaves pairs/s to the rest of the window.',
  ].join('\n');
}
