import type { AppendCeiling, CostsFile, OperationCost } from '../costs/costs-file.ts';

/**
 * docs/capacity.md, written from bench/results/costs.json: what the targets below need, each figure with its
 * arithmetic. Pure: `npm run capacity` writes what `capacityPage` answers, and a unit spec checks that the
 * committed page is exactly that, so the page and the measured costs cannot drift apart.
 */

/** What is planned for, and the assumptions the costs file cannot measure, each named in the page. */
export const plan = {
  getSessionsPerSecond: 1_000_000,
  signInsPerSecond: 10_000,
  sessions: 100_000_000,
  /** Sign-ups, each with a verification mail: a tenth of the sign-ins (an assumption, no target names it). */
  signUpsPerSecond: 1_000,
  /** Share of a core a process is planned to use: headroom for bursts, GC and a lost node. */
  utilisation: 0.7,
  /** Memory a Redis shard is planned to hold (the data set, before replicas). */
  redisShardBytes: 25e9,
  /** One SMTP delivery's round trip to a real relay (the bench's sink is on loopback). */
  relaySeconds: 0.1,
  /** A commit's flush where the costs file has none measured. */
  assumedCommitMs: 1,
  /** MAILER_CONCURRENCY's default, and Kafka topics' partitions unless told (defaultMailTopicPartitions). */
  mailerConcurrency: 4,
  defaultPartitions: 6,
} as const;

export type Plan = typeof plan;

/** CPU cores for `opsPerSecond` operations of `cpuMsPerOp` each, at `utilisation` of every core. */
export function coresFor(cpuMsPerOp: number, opsPerSecond: number, utilisation: number): number {
  return (cpuMsPerOp * opsPerSecond) / 1000 / utilisation;
}

/** A per-operation figure at a rate: per second. */
export function perSecond(perOp: number, opsPerSecond: number): number {
  return perOp * opsPerSecond;
}

export const SECONDS_A_DAY = 86_400;

export function perDay(perSecondFigure: number): number {
  return perSecondFigure * SECONDS_A_DAY;
}

/** Shards holding `bytes` at `shardBytes` each, at least one. */
export function shardsFor(bytes: number, shardBytes: number): number {
  return Math.max(1, Math.ceil(bytes / shardBytes));
}

/**
 * Partitions for `jobsPerSecond` when each partition's consumer handles one job at a time (kafkajs' default,
 * as the mail bus runs it) and a job takes `secondsPerJob`: Little's law, jobs in flight = rate × time.
 */
export function partitionsFor(jobsPerSecond: number, secondsPerJob: number): number {
  return Math.max(1, Math.ceil(jobsPerSecond * secondsPerJob));
}

/** The highest append rate measured: the log's ceiling on the host that ran the bench. */
export function appendCeiling(ceilings: readonly AppendCeiling[], eventsPerAppend = 1): AppendCeiling {
  const matching = ceilings.filter((c) => c.eventsPerAppend === eventsPerAppend);
  if (matching.length === 0) throw new Error(`the costs file has no append ceiling at ${eventsPerAppend} event(s) an append`);
  return matching.reduce((best, c) => (c.appendsPerSecond > best.appendsPerSecond ? c : best));
}

