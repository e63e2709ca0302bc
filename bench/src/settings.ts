/** Every BENCH_* variable, read once: the README's settings table lists the same. */

function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

const benchGroups = ['reads', 'sign-in', 'writes', 'streams', 'revocation', 'admin', 'audit', 'telemetry', 'growth', 'replicas', 'cache-flush', 'costs'] as const;
export type BenchGroup = (typeof benchGroups)[number];

/**
 * BENCH_ONLY: a comma-separated list of groups, or `all`. `reads` is the ceiling, get-session and sign-in;
 * `sign-in` only sign-in and the argon2 ceiling, for iterating on it.
 */
function groupsFromEnv(): ReadonlySet<BenchGroup> {
  const raw = process.env.BENCH_ONLY ?? '';
  if (raw === '' || raw === 'all') return new Set(['reads', 'writes', 'streams', 'revocation', 'admin', 'audit', 'telemetry', 'growth', 'replicas', 'cache-flush']);
  const asked = raw.split(',').map((name) => name.trim());
  const unknown = asked.filter((name) => !(benchGroups as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY must be "all" or a list of ${benchGroups.join(', ')}; got "${raw}"`);
  return new Set(asked as BenchGroup[]);
}

function clientCountsFromEnv(name = 'BENCH_WRITE_CLIENTS', fallback = '1,16,64'): readonly number[] {
  const raw = process.env[name] ?? fallback;
  const counts = raw.split(',').map((part) => Number(part.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${name} must list positive integers, got "${raw}"`);
  return counts;
}

export const settings = {
  groups: groupsFromEnv(),
  durationS: numberFromEnv('BENCH_DURATION_S', 10),
  warmupS: numberFromEnv('BENCH_WARMUP_S', 2),
  // A steady state needs V8 to have optimised the sign-in path, and the projector's per-batch code runs only
  // about fifteen times a second under sign-in load: after 10 s, perf still caught TurboFan compiling in
  // both processes, and the api's and projector's CPU per sign-in were 5-15% above what they settle at.
  signInWarmupS: numberFromEnv('BENCH_SIGN_IN_WARMUP_S', 40),
  // A freshly started api answered get-session at 55-75 µs of CPU each in its first seconds under load and
  // settled at 35-50 µs after that; the first variant measured must not pay for the others' warm-up.
  sessionWarmupS: numberFromEnv('BENCH_SESSION_WARMUP_S', 20),
  // One sign-in figure swings by several points with the host's load; the median of rounds, each against
  // the verify runs either side of it, does not hang on one unlucky stretch.
  signInRounds: Math.max(1, Math.round(numberFromEnv('BENCH_SIGN_IN_ROUNDS', 3))),
  argon2S: numberFromEnv('BENCH_ARGON2_S', 5),
  connections: numberFromEnv('BENCH_CONNECTIONS', 64),
  signInConnections: numberFromEnv('BENCH_SIGN_IN_CONNECTIONS', 8),
  signInUsers: Math.max(1, numberFromEnv('BENCH_SIGN_IN_USERS', 16)),
  writeClients: clientCountsFromEnv(),
  // Every write costs one or two hashes of nothing here, but a change of password two: at 64 clients a
  // change takes seconds, and a short window would hold only a few dozen of them.
  changePasswordDurationS: numberFromEnv('BENCH_CHANGE_PASSWORD_DURATION_S', 20),
  // Invitations accepted per client count, spread over its clients: each pair needs an organization of its
  // own for the invitee to join (an invitee joins each organization once).
  invitePairs: Math.max(1, Math.round(numberFromEnv('BENCH_INVITE_PAIRS', 600))),
  readYourWritesChecks: Math.max(0, Math.round(numberFromEnv('BENCH_RYW_CHECKS', 5))),
  streamLengths: [10_000, 100_000].map((n, i) => Math.round(numberFromEnv(i === 0 ? 'BENCH_STREAM_SHORT' : 'BENCH_STREAM_LONG', n))),
  concurrentWriters: Math.max(1, Math.round(numberFromEnv('BENCH_STREAM_WRITERS', 32))),
  largeOrganizationMembers: Math.round(numberFromEnv('BENCH_LARGE_ORGANIZATION_MEMBERS', 10_000)),
  revocations: Math.max(1, Math.round(numberFromEnv('BENCH_REVOCATIONS', 1000))),
  // Users with a session each in the log before the session cache is flushed: about 50,000 keys.
  cacheFlushUsers: Math.max(1, Math.round(numberFromEnv('BENCH_CACHE_FLUSH_USERS', 12_000))),
  replicaEndings: Math.max(1, Math.round(numberFromEnv('BENCH_REPLICA_ENDINGS', 300))),
  auditEvents: Math.max(1, Math.round(numberFromEnv('BENCH_AUDIT_EVENTS', 1_000_000))),
  auditQueries: Math.max(1, Math.round(numberFromEnv('BENCH_AUDIT_QUERIES', 200))),
  adminUsers: Math.max(1, Math.round(numberFromEnv('BENCH_ADMIN_USERS', 100_000))),
  adminClients: clientCountsFromEnv('BENCH_ADMIN_CLIENTS', '1,8'),
  // Ten times the admin tenant's users (and a snapshot each): what grows with the data, measured past today.
  growthSnapshots: Math.max(1, Math.round(numberFromEnv('BENCH_GROWTH_SNAPSHOTS', 1_000_000))),
  growthUsers: Math.max(1, Math.round(numberFromEnv('BENCH_GROWTH_USERS', 1_000_000))),
  growthQueries: Math.max(1, Math.round(numberFromEnv('BENCH_GROWTH_QUERIES', 30))),
  // The audit group's log: ten times it (10M) takes most of an hour to write and chain twice here.
  growthEvents: Math.max(1, Math.round(numberFromEnv('BENCH_GROWTH_EVENTS', 1_000_000))),
  // Ten times the streams group's long session stream: the first command on it without a snapshot.
  growthStream: Math.max(1, Math.round(numberFromEnv('BENCH_GROWTH_STREAM', 1_000_000))),
  adminUrl: process.env.BENCH_DATABASE_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  // The refresh-free variant isolates what the refresh check costs a plain get-session.
  diagnostics: process.env.BENCH_DIAGNOSTICS !== '0',
  rateLimit: process.env.BENCH_RATE_LIMIT === 'off' ? ('off' as const) : ('counting' as const),
};

