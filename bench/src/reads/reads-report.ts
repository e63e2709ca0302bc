import { renderTable, type Row } from '../lib/report.ts';
import { settings } from '../settings.ts';
import type { Measured, SessionFigures, SignInFigures } from './read-bench.ts';

const GOALS = {
  sessionShareOfCeiling: 0.5,
  sessionP99Ms: 10,
  signInShareOfArgon2: 0.85,
};

export function readsReport(r: {
  ceilings: readonly Measured[];
  withoutRedis?: SessionFigures | undefined;
  withRedis?: SessionFigures | undefined;
  signIn: SignInFigures;
  signInLabel: string;
}): string {
  const rate = (m: Measured | undefined): number => m?.figures.requestsPerSecond ?? Number.NaN;
  // Each variant is compared with the ceiling runs just before and after it, so slow drift in the
  // machine's load affects both sides of the ratio alike.
  const bracket = (first: number): { value: number; label: string } => {
    const pair = r.ceilings.slice(first, first + 2);
    return { value: pair.reduce((sum, m) => sum + rate(m), 0) / pair.length, label: `ceiling runs ${first + 1}-${first + pair.length}` };
  };
  const loadRow = (scenario: string, m: Measured, connections: number, extra: Partial<Row> = {}): Row => ({
    scenario,
    connections,
    rate: m.figures.requestsPerSecond,
    p50Ms: m.figures.p50Ms,
    p99Ms: m.figures.p99Ms,
    failed: m.figures.failed,
    cpuMsPerOp: m.cost.cpuMsPerOp,
    pgTransactionsPerOp: m.cost.pgTransactionsPerOp,
    ...extra,
  });
  const sessionRow = (scenario: string, m: Measured, ceiling: { value: number; label: string }, withGoal: boolean): Row => {
    const ratio = m.figures.requestsPerSecond / ceiling.value;
    const passed = ratio >= GOALS.sessionShareOfCeiling && m.figures.p99Ms < GOALS.sessionP99Ms;
    return loadRow(scenario, m, settings.connections, {
      ratio,
      ratioOf: ceiling.label,
      ...(withGoal ? { goal: { passed, text: `>= ${GOALS.sessionShareOfCeiling * 100}%, p99 < ${GOALS.sessionP99Ms} ms` } } : {}),
    });
  };

  const rows: Row[] = r.ceilings.map((m, i) => loadRow(`ceiling: bare fastify GET / (run ${i + 1})`, m, settings.connections));
  if (r.withoutRedis) {
    const noRedisCeiling = bracket(0);
    rows.push(sessionRow('get-session, no Redis, cookie', r.withoutRedis.cookie, noRedisCeiling, false));
    rows.push(sessionRow('get-session, no Redis, bearer', r.withoutRedis.bearer, noRedisCeiling, false));
  }
  if (r.withRedis) {
    const redisCeiling = bracket(1);
    rows.push(sessionRow('get-session, Redis, cookie', r.withRedis.cookie, redisCeiling, true));
    rows.push(sessionRow('get-session, Redis, bearer', r.withRedis.bearer, redisCeiling, true));
    if (r.withRedis.bearerNoRefresh) {
      rows.push(sessionRow('(diagnostic) Redis, bearer, ?disableRefresh=true', r.withRedis.bearerNoRefresh, redisCeiling, false));
    }
  }
  const { argon2First, verifyRuns, rounds } = r.signIn;
  const lanes = argon2First.concurrency;
  if (argon2First.hashesPerSecond !== undefined) rows.push({ scenario: `argon2id hash, ${lanes} lanes`, rate: argon2First.hashesPerSecond });
  verifyRuns.forEach((run, i) => {
    rows.push({ scenario: `argon2id verify, ${lanes} lanes (run ${i + 1})`, rate: run.verificationsPerSecond, cpuMsPerOp: run.verifyCpuMs });
  });
  const signInRatios = rounds.map(
    (round, i) => round.figures.requestsPerSecond / ((verifyRuns[i]!.verificationsPerSecond + verifyRuns[i + 1]!.verificationsPerSecond) / 2),
  );
  // The lower middle for an even count: a tie never rounds the figure up.
  const medianRound = [...signInRatios.keys()].sort((a, b) => signInRatios[a]! - signInRatios[b]!)[Math.floor((rounds.length - 1) / 2)]!;
  const signInRatio = signInRatios[medianRound]!;
  rounds.forEach((round, i) => {
    const judged = i === medianRound;
    rows.push(
      loadRow(`sign-in, ${r.signInLabel}, ${settings.signInUsers} users (round ${i + 1})`, round, settings.signInConnections, {
        ratio: signInRatios[i]!,
        ratioOf: `argon2 verify runs ${i + 1}-${i + 2}`,
        ...(judged
          ? { goal: { passed: signInRatio >= GOALS.signInShareOfArgon2, text: `>= ${GOALS.signInShareOfArgon2 * 100}%, median round` } }
          : {}),
      }),
    );
  });
  // The goal is judged against verification, the work a sign-in does; hashing (the words) is shown too.
  const medianRate = rounds[medianRound]!.figures.requestsPerSecond;
  const signInOfHashing = argon2First.hashesPerSecond === undefined ? null : medianRate / argon2First.hashesPerSecond;
  const signedIn = rounds.reduce((sum, round) => sum + round.figures.ok, 0);
  const pooledParts = rounds[0]!.cost.parts.map(({ part }) => ({
    part,
    cpuMsPerOp: rounds.reduce((sum, round) => sum + (round.cost.parts.find((p) => p.part === part)?.cpuMsPerOp ?? 0) * round.figures.ok, 0) / signedIn,
  }));
  const verifyAloneMs = verifyRuns.reduce((sum, run) => sum + run.verifyCpuMs, 0) / verifyRuns.length;

  const lines = [
    `## Reads (get-session, sign-in): ${settings.durationS} s per figure after ${settings.warmupS} s warm-up (sign-in: ${settings.signInWarmupS} s first, then ${settings.signInRounds} round(s)); argon2 ${settings.argon2S} s per figure`,
    '',
    renderTable(rows),
    '',
    'ratio: get-session against the mean of the ceiling runs just before and after it; each sign-in round against the mean of',
    `  the argon2 verify runs just before and after it; the sign-in goal is judged on the median of ${rounds.length} round(s).`,
    'cpu ms/op: CPU of the server side per successful request (the server process(es), their Postgres backends, and',
    '  Redis server-wide when used), from /proc: a second view of the work per request, steadier than req/s on a shared',
    '  machine but still inflated by contention and by background work when throughput is low.',
    'pg tx/op: Postgres transactions per request in the bench database (each autocommit statement is one).',
  ];
  if (signInOfHashing !== null) lines.push(`median sign-in round against the argon2 hash figure instead of verify: ${(signInOfHashing * 100).toFixed(1)}%.`);
  const parts = pooledParts.map((p) => `${p.part} ${p.cpuMsPerOp.toFixed(2)}`).join(', ');
  // The goal's ratio by CPU rather than by rate: steadier, as the ceiling's rate swings with the host between runs.
  const signInCpuMs = pooledParts.reduce((sum, p) => sum + p.cpuMsPerOp, 0);
  const byCpu = signInCpuMs > 0 ? `, ${((verifyAloneMs / signInCpuMs) * 100).toFixed(1)}% of a sign-in's` : '';
  if (parts) lines.push(`sign-in cpu ms/op by part, all rounds: ${parts} (argon2 verify alone: ${verifyAloneMs.toFixed(2)}${byCpu}).`);
  lines.push("Latencies are autocannon's, truncated to whole ms.");
  return lines.join('\n');
}
