import os from 'node:os';
import { describeFailures, type Percentiles } from '../lib/closed-loop.ts';
import { formatMs, formatRate, markdownTable } from '../lib/report.ts';
import { settings } from '../settings.ts';
import type { ScenarioFigures } from './write-bench.ts';

/** CPU and median wall time of one verify + hash pair, each server's algorithm alone. */
export interface HashCost {
  readonly argon2id: { readonly cpuMs: number; readonly wallMs: number };
  readonly scrypt: { readonly cpuMs: number; readonly wallMs: number };
}

const fmtRate = formatRate;
const fmtMs = formatMs;
const fmtCpu = (n: number | null): string => (n === null ? '' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const nonSuccess = (f: ScenarioFigures): string => describeFailures(f.loop);
const rate = (f: ScenarioFigures): string => `${fmtRate(f.loop.opsPerSecond)}${f.loop.cutShort ? '*' : ''}`;
const freshness = (f: ScenarioFigures | undefined): string =>
  f === undefined ? '' : `${f.readYourWrites.stale}/${f.readYourWrites.fresh + f.readYourWrites.stale}${f.readYourWrites.failed ? ` (${f.readYourWrites.failed} failed)` : ''}`;

/** Issue 23's goal: at or above better-auth's throughput, p50 and p99 at or below its latency. */
function judge(ours: ScenarioFigures, theirs: ScenarioFigures): string {
  const misses = [
    ours.loop.opsPerSecond < theirs.loop.opsPerSecond ? 'ops/s' : null,
    ours.loop.latency.p50Ms > theirs.loop.latency.p50Ms ? 'p50' : null,
    ours.loop.latency.p99Ms > theirs.loop.latency.p99Ms ? 'p99' : null,
    ours.loop.failed > 0 ? 'non-2xx' : null,
    ours.readYourWrites.stale > 0 ? 'read-your-writes' : null,
  ].filter((m) => m !== null);
  return misses.length === 0 ? 'PASS' : `MISS (${misses.join(', ')})`;
}

interface Pair {
  readonly name: string;
  readonly key: string;
  readonly clients: number;
  readonly ours: ScenarioFigures;
  readonly theirs: ScenarioFigures;
}

function pairs(results: readonly ScenarioFigures[]): Pair[] {
  const out: Pair[] = [];
  for (const ours of results.filter((r) => r.server === 'Portcullis')) {
    const theirs = results.find((r) => r.server === 'better-auth' && r.scenario === ours.scenario && r.clients === ours.clients);
    if (theirs) out.push({ name: ours.scenario.name, key: ours.scenario.key, clients: ours.clients, ours, theirs });
  }
  return out;
}

function mainTable(all: readonly Pair[]): string {
  const header = [
    'scenario', 'clients',
    'Portcullis ops/s', 'p50 ms', 'p99 ms', 'non-2xx', 'cpu ms/op',
    'better-auth ops/s', 'p50 ms', 'p99 ms', 'non-2xx', 'cpu ms/op',
    'goal', 'stale reads (P / b-a)',
  ];
  const cells = all.map((p) => [
    p.name,
    String(p.clients),
    rate(p.ours), fmtMs(p.ours.loop.latency.p50Ms), fmtMs(p.ours.loop.latency.p99Ms), nonSuccess(p.ours), fmtCpu(p.ours.cost.cpuMsPerOp),
    rate(p.theirs), fmtMs(p.theirs.loop.latency.p50Ms), fmtMs(p.theirs.loop.latency.p99Ms), nonSuccess(p.theirs), fmtCpu(p.theirs.cost.cpuMsPerOp),
    p.key === 'change-password' ? 'hashes: below' : judge(p.ours, p.theirs),
    `${freshness(p.ours)} / ${freshness(p.theirs)}`,
  ]);
  return markdownTable(header, cells, new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]));
}

const steps = (figures: Percentiles | undefined): string => (figures ? `${fmtMs(figures.p50Ms)} / ${fmtMs(figures.p99Ms)}` : '');

function inviteStepsTable(all: readonly Pair[]): string {
  const header = ['clients', 'Portcullis invite p50 / p99', 'accept p50 / p99', 'better-auth invite p50 / p99', 'accept p50 / p99'];
  const cells = all
    .filter((p) => p.key === 'invite-accept')
    .map((p) => [
      String(p.clients),
      steps(p.ours.loop.steps.get('invite')),
      steps(p.ours.loop.steps.get('accept')),
      steps(p.theirs.loop.steps.get('invite')),
      steps(p.theirs.loop.steps.get('accept')),
    ]);
  return markdownTable(header, cells, new Set([0, 1, 2, 3, 4]));
}

/**
 * A change of password without its two hashes, estimated the same way for both servers. Both hash on
 * libuv's threadpool (argon2's native binding, node's scrypt), so the CPU of the hashing process's threads
 * other than its main one, read per thread from /proc over the same window, is the hashing (with V8's
 * garbage-collection helpers, under 1% of a process's CPU when last measured): taken off the server side's
 * CPU per change, what is left, spread over the cores, is the rate the CPU would allow if hashing were
 * free. At one client the changes run one after another, so the same hashing CPU comes off p50 and p99:
 * a hash takes at least its CPU time in wall time, so what is left is at most the latency without it. With
 * more clients the time is queueing for the cores, which no subtraction undoes. The pair's cost measured
 * alone, in a process of its own, is shown beside as a check on the threads' figure.
 */
