import { organizationRoles, type SecurityOverview } from '@portcullis/contracts';
import { sql, type CommonQueryMethods, type EventStore, type PersonalData } from '@portcullis/platform';
import { knownTypes } from './audit-search.ts';
import { MentionedIds, namesOf } from './audit-names.ts';

/** One failed sign-in, counted once: the identifier's failure (an account's failure is the same attempt again). */
const FAILURE_TYPES = ['credentials.sign_in_failed.v1', 'credentials.username_sign_in_failed.v1'];
const ACCOUNT_FAILURE = 'credentials.account_sign_in_failed.v1';
const IDENTIFIER_LOCK = 'credentials.sign_in_locked.v1';
const ACCOUNT_LOCK = 'credentials.account_sign_in_locked.v1';
const RATE_LIMITED = 'perimeter.sign_in_rate_limited.v1';
const WATCHED = [...FAILURE_TYPES, ACCOUNT_FAILURE, IDENTIFIER_LOCK, ACCOUNT_LOCK, RATE_LIMITED];
/** A sign-in is a session opened, whatever version of the event recorded it. */
const SIGN_IN_TYPES = knownTypes.filter((type) => type.startsWith('session.created.'));

export interface SecurityQuery {
  readonly hours: number;
  readonly top: number;
  readonly dormantDays: number;
  readonly sample: number;
}

export interface SecurityDeps {
  readonly db: CommonQueryMethods;
  readonly store: Pick<EventStore, 'readStreams'>;
  readonly personalData: PersonalData;
  readonly now: Date;
  readonly adminRoles: readonly string[];
  readonly adminUserIds: readonly string[];
}

/** The first log position recorded at or after an instant (past the head when none is): a time bound as a position bound. */
const firstPositionFrom = (from: string) => sql.fragment`coalesce((SELECT t.position FROM audit_event t WHERE t.recorded_at >= ${from}::timestamptz
  ORDER BY t.recorded_at, t.position LIMIT 1), 9223372036854775807)`;

/** The window's sign-in failures, locks and rate-limit refusals, from the audit index (each with its user id, when its data names one). */
const watchedIn = (from: string) => sql.fragment`
  SELECT a.position, a.type, a.ip, a.recorded_at, a.user_id
  FROM audit_event a
  WHERE a.type = ANY(${sql.array(WATCHED, 'text')}) AND a.position >= ${firstPositionFrom(from)} AND a.recorded_at >= ${from}::timestamptz`;

interface Totals {
  failures: number;
  without_account: number;
  identifier_locks: number;
  account_locks: number;
  rate_limited: number;
}

async function signIns(deps: SecurityDeps, from: string, top: number): Promise<SecurityOverview['signIns']> {
  const { db } = deps;
  const failures = sql.array(FAILURE_TYPES, 'text');
  const [totals, addresses, accounts] = await Promise.all([
    db.one(sql.unsafe`
      SELECT count(*) FILTER (WHERE type = ANY(${failures}))::int AS failures,
        count(*) FILTER (WHERE type = ANY(${failures}) AND user_id IS NULL)::int AS without_account,
        count(*) FILTER (WHERE type = ${IDENTIFIER_LOCK})::int AS identifier_locks,
        count(*) FILTER (WHERE type = ${ACCOUNT_LOCK})::int AS account_locks,
        count(*) FILTER (WHERE type = ${RATE_LIMITED})::int AS rate_limited
      FROM (${watchedIn(from)}) w`) as Promise<Totals>,
    db.any(sql.unsafe`
      SELECT host(ip) AS address,
        count(*) FILTER (WHERE type = ANY(${failures}))::int AS failures,
        count(*) FILTER (WHERE type IN (${IDENTIFIER_LOCK}, ${ACCOUNT_LOCK}))::int AS lockouts,
        count(*) FILTER (WHERE type = ${RATE_LIMITED})::int AS rate_limited,
        max(recorded_at) AS last_seen, count(*) OVER ()::int AS total
      FROM (${watchedIn(from)}) w
      WHERE type <> ${ACCOUNT_FAILURE}
      GROUP BY ip ORDER BY failures DESC, lockouts DESC, rate_limited DESC, last_seen DESC LIMIT ${top}`) as Promise<
      readonly { address: string | null; failures: number; lockouts: number; rate_limited: number; last_seen: number; total: number }[]
    >,
    db.any(sql.unsafe`
      SELECT user_id, count(*) FILTER (WHERE type = ${ACCOUNT_FAILURE})::int AS failures,
        count(*) FILTER (WHERE type = ${ACCOUNT_LOCK})::int AS lockouts,
        max(recorded_at) AS last_seen, count(*) OVER ()::int AS total
      FROM (${watchedIn(from)}) w
      WHERE type IN (${ACCOUNT_FAILURE}, ${ACCOUNT_LOCK}) AND user_id IS NOT NULL
      GROUP BY user_id ORDER BY failures DESC, lockouts DESC, last_seen DESC LIMIT ${top}`) as Promise<
      readonly { user_id: string; failures: number; lockouts: number; last_seen: number; total: number }[]
    >,
  ]);
  const mentioned = new MentionedIds();
  for (const row of accounts) mentioned.user(row.user_id);
  const { people } = await namesOf(deps, mentioned);
  return {
    failures: totals.failures,
    failuresWithoutAccount: totals.without_account,
    identifierLockouts: totals.identifier_locks,
    accountLockouts: totals.account_locks,
    rateLimited: totals.rate_limited,
    byAddress: {
      total: addresses[0]?.total ?? 0,
      top: addresses.map((row) => ({
        address: row.address,
        failures: row.failures,
        lockouts: row.lockouts,
        rateLimited: row.rate_limited,
        lastSeen: new Date(row.last_seen).toISOString(),
      })),
    },
    byAccount: {
      total: accounts[0]?.total ?? 0,
      top: accounts.map((row) => ({
        userId: row.user_id,
        person: people[row.user_id] ?? null,
        failures: row.failures,
        lockouts: row.lockouts,
        lastSeen: new Date(row.last_seen).toISOString(),
      })),
    },
  };
}