/** `1234567.8` → `1,234,568`; below 10 with `digits` significant figures. */
export function formatNumber(n: number, digits = 3): string {
  if (!Number.isFinite(n)) return String(n);
  if (n === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(n)));
  const decimals = Math.max(0, digits - 1 - magnitude);
  const rounded = Number(n.toFixed(Math.min(decimals, 6)));
  return rounded.toLocaleString('en-US', { maximumFractionDigits: Math.min(decimals, 6), minimumFractionDigits: 0 });
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${formatNumber(value)} ${units[unit]}`;
}

const f = formatNumber;

interface Load {
  readonly label: string;
  readonly rate: number;
  readonly op: OperationCost;
}

/** The figures of one load, each with its arithmetic. */
export interface LoadNeeds {
  readonly apiCores: number;
  readonly projectorCores: number;
  readonly mailerCores: number;
  readonly postgresCores: number;
  readonly redisCores: number;
  readonly transactionsPerSecond: number;
  readonly walBytesPerSecond: number;
  readonly logBytesPerDay: number;
  readonly appendsPerSecond: number;
  readonly redisCommandsPerSecond: number;
}

export function needsOf(op: OperationCost, rate: number, utilisation: number): LoadNeeds {
  const c = op.cpuMsPerOp;
  return {
    apiCores: coresFor(c.api, rate, utilisation),
    projectorCores: coresFor(c.projector, rate, utilisation),
    mailerCores: coresFor(c.mailer, rate, utilisation),
    postgresCores: coresFor(c.postgres, rate, utilisation),
    redisCores: coresFor(c.redis, rate, utilisation),
    transactionsPerSecond: perSecond(op.pgTransactionsPerOp, rate),
    walBytesPerSecond: perSecond(op.walBytesPerOp, rate),
    logBytesPerDay: perDay(perSecond(op.logBytesPerOp, rate)),
    appendsPerSecond: perSecond(op.appendsPerOp, rate),
    redisCommandsPerSecond: perSecond(op.redisCommandsPerOp, rate),
  };
}

function loadSection(load: Load, p: Plan): string[] {
  const { op, rate } = load;
  const n = needsOf(op, rate, p.utilisation);
  const c = op.cpuMsPerOp;
  const u = p.utilisation;
  const cores = (ms: number, result: number): string => `${f(ms)} ms × ${f(rate)}/s ÷ 1000 ÷ ${u} = **${f(result)}**`;
  return [
    `### ${load.label}`,
    '',
    `From the \`${op.name}\` row: ${f(op.ops)} operations in ${f(op.windowS)} s at ${f(op.clients)} clients.`,
    '',
    '| need | arithmetic |',
    '|---|---|',
    `| api cores | ${cores(c.api, n.apiCores)} (main thread ${f(c.apiMainThread)} ms of it) |`,
    `| projector cores | ${cores(c.projector, n.projectorCores)} |`,
    ...(c.mailer > 0 && op.mailsPerOp > 0 ? [`| mailer cores | ${cores(c.mailer, n.mailerCores)} |`] : []),
    `| Postgres cores | ${cores(c.postgres, n.postgresCores)} |`,
    `| Postgres transactions/s | ${f(op.pgTransactionsPerOp)} × ${f(rate)}/s = **${f(n.transactionsPerSecond)}** |`,
    `| WAL | ${f(op.walBytesPerOp)} B × ${f(rate)}/s = **${formatBytes(n.walBytesPerSecond)}/s** |`,
    `| the log's disk a day | ${f(op.logBytesPerOp)} B × ${f(rate)}/s × 86,400 s = **${formatBytes(n.logBytesPerDay)}** |`,
    `| appends/s | ${f(op.appendsPerOp)} × ${f(rate)}/s = **${f(n.appendsPerSecond)}** |`,
    `| Redis commands/s | ${f(op.redisCommandsPerOp)} × ${f(rate)}/s = **${f(n.redisCommandsPerSecond)}**; Redis cores ${cores(c.redis, n.redisCores)} |`,
    '',
  ];
}