function changePasswordTable(all: readonly Pair[], hash: HashCost): string {
  const cores = os.availableParallelism();
  const header = [
    'clients', 'server', 'ops/s', 'p50 ms', 'p99 ms', 'cpu ms/op', 'hashing threads', 'pair alone', 'cpu ms/op without', 'ops/s without', 'p50 / p99 without, at most', 'goal',
  ];
  const cells: string[][] = [];
  for (const p of all.filter((pair) => pair.key === 'change-password')) {
    const estimate = (f: ScenarioFigures) => {
      const hashing = f.cost.parts.find((part) => part.part === `${f.hashingProcess} other threads`)?.cpuMsPerOp ?? Number.NaN;
      const withoutCpu = f.cost.cpuMsPerOp === null ? Number.NaN : f.cost.cpuMsPerOp - hashing;
      const latency = p.clients === 1 ? { p50: f.loop.latency.p50Ms - hashing, p99: f.loop.latency.p99Ms - hashing } : { p50: Number.NaN, p99: Number.NaN };
      return { hashing, withoutCpu, capacity: (cores * 1000) / withoutCpu, latency };
    };
    const ours = estimate(p.ours);
    const theirs = estimate(p.theirs);
    const misses = [
      !(ours.capacity >= theirs.capacity) ? 'ops/s' : null,
      ours.latency.p50 > theirs.latency.p50 ? 'p50' : null,
      ours.latency.p99 > theirs.latency.p99 ? 'p99' : null,
      p.ours.loop.failed > 0 ? 'non-2xx' : null,
    ].filter((m) => m !== null);
    const verdict = misses.length === 0 ? 'PASS' : `MISS (${misses.join(', ')})`;
    for (const [f, e, alone, goal] of [
      [p.ours, ours, hash.argon2id, verdict],
      [p.theirs, theirs, hash.scrypt, ''],
    ] as const) {
      cells.push([
        String(p.clients),
        f.server,
        rate(f),
        fmtMs(f.loop.latency.p50Ms),
        fmtMs(f.loop.latency.p99Ms),
        fmtCpu(f.cost.cpuMsPerOp),
        fmtCpu(Number.isNaN(e.hashing) ? null : e.hashing),
        fmtCpu(alone.cpuMs),
        fmtCpu(Number.isNaN(e.withoutCpu) ? null : e.withoutCpu),
        fmtRate(e.capacity),
        p.clients === 1 ? `${fmtMs(e.latency.p50)} / ${fmtMs(e.latency.p99)}` : '',
        goal,
      ]);
    }
  }
  return markdownTable(header, cells, new Set([0, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
}

export function writesReport(results: readonly ScenarioFigures[], hash: HashCost | undefined): string {
  const all = pairs(results);
  const lines = [
    `## Writes: Portcullis against better-auth 1.7, ${settings.warmupS} s warm-up then ${settings.durationS} s per figure (change-password ${settings.changePasswordDurationS} s), closed loop`,
    '',
    mainTable(all),
    '',
    'ops/s: operations completed in the window, per second (* the window ended early: a client ran out of prepared work). An',
    '  invite + accept is one operation of two requests. Latencies in ms, exact (not bucketed). non-2xx counts failed',
    '  operations, no answer included. cpu ms/op: the server side (processes, their Postgres backends, Redis server-wide).',
    `stale reads: after each window, every client made ${settings.readYourWritesChecks} more write(s) (change-password: 1), each read back at`,
    '  once (get-session; get-full-organization by slug; the invitee\'s get-active-member; a sign-in with the new',
    '  password): reads that did not show the write / reads made.',
    'goal (issue 23): Portcullis ops/s >= better-auth\'s, p50 and p99 <= better-auth\'s, no non-2xx, no stale read.',
  ];
  if (all.some((p) => p.key === 'invite-accept')) lines.push('', 'invite + accept by request (ms):', '', inviteStepsTable(all));
  if (hash && all.some((p) => p.key === 'change-password')) {
    lines.push(
      '',
      `change-password without its two hashes (verify the current password, hash the new one), cpu in ms per change; one pair alone:`,
      `argon2id ${fmtCpu(hash.argon2id.cpuMs)} ms of CPU (${fmtMs(hash.argon2id.wallMs)} ms wall), scrypt ${fmtCpu(hash.scrypt.cpuMs)} ms (${fmtMs(hash.scrypt.wallMs)} ms wall):`,
      '',
      changePasswordTable(all, hash),
      '',
      'hashing threads: the CPU per change of the hashing process\'s threads besides its main one (libuv\'s threadpool, where',
      '  both hash; V8\'s GC helpers too); pair alone: the same two hashes in a process of their own, as a check. without:',
      '  cpu ms/op less the hashing threads\'; ops/s without = cores ÷ that (what the CPU would allow if hashing were free);',
      '  at 1 client the hashing threads\' CPU taken off p50 and p99 (a hash takes at least its CPU in wall time, so these',
      '  are upper bounds). Goal: ops/s without >= better-auth\'s, and at 1 client p50 / p99 without <= better-auth\'s.',
    );
  }
  return lines.join('\n');
}