/**
 * Users with no sign-in since the cutoff who were there before it, the longest dormant first. A user's last
 * sign-in is their latest session opened, found walking back their own index entries (so it costs their
 * recent history), and dated by its decision time, as time travel dates events.
 */
async function dormantUsers(deps: SecurityDeps, days: number, sample: number): Promise<SecurityOverview['dormantUsers']> {
  const cutoff = new Date(deps.now.getTime() - days * 86_400_000).toISOString();
  const row = (await deps.db.one(sql.unsafe`
    WITH dormant AS MATERIALIZED (
      SELECT u.id, u.name, u.email, u."createdAt" AS created_at, last.at AS last_sign_in
      FROM "user" u
      LEFT JOIN LATERAL (
        SELECT a.occurred_at AS at
        FROM audit_event_subject s JOIN audit_event a ON a.position = s.position
        WHERE s.subject = 'user:' || u.id AND a.type = ANY(${sql.array(SIGN_IN_TYPES, 'text')}) AND a.user_id = u.id
        ORDER BY s.position DESC LIMIT 1) last ON true
      WHERE u."createdAt" < ${cutoff}::timestamptz AND (last.at IS NULL OR last.at < ${cutoff}::timestamptz))
    SELECT (SELECT count(*) FROM dormant)::int AS total,
      coalesce((SELECT json_agg(d) FROM (
        SELECT id, name, email, created_at, last_sign_in FROM dormant
        ORDER BY coalesce(last_sign_in, created_at), id LIMIT ${sample}) d), '[]') AS sample`)) as {
    total: number;
    sample: readonly { id: string; name: string; email: string; created_at: string; last_sign_in: string | null }[];
  };
  return {
    days,
    total: row.total,
    sample: row.sample.map((user) => ({
      id: user.id,
      name: user.name,
      email: user.email,
      createdAt: new Date(user.created_at).toISOString(),
      lastSignInAt: user.last_sign_in === null ? null : new Date(user.last_sign_in).toISOString(),
    })),
  };
}

/** Each role with its holders; roles held but not defined (set through the API as free text) are listed too. */
function roleUses(defined: readonly string[], held: readonly { role: string; holders: number }[]) {
  const holders = new Map(held.map((row) => [row.role, row.holders]));
  const roles = [...new Set([...defined, ...holders.keys()])];
  return roles.map((role) => ({ role, holders: holders.get(role) ?? 0, unused: (holders.get(role) ?? 0) === 0 }));
}

async function roles(deps: SecurityDeps): Promise<SecurityOverview['roles']> {
  const heldBy = (table: ReturnType<typeof sql.identifier>) => sql.unsafe`
    SELECT trim(r.role) AS role, count(*)::int AS holders FROM ${table} t, unnest(string_to_array(t.role, ',')) AS r(role)
    WHERE trim(r.role) <> '' GROUP BY trim(r.role)`;
  const [members, users, admins] = await Promise.all([
    deps.db.any(heldBy(sql.identifier(['member']))) as Promise<readonly { role: string; holders: number }[]>,
    deps.db.any(heldBy(sql.identifier(['user']))) as Promise<readonly { role: string; holders: number }[]>,
    deps.db.anyFirst(sql.unsafe`SELECT id FROM "user" WHERE id = ANY(${sql.array([...deps.adminUserIds], 'text')})`) as Promise<readonly string[]>,
  ]);
  return {
    organization: roleUses(organizationRoles, members),
    admin: roleUses(deps.adminRoles, users),
    configuredAdmins: deps.adminUserIds.map((userId) => ({ userId, exists: admins.includes(userId) })),
  };
}

/**
 * The security view: the window's failed sign-ins and locks by client address and by account, dormant
 * users, and roles nobody holds. Read from the audit index (it may trail the log by its gathering interval)
 * and the read models.
 */
export async function securityOverview(deps: SecurityDeps, query: SecurityQuery): Promise<SecurityOverview> {
  const from = new Date(deps.now.getTime() - query.hours * 3_600_000).toISOString();
  const [signInsSeen, dormant, roleUse] = await Promise.all([signIns(deps, from, query.top), dormantUsers(deps, query.dormantDays, query.sample), roles(deps)]);
  return { window: { from, to: deps.now.toISOString(), hours: query.hours }, signIns: signInsSeen, dormantUsers: dormant, roles: roleUse };
}