function costsTable(file: CostsFile): string[] {
  const rows = Object.values(file.operations).map((op) => {
    const c = op.cpuMsPerOp;
    return `| ${op.name} | ${f(op.opsPerSecond)} | ${[c.api, c.apiMainThread, c.projector, c.mailer, c.postgres, c.redis].map((v) => f(v)).join(' | ')} | ${f(op.pgTransactionsPerOp)} | ${f(op.walBytesPerOp)} | ${f(op.appendsPerOp)} / ${f(op.eventsPerOp)} | ${f(op.logBytesPerOp)} | ${f(op.redisCommandsPerOp)} | ${f(op.mailsPerOp)} |`;
  });
  return [
    '| operation | ops/s here | api | (main thread) | projector | mailer | Postgres | Redis | Postgres xacts | WAL bytes | appends / events | log bytes | Redis commands | mails |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ];
}

/** The whole page. */
export function capacityPage(file: CostsFile, p: Plan = plan): string {
  const ops = file.operations;
  const signIn = ops['sign-in'];
  const signUp = ops['sign-up'];
  const getSession = ops['get-session-bearer'].cpuMsPerOp.total <= ops['get-session-cookie'].cpuMsPerOp.total ? ops['get-session-bearer'] : ops['get-session-cookie'];
  const otherGetSession = getSession === ops['get-session-bearer'] ? ops['get-session-cookie'] : ops['get-session-bearer'];
  const ceiling = appendCeiling(file.appendCeiling);
  const batched = file.appendCeiling.filter((c) => c.eventsPerAppend > 1).reduce<AppendCeiling | null>((best, c) => (best && best.eventsPerSecond >= c.eventsPerSecond ? best : c), null);
  const signInNeeds = needsOf(signIn, p.signInsPerSecond, p.utilisation);
  const argon2Cores = coresFor(file.argon2.verifyCpuMs, p.signInsPerSecond, p.utilisation);
  const hashMs = signIn.cpuMsPerOp.api - signIn.cpuMsPerOp.apiMainThread;
  const hashCores = coresFor(hashMs, p.signInsPerSecond, p.utilisation);
  const holdMs = 1000 / ceiling.appendsPerSecond;
  const single = file.appendCeiling.find((c) => c.connections === 1 && c.eventsPerAppend === 1) ?? ceiling;
  const fastBound = 1000 / (single.postgresCpuMsPerAppend + 0.1);
  const batchedBase = batched ? file.appendCeiling.find((c) => c.eventsPerAppend === 1 && c.connections === batched.connections) : undefined;
  const ceilingLogs = Math.ceil(signInNeeds.appendsPerSecond / ceiling.appendsPerSecond);
  const mem = file.sessionMemory;
  const redisBytes = mem.redisUsedMemoryPerSession * p.sessions;
  const shards = shardsFor(redisBytes, p.redisShardBytes);
  const readModelBytes = mem.readModelBytesPerSession * p.sessions;
  const mailsPerSecond = perSecond(signUp.mailsPerOp, p.signUpsPerSecond);
  const commitMs = file.diskFlush?.msPerFlush ?? p.assumedCommitMs;
  const partitions = partitionsFor(mailsPerSecond, commitMs / 1000);
  const inFlight = partitionsFor(mailsPerSecond, p.relaySeconds);
  const mailersAtDefault = Math.ceil(inFlight / p.mailerConcurrency);
  const mailersAtMost = Math.ceil(inFlight / 64);
  const mailerMsPerMail = signUp.cpuMsPerOp.mailer / Math.max(signUp.mailsPerOp, 1e-9);
  const mailerCores = coresFor(mailerMsPerMail, mailsPerSecond, p.utilisation);
  const host = file.host;

  return [
    '# Capacity on paper',
    '',
    '<!-- Written by `npm run capacity` from bench/results/costs.json; a unit spec fails while they differ. Do not edit by hand. -->',
    '',
    `What ${f(p.getSessionsPerSecond)} get-sessions a second, ${f(p.signInsPerSecond)} sign-ins a second and ${f(p.sessions)} live sessions`,
    'would need, scaled by arithmetic from what one of each key operation costs the server side. The costs come from',
    '`BENCH_ONLY=costs npm run bench` (bench/README.md), which rewrites bench/results/costs.json; `npm run capacity`',
    'then rewrites this page. Costs per operation scale; operations per second on a shared host do not, so the',
    '"ops/s here" column says only how many operations each figure rests on.',
    '',
    `Measured ${file.measuredAt.slice(0, 10)} at \`${file.commit}\`: ${host.cores} cores (${host.cpu}), Node ${host.node}, Postgres ${host.postgres}`,
    `(synchronous_commit ${host.synchronousCommit}), Redis ${host.redis}; load average ${host.loadAverageBefore.join(' ')} before and ${host.loadAverageAfter.join(' ')} after;`,
    `${host.note}. Windows of ${file.settings.durationS} s after ${file.settings.warmupS} s of warm-up: short, on a busy host, so every figure`,
    'here is rough (within tens of percent), and a quiet host with longer windows would make them firmer. What no',
    'process does without load (heartbeats, polls, minute figures) was measured first with no load and is taken off.',
    '',
    '## Assumptions',
    '',
    `- Every process is planned at ${p.utilisation * 100}% of its cores (headroom for bursts, GC and a lost node).`,
    `- Sign-ups run at ${f(p.signUpsPerSecond)} a second, each with its verification mail; a real relay takes ${p.relaySeconds * 1000} ms a delivery.`,
    `- A Redis shard holds ${formatBytes(p.redisShardBytes)} of data (replicas come on top).`,
    '- The hardware is this host\'s: a faster core or disk moves every figure, and the disk\'s flush time moves the append ceiling most.',
    '',
    '## Costs per operation',
    '',
    'CPU in milliseconds per operation by process (api all threads, its main thread apart; the Postgres backends of',
    'the bench database; Redis, a private server), Postgres transactions, WAL bytes of the bench database\'s records',
    '(pg_walinspect; the server\'s whole WAL is in the costs file), appends and events written, growth of the `events`',
    'table with its indexes, Redis commands (INFO commandstats) and mails delivered. The WAL includes the full-page',
    'images written on a page\'s first change after each checkpoint; a server shared with other work checkpoints',
    'often, so they weigh more here than on a server of its own.',
    '',
    ...costsTable(file),
    '',
    `argon2id on this host: ${f(file.argon2.verifyCpuMs)} ms of CPU a verification, ${f(file.argon2.verificationsPerSecond)} verifications a second on ${file.argon2.concurrency} lanes.`,
    '',
    `## ${f(p.getSessionsPerSecond)} get-sessions a second`,
    '',
    `The cheaper of cookie and bearer (\`${getSession.name}\`, ${f(getSession.cpuMsPerOp.total)} ms in all against ${f(otherGetSession.cpuMsPerOp.total)}): both do the`,
    'same work but for the header the token comes in, and what else runs on a busy host can only add to a figure',
    '(a process descheduled mid-request, caches gone cold), never take from it. With Redis the api answers most',
    'from its in-process cache, kept current by Redis invalidations, so Redis and Postgres see almost none of them.',
    '',
    ...loadSection({ label: 'needs', rate: p.getSessionsPerSecond, op: getSession }, p).slice(2),
    `## ${f(p.signInsPerSecond)} sign-ins a second`,
    '',
    ...loadSection({ label: 'needs', rate: p.signInsPerSecond, op: signIn }, p).slice(2),
    '**argon2 dominates sign-in.** A sign-in verifies one argon2id hash on the api\'s threadpool. Of the api\'s',
    `${f(signIn.cpuMsPerOp.api)} ms a sign-in, its main thread took ${f(signIn.cpuMsPerOp.apiMainThread)} ms and its other threads (the hash, and GC\'s helpers) ${f(hashMs)} ms:`,
    `${f(hashMs)} ms × ${f(p.signInsPerSecond)}/s ÷ 1000 ÷ ${p.utilisation} = **${f(hashCores)} cores** for the hashes, ${f((hashMs / Math.max(signIn.cpuMsPerOp.total, 1e-9)) * 100)}% of all the CPU a sign-in`,
    `costs (${f(signIn.cpuMsPerOp.total)} ms across the processes). argon2id measured apart (${f(file.argon2.verifyCpuMs)} ms a verification) gives`,
    `${f(argon2Cores)} cores. Cheaper parameters trade`,
    'away resistance to offline guessing; the other lever is hardware (argon2id is memory-hard, so more cores and',
    'memory bandwidth, not a faster single core).',
    '',
    `## ${f(p.sessions)} sessions`,
    '',
    '| need | arithmetic |',
    '|---|---|',
    `| Redis memory | ${f(mem.redisUsedMemoryPerSession)} B a session (used_memory's growth over ${f(mem.sessions)} cached sessions; MEMORY USAGE of their keys: ${f(mem.redisKeyBytesPerSession)} B) × ${f(p.sessions)} = **${formatBytes(redisBytes)}** |`,
    `| Redis shards | ${formatBytes(redisBytes)} ÷ ${formatBytes(p.redisShardBytes)} a shard = **${f(shards)}**, if the cache could spread (below) |`,
    `| Postgres \`session\` read model | ${f(mem.readModelBytesPerSession)} B a session (table and indexes) × ${f(p.sessions)} = **${formatBytes(readModelBytes)}** |`,
    '',
    'The session cache cannot spread over a Redis Cluster as it is: every key of a generation carries one hash tag,',
    '`{sc:<log>:<generation>}` (services/platform/src/cache/session-cache-layout.ts), so that the script applying a',
    'batch touches one node, and so a whole generation lives on one shard. Past one node\'s memory the layout needs a',
    'tag per slice of sessions (the token hash\'s first bits in the tag, one generation pointer for all) and a batch',
    'split by slice.',
    '',
    '## Mail: Kafka partitions',
    '',
    'A mailer consumes a job from Kafka by writing it to its delivery log (one Postgres insert and commit: what',
    '`handle` does in services/mailer/src/main.ts), then delivers from that log with `MAILER_CONCURRENCY` deliveries',
    'at once, each waiting on the relay. kafkajs hands a consumer one message at a time (`partitionsConsumedConcurrently`',
    'is left at its default, 1, in services/platform/src/bus/kafka.ts), so partitions bound the consuming, and',
    'mailers times their concurrency bound the delivering. Both by Little\'s law: in flight = rate × time each.',
    '',
    '| need | arithmetic |',
    '|---|---|',
    `| mail jobs/s | ${f(signUp.mailsPerOp)} mail a sign-up × ${f(p.signUpsPerSecond)} sign-ups/s = **${f(mailsPerSecond)}** |`,
    `| partitions (and mailers consuming) | ${f(mailsPerSecond)}/s × ${f(commitMs)} ms a commit${file.diskFlush ? ' (the disk flush measured below)' : ' (assumed)'} = **${f(partitions)}** at once (each topic has ${p.defaultPartitions} by default) |`,
    `| deliveries in flight | ${f(mailsPerSecond)}/s × ${p.relaySeconds} s a delivery = **${f(inFlight)}**: ${f(mailersAtDefault)} mailers at \`MAILER_CONCURRENCY\` ${p.mailerConcurrency}, ${f(mailersAtMost)} at its most (64) |`,
    `| mailer cores | ${f(mailerMsPerMail)} ms a mail × ${f(mailsPerSecond)}/s ÷ 1000 ÷ ${p.utilisation} = **${f(mailerCores)}** |`,
    '',
    `A mailer\'s JavaScript runs on one core, so the cores make it at least ${f(Math.max(mailersAtMost, Math.ceil(mailerCores)))} mailers, whatever their concurrency.`,
    'Jobs are keyed by recipient (the user id), so one user\'s mails keep their order on one partition: more',
    'partitions spread users, never split one. The costs group\'s mailer reads its jobs from the log (no',
    '`KAFKA_BROKERS`); its CPU a mail stands in for the Kafka consumer\'s.',
    '',
    '## The first bottleneck: the log\'s single append lock',
    '',
    'Every command appends through one Postgres function, `portcullis_append` (services/platform/migrations,',
    'latest in `1732230000130_append-notice-says-appends-under-way.sql`; called by',
    'services/platform/src/event-store/postgres.ts as one prepared statement). Its first statement is',
    '`SELECT position + n, hash FROM event_log_head FOR UPDATE`: a row lock on the log\'s one head row, held until the',
    'transaction ends. Under it the function checks each stream\'s expected version, extends the hash chain (each',
    'event\'s hash is the SHA-256 of the previous hash and the event), inserts the events, moves the head and sends',
    'the NOTIFY carrying them. Postgres releases the lock only once the commit record is flushed',
    `(synchronous_commit ${host.synchronousCommit}), so appends run one at a time, each paying the function and a WAL flush: the log\'s`,
    'order is its commit order, which is what lets a follower read position n + 1 knowing n is there. A NOTIFY',
    'also serialises commits (Postgres takes one lock on the notification queue from before commit to after it).',
    '',
    '| connections | events an append | appends/s | events/s | p50 ms | Postgres CPU ms an append | WAL bytes an append |',
    '|--:|--:|--:|--:|--:|--:|--:|',
    ...file.appendCeiling.map(
      (c) => `| ${c.connections} | ${c.eventsPerAppend} | ${f(c.appendsPerSecond)} | ${f(c.eventsPerSecond)} | ${f(c.p50Ms)} | ${f(c.postgresCpuMsPerAppend)} | ${f(c.walBytesPerAppend)} |`,
    ),
    '',
    `Appends straight through the Postgres adapter on a database of their own, a sign-in\'s event in each. The most`,
    `measured here is **${f(ceiling.appendsPerSecond)} appends a second** (at ${f(ceiling.connections)} connections): one append every ${f(holdMs)} ms.`,
    `The lock is held for the function\'s work, about the Postgres CPU of an append at one connection (${f(single.postgresCpuMsPerAppend)} ms),`,
    `and the commit\'s flush${file.diskFlush ? ` (${file.diskFlush.method} of an 8 kB write took ${f(file.diskFlush.msPerFlush)} ms in ${file.diskFlush.directory} by pg_test_fsync, measured apart, on a disk other work shares)` : ''}:`,
    'the flush is most of each append\'s turn, and more connections only queue for it (their p50 grows with them).',
    `${f(p.signInsPerSecond)} sign-ins a second need ${f(signIn.appendsPerOp)} × ${f(p.signInsPerSecond)} = ${f(signInNeeds.appendsPerSecond)} appends a second: ${f(signInNeeds.appendsPerSecond / ceiling.appendsPerSecond)} times the`,
    `measured ceiling (a log split ${f(ceilingLogs)} ways here). A database server whose flush takes a tenth of a millisecond`,
    `(NVMe with power-loss protection) would hold the lock about ${f(single.postgresCpuMsPerAppend)} + 0.1 ms an append, 1000 ÷ ${f(single.postgresCpuMsPerAppend + 0.1)} = ${f(fastBound)}`,
    'appends a second, more on cores of its own: still far short of the target, and no server added moves it. The',
    'api\'s hundreds of cores above come by adding processes; the log\'s appends do not: the lock is the first bottleneck.',
    ...(batched
      ? [`${f(batched.eventsPerAppend)} events an append reached ${f(batched.eventsPerSecond)} events a second against ${f(batchedBase?.eventsPerSecond ?? 0)} at one event and the same ${f(batched.connections)} connections: the lock is paid per append, not per event.`]
      : []),
    '',
    'What moves it:',
    '',
    '- **Batching appends** (one transaction for the appends of many concurrent commands, each keeping its own',
    '  expected versions): the lock and the flush are paid once a batch. It needs a refused version in one command',
    '  not to fail the others (a retry of the rest), and it adds a batch\'s wait to every write\'s latency.',
    '- **KurrentDB** (the adapter in services/platform/src/event-store/kurrentdb.ts, behind `EVENTSTORE_URL`: taken',
    '  by every process, all of which read the log through the port): a',
    '  node also writes its log in one order through one writer, but it flushes many concurrent writes at once, so',
    '  the ceiling becomes the writer\'s throughput rather than one flush per append; it is still one leader, so the',
    '  log scales up, not out.',
    '- **Partitioning the log** (by user, say: N logs, each with its own head row and hash chain): N times the',
    '  ceiling, on N databases (one server still serialises the NOTIFYs). The price: no order across partitions',
    '  (each follower keeps N checkpoints), and a command whose streams fall in different partitions (a sign-up',
    '  reserves an email stream beside its user stream) must keep them in one, or needs a protocol across two.',
    '',
  ].join('\n');
}
