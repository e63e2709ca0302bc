import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CredentialAccountCreated,
  EmailReserved,
  InvitationAccepted,
  InvitationCanceled,
  InvitationCreated,
  InvitationRejected,
  InvitationResent,
  MemberAdded,
  MemberRemoved,
  OrganizationCreated,
  OrganizationDeleted,
  OrganizationSlugReleased,
  OrganizationSlugReserved,
  OrganizationUpdated,
  auditIndexProjectionName,
  projectionNames,
  SessionActiveOrganizationChanged,
  SessionCreated,
  SessionRefreshed,
  SessionRevoked,
  SessionUpdated,
  SignInFailed,
  streams,
  TeamCreated,
  TeamMemberAdded,
  TeamMemberRemoved,
  TeamRemoved,
  TeamUpdated,
  UserRegistered,
  UserUpdated,
  type DomainEvent,
  type EventMetadata,
} from '@portcullis/contracts';
import {
  createRedisClient,
  generateSessionToken,
  hashToken,
  parseCacheCheckpoint,
  sessionCacheLayout,
  sql,
  type Redis,
  type StreamWrite,
} from '@portcullis/platform';
import { createEventLogDatabase, domainWrite, metadataAt, TEST_AUTH_SECRET, type EventLogDatabase } from '../support/event-log.ts';
import { spawnService, waitFor, type ServiceProcess } from '../support/processes.ts';
import { deleteRedisKeys, servedSessionCacheKeys, testRedisUrl, uniqueRedisPrefix } from '../support/redis.ts';
import { seededRandom, testSeed, type SeededRandom } from '../support/seeded-random.ts';
import { serviceEntries } from '../../scripts/build.ts';

const PROJECTOR_ENTRY = serviceEntries.projector.built;
const REBUILD_ENTRY = serviceEntries.rebuildProjection.built;
const TOTAL_EVENTS = 3000;
const WRITERS = 3;
const KILLS = 8;
const DAY_MS = 24 * 3600 * 1000;
const PASSWORD_HASH = '$argon2id$v=19$m=19456,t=2,p=1$Y3Jhc2hzYWx0$Y3Jhc2hoYXNoY3Jhc2hoYXNo';
/** The share of the writers' steps that act on organizations (and the sessions' active organization). */
const ORGANIZATION_SHARE = 0.3;

/**
 * The crash test. Two projector processes follow the log while a writer appends realistic auth traffic and
 * the test SIGKILLs a projector at random points (seeded; the seed is printed) and starts a replacement.
 * Afterwards the read models must equal both what the writer knows it wrote and what a rebuild from
 * position 0 produces: a crash at any point neither loses nor double-applies an event.
 */
describe('projector crash safety', () => {
  const seed = testSeed();
  const redisUrl = testRedisUrl();
  const prefix = redisUrl ? uniqueRedisPrefix() : null;
  let db: EventLogDatabase;
  let redis: Redis | null = null;
  let env: Record<string, string>;
  const projectors: ServiceProcess[] = [];
  const killed = new Set<ServiceProcess>();
  let started = 0;
  let monitor: { stop(): Promise<MonitorResult> } | undefined;

  beforeAll(async () => {
    console.info(`[projector-crash] seed=${seed} (replay with PORTCULLIS_TEST_SEED=${seed}); redis=${redisUrl ? 'yes' : 'no'}`);
    db = await createEventLogDatabase('projector_crash');
    if (redisUrl) redis = createRedisClient(redisUrl, { name: 'projector-crash-spec' });
    env = {
      NODE_ENV: 'test',
      DATABASE_URL: db.url,
      // The writer's: the projectors open the personal data it encrypted.
      AUTH_SECRET: TEST_AUTH_SECRET,
      LOG_LEVEL: 'warn',
      // Small batches so that kills land between and inside batches of one catch-up.
      PROJECTOR_BATCH_SIZE: '50',
      PROJECTOR_POLL_INTERVAL_MS: '500',
      // Empty means "not configured" to the config loader, whatever the parent environment holds.
      REDIS_URL: redisUrl ?? '',
      REDIS_KEY_PREFIX: prefix ?? '',
    };
  });

  afterAll(async () => {
    await monitor?.stop();
    await Promise.all(projectors.map((p) => p.stop()));
    redis?.disconnect();
    if (redisUrl && prefix) await deleteRedisKeys(redisUrl, prefix).catch(() => {});
    await db?.close();
  });

  function startProjector(): ServiceProcess {
    started += 1;
    const projector = spawnService({ name: `projector-${started}`, entry: PROJECTOR_ENTRY, env });
    projectors.push(projector);
    return projector;
  }

  function live(): ServiceProcess[] {
    return projectors.filter((p) => !killed.has(p));
  }

  async function killOne(random: SeededRandom, reason: string): Promise<void> {
    const victim = random.pick(live());
    killed.add(victim);
    victim.kill('SIGKILL');
    const exit = await victim.exited;
    expect(exit.signal, `${victim.name} should have died of SIGKILL\n${victim.output()}`).toBe('SIGKILL');
    console.info(`[projector-crash] killed ${victim.name} ${reason}`);
    startProjector();
  }

  const projectionCount = (): number => (redisUrl ? 5 : 4);

  /** Every projection's checkpoint, in a fixed order: identity, sessions, organizations, session-cache with Redis, then the audit index. */
  async function checkpoints(): Promise<number[]> {
    const rows = await db.pool.any(sql.unsafe`SELECT name, position FROM projection_checkpoints`);
    const stored = new Map((rows as readonly { name: string; position: bigint }[]).map((r) => [r.name, Number(r.position)]));
    const positions = [
      stored.get(projectionNames.identity) ?? 0,
      stored.get(projectionNames.sessions) ?? 0,
      stored.get(projectionNames.organizations) ?? 0,
    ];
    if (redis && prefix) {
      const keys = await servedSessionCacheKeys(redis, prefix, await db.store.logId());
      positions.push(keys ? (parseCacheCheckpoint(await redis.get(keys.checkpoint))?.position ?? 0) : 0);
    }
    positions.push(stored.get(auditIndexProjectionName) ?? 0);
    return positions;
  }

  /** Waits for a condition on the projections; a timeout reports where they stood and what projectors said. */
  async function waitForProjections(condition: (positions: number[]) => boolean, message: string, timeoutMs = 60_000): Promise<void> {
    let lastSeen: number[] = [];
    try {
      await waitFor(
        async () => {
          lastSeen = await checkpoints();
          return condition(lastSeen);
        },
        { timeoutMs, intervalMs: 20, message },
      );
    } catch (error) {
      const tails = live().map((p) => `--- ${p.name}\n${p.output().trimEnd().split('\n').slice(-15).join('\n')}`);
      throw new Error(`${(error as Error).message}\ncheckpoints: ${lastSeen.join(', ')}\n${tails.join('\n')}`);
    }
  }

  /** The audit index holds each event of the log once (its key is the position): none lost, none doubled. */
  async function expectAuditIndexWhole(head: number): Promise<void> {
    const indexed = await db.pool.one(sql.unsafe`SELECT count(*)::int AS n, coalesce(max(position), 0)::int AS last FROM audit_event`);
    expect(indexed).toEqual({ n: head, last: head });
  }

  async function waitUntilCaughtUp(message: string): Promise<number> {
    const head = await db.store.headPosition();
    await waitForProjections((positions) => positions.every((c) => c === head), `${message}: every checkpoint at the head (${head})`);
    return head;
  }

  it(
    'projectors SIGKILLed mid-stream lose and double-apply nothing, and a rebuild reproduces the read models',
    { timeout: 240_000 },
    async () => {
      const model = new AuthTrafficModel();
      const startedAt = Date.now();
      const phase = (what: string): void => console.info(`[projector-crash] ${what} at +${Date.now() - startedAt} ms`);
      startProjector();
      startProjector();

      // Checkpoints are sampled throughout: none may ever pass the head of the log.
      monitor = startCheckpointMonitor(checkpoints, () => db.store.headPosition());

      const writing = Promise.all(
        Array.from({ length: WRITERS }, (_, w) => writeTraffic(db, model, seededRandom(seed + 1 + w), w, TOTAL_EVENTS / WRITERS)),
      ).then(async () => phase(`writers done (head ${await db.store.headPosition()})`));

      // Kills are tied to the projections' progress (not to the clock), at seeded points through the stream.
      const killRandom = seededRandom(seed);
      const killAt = Array.from({ length: KILLS }, () => killRandom.int(50, TOTAL_EVENTS - 150)).sort((a, b) => a - b);
      const killing = (async () => {
        for (const [i, threshold] of killAt.entries()) {
          const which = killRandom.int(0, projectionCount() - 1);
          await waitForProjections(
            (positions) => positions[which]! >= threshold,
            `projection #${which} to pass position ${threshold} before kill ${i + 1}`,
          );
          await killOne(killRandom, `(kill ${i + 1}/${KILLS}) as projection #${which} passed ${threshold}`);
        }
      })();

      await Promise.all([writing, killing]);
      const head = await waitUntilCaughtUp('after the crashes');
      phase('caught up after the crashes');
      expect(head).toBeGreaterThanOrEqual(TOTAL_EVENTS);
      expect(killed.size).toBe(KILLS);

      const afterCrashes = await snapshotReadModels(db, redis, prefix);
      model.expectMatches(afterCrashes, prefix);
      await expectAuditIndexWhole(head);

      // Rebuild while the projectors run: each read model is replayed into a shadow and swapped in when it
      // reaches the head. One more kill while the rebuild runs, for good measure.
      const rebuild = spawnService({ name: 'rebuild', entry: REBUILD_ENTRY, env, args: ['all'] });
      await rebuild.waitForOutput(/identity: rebuilt/, 120_000);
      await killOne(killRandom, `during the rebuild (checkpoints ${(await checkpoints()).join(', ')} of ${head})`);
      const rebuilt = await rebuild.exited;
      phase('rebuild swapped in every read model');
      expect(rebuilt.code, rebuild.output()).toBe(0);
      expect(rebuild.output().match(/rebuilt to position \d+ in [\d.]+ s and swapped in/g), rebuild.output()).toHaveLength(projectionCount());
      expect(await waitUntilCaughtUp('after the rebuild')).toBe(head);
      phase('caught up after the rebuild');

      const afterRebuild = await snapshotReadModels(db, redis, prefix);
      expectSameSnapshots(afterRebuild, afterCrashes);
      await expectAuditIndexWhole(head);

      // Not an assertion (a takeover may legitimately log a failed batch), but worth seeing when reading a run.
      const logged = projectors.flatMap((p) => p.output().split('\n').filter((line) => /"level":(40|50|60)/.test(line)));
      console.info(`[projector-crash] ${projectors.length} projector processes logged ${logged.length} warnings/errors`);
      for (const line of logged.slice(0, 5)) console.info(`[projector-crash]   ${line.slice(0, 300)}`);

      const monitored = await monitor.stop();
      expect(monitored.samples).toBeGreaterThan(10);
      expect(monitored.violations, 'checkpoints seen past the head').toEqual([]);
    },
  );
});

// ---------------------------------------------------------------------------------------------------------
// The writer and its model of what it wrote.

interface ModelUser {
  userId: string;
  email: string;
  name: string;
  image: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

interface ModelSession {
  sessionId: string;
  userId: string;
  tokenHash: string;
  expiresAt: string;
  version: number;
  rememberMe: boolean;
  createdAt: string;
  updatedAt: string;
  activeOrganizationId: string | null;
  activeTeamId: string | null;
}

interface ModelTeam {
  teamId: string;
  name: string;
  createdAt: string;
  updatedAt: string | null;
  /** userId → teamMember id. */
  members: Map<string, string>;
}

interface ModelOrganization {
  organizationId: string;
  slug: string;
  name: string;
  version: number;
  createdAt: string;
  /** userId → member. */
  members: Map<string, { memberId: string; role: string; createdAt: string }>;
  teams: Map<string, ModelTeam>;
}

interface ModelInvitation {
  invitationId: string;
  organizationId: string;
  email: string;
  role: string;
  inviterId: string;
  status: 'pending' | 'accepted' | 'rejected' | 'canceled';
  expiresAt: string;
}

/**
 * What the writers appended, kept as the expected read models. Each writer owns its users and sessions, so
 * every expected version it appends with is exact and must succeed.
 */
class AuthTrafficModel {
  readonly users = new Map<string, ModelUser>();
  readonly sessions = new Map<string, ModelSession>();
  readonly organizations = new Map<string, ModelOrganization>();
  readonly invitations = new Map<string, ModelInvitation>();
  private clock = Date.parse('2026-06-01T00:00:00.000Z');

  /** Decision times, one second apart, so rows have distinct, deterministic times. */
  tick(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  expectMatches(snapshot: Snapshot, prefix: string | null): void {
    const users = [...this.users.values()].sort((a, b) => compare(a.userId, b.userId));
    expect(snapshot.users.map((u) => [u.id, u.email, u.name, u.image, u.createdAt, u.updatedAt])).toEqual(
      users.map((u) => [u.userId, u.email, u.name, u.image, Date.parse(u.createdAt), Date.parse(u.updatedAt)]),
    );
    expect(snapshot.accounts.map((a) => String(a.userId)).sort(compare)).toEqual(users.map((u) => u.userId));

    const sessions = [...this.sessions.values()].sort((a, b) => compare(a.sessionId, b.sessionId));
    expect(snapshot.sessions).toHaveLength(this.sessions.size);
    expect(
      snapshot.sessions.map((s) => [s.id, s.userId, s.token, s.expiresAt, s.updatedAt, s.rememberMe, s.activeOrganizationId, s.activeTeamId]),
    ).toEqual(
      sessions.map((s) => [
        s.sessionId,
        s.userId,
        s.tokenHash,
        Date.parse(s.expiresAt),
        Date.parse(s.updatedAt),
        s.rememberMe,
        s.activeOrganizationId,
        s.activeTeamId,
      ]),
    );
    this.expectOrganizationsMatch(snapshot);

    if (prefix === null || snapshot.redis === null) return;
    const keys = snapshotKeys(prefix);
    const cachedSessions = Object.keys(snapshot.redis).filter((k) => k.startsWith(keys.session('')));
    expect(cachedSessions.sort(compare)).toEqual(sessions.map((s) => keys.session(s.tokenHash)).sort(compare));
    for (const s of sessions) {
      const entry = snapshot.redis[keys.session(s.tokenHash)]!;
      const user = this.users.get(s.userId)!;
      expect(JSON.parse(entry.value as string)).toMatchObject({
        session: {
          id: s.sessionId,
          userId: s.userId,
          expiresAt: s.expiresAt,
          updatedAt: s.updatedAt,
          activeOrganizationId: s.activeOrganizationId,
          activeTeamId: s.activeTeamId,
        },
        user: { id: user.userId, name: user.name, image: user.image, updatedAt: user.updatedAt },
      });
      expect(Math.abs(entry.expireAtMs! - Date.parse(s.expiresAt))).toBeLessThan(5_000);
    }
    for (const user of users) {
      const live = sessions.filter((s) => s.userId === user.userId).map((s) => s.tokenHash).sort(compare);
      const entry = snapshot.redis[keys.userSessions(user.userId)];
      // Redis drops a set when its last member goes.
      expect(entry?.value ?? []).toEqual(live);
    }
    // Each organization and team lists exactly the live sessions working in it; no list outlives its last one.
    const expectedLists = new Map<string, string[]>();
    const list = (key: string, tokenHash: string): void => {
      expectedLists.set(key, [...(expectedLists.get(key) ?? []), tokenHash]);
    };
    for (const s of sessions) {
      if (s.activeOrganizationId) list(keys.organizationSessions(s.activeOrganizationId), s.tokenHash);
      if (s.activeTeamId) list(keys.teamSessions(s.activeTeamId), s.tokenHash);
    }
    const lists = Object.entries(snapshot.redis).filter(([k]) => k.startsWith(keys.organizationSessions('')) || k.startsWith(keys.teamSessions('')));
    expect(Object.fromEntries(lists.map(([k, e]) => [k, e.value]))).toEqual(
      Object.fromEntries([...expectedLists].map(([k, hashes]) => [k, hashes.sort(compare)])),
    );
    expect(expectedLists.size, 'some sessions work in an organization').toBeGreaterThan(0);
  }

  private expectOrganizationsMatch(snapshot: Snapshot): void {
    const byId = <T>(items: T[], id: (item: T) => string): T[] => items.sort((a, b) => compare(id(a), id(b)));
    const organizations = byId([...this.organizations.values()], (o) => o.organizationId);
    expect(snapshot.organizations.map((o) => [o.id, o.name, o.slug, o.createdAt])).toEqual(
      organizations.map((o) => [o.organizationId, o.name, o.slug, Date.parse(o.createdAt)]),
    );
    const members = byId(
      organizations.flatMap((o) => [...o.members].map(([userId, m]) => ({ ...m, userId, organizationId: o.organizationId }))),
      (m) => m.memberId,
    );
    expect(snapshot.members.map((m) => [m.id, m.organizationId, m.userId, m.role, m.createdAt])).toEqual(
      members.map((m) => [m.memberId, m.organizationId, m.userId, m.role, Date.parse(m.createdAt)]),
    );
    const teams = byId(
      organizations.flatMap((o) => [...o.teams.values()].map((t) => ({ ...t, organizationId: o.organizationId }))),
      (t) => t.teamId,
    );
    expect(snapshot.teams.map((t) => [t.id, t.organizationId, t.name, t.createdAt, t.updatedAt])).toEqual(
      teams.map((t) => [t.teamId, t.organizationId, t.name, Date.parse(t.createdAt), t.updatedAt === null ? null : Date.parse(t.updatedAt)]),
    );
    const teamMembers = byId(
      teams.flatMap((t) => [...t.members].map(([userId, teamMemberId]) => ({ teamMemberId, userId, teamId: t.teamId }))),
      (tm) => tm.teamMemberId,
    );
    expect(snapshot.teamMembers.map((tm) => [tm.id, tm.teamId, tm.userId])).toEqual(teamMembers.map((tm) => [tm.teamMemberId, tm.teamId, tm.userId]));
    const invitations = byId([...this.invitations.values()], (i) => i.invitationId);
    expect(snapshot.invitations.map((i) => [i.id, i.organizationId, i.email, i.role, i.inviterId, i.status, i.expiresAt])).toEqual(
      invitations.map((i) => [i.invitationId, i.organizationId, i.email, i.role, i.inviterId, i.status, Date.parse(i.expiresAt)]),
    );
    // Enough happened for the comparison to mean something.
    expect(organizations.length).toBeGreaterThan(3);
    expect(teamMembers.length).toBeGreaterThan(0);
    expect(invitations.some((i) => i.status !== 'pending')).toBe(true);
  }
}

async function writeTraffic(db: EventLogDatabase, model: AuthTrafficModel, random: SeededRandom, writer: number, budget: number): Promise<void> {
  const mine: WriterState = { users: [], sessions: [], organizations: [] };
  let written = 0;

  const append = async (writes: StreamWrite[]): Promise<Record<string, number>> => {
    const { versions } = await db.store.append(writes);
    written += writes.reduce((n, w) => n + w.events.length, 0);
    return versions;
  };

  const newSession = (
    user: ModelUser,
    at: string,
    method: 'sign-up' | 'email-password',
  ): { session: ModelSession; event: DomainEvent } => {
    const rememberMe = random.chance(0.8);
    const token = generateSessionToken();
    // Well in the future, so no cache key expires between the two snapshots the test compares.
    const expiresAt = new Date(Date.now() + 7 * DAY_MS + random.int(0, 3600) * 1000).toISOString();
    const session: ModelSession = {
      sessionId: randomUUID(),
      userId: user.userId,
      tokenHash: hashToken(token),
      expiresAt,
      version: 1,
      rememberMe,
      createdAt: at,
      updatedAt: at,
      activeOrganizationId: null,
      activeTeamId: null,
    };
    const event = SessionCreated({
      sessionId: session.sessionId,
      userId: user.userId,
      tokenHash: session.tokenHash,
      expiresAt,
      ipAddress: `192.0.2.${random.int(1, 254)}`,
      userAgent: random.pick(['Mozilla/5.0', 'curl/8.5', null]),
      rememberMe,
      method,
    });
    return { session, event };
  };

  const organizationStep = organizationTraffic(model, random, mine, append);

  while (written < budget) {
    const at = model.tick();
    const metadata = metadataAt(at, { correlationId: randomUUID() });
    if (mine.users.length >= 3 && random.chance(ORGANIZATION_SHARE)) {
      await organizationStep(at, metadata);
      continue;
    }
    const roll = random.next();

    if (mine.users.length < 3 || roll < 0.18) {
      // Sign-up with auto sign-in: reservation, user, credential account and session in one append.
      const userId = randomUUID();
      const user: ModelUser = {
        userId,
        email: `w${writer}-${userId}@example.test`,
        name: `User ${userId.slice(0, 8)}`,
        image: random.chance(0.3) ? `https://img.example/${userId}.png` : null,
        version: 2,
        createdAt: at,
        updatedAt: at,
      };
      const { session, event } = newSession(user, at, 'sign-up');
      await append([
        domainWrite(streams.email(user.email), 'no_stream', [EmailReserved({ email: user.email, userId })], metadata),
        domainWrite(
          streams.user(userId),
          'no_stream',
          [
            UserRegistered({ userId, email: user.email, name: user.name, image: user.image, emailVerified: false }),
            CredentialAccountCreated({ userId, accountId: randomUUID(), passwordHash: PASSWORD_HASH }),
          ],
          metadata,
        ),
        domainWrite(streams.session(session.sessionId), 'no_stream', [event], metadata),
      ]);
      mine.users.push(user);
      mine.sessions.push(session);
      model.users.set(userId, user);
      model.sessions.set(session.sessionId, session);
    } else if (roll < 0.42 || mine.sessions.length === 0) {
      const user = random.pick(mine.users);
      const { session, event } = newSession(user, at, 'email-password');
      await append([domainWrite(streams.session(session.sessionId), 'no_stream', [event], metadata)]);
      mine.sessions.push(session);
      model.sessions.set(session.sessionId, session);
    } else if (roll < 0.62) {
      const session = random.pick(mine.sessions);
      const expiresAt = new Date(Date.parse(session.expiresAt) + random.int(60, 3600) * 1000).toISOString();
      const versions = await append([
        domainWrite(
          streams.session(session.sessionId),
          session.version,
          [SessionRefreshed({ sessionId: session.sessionId, userId: session.userId, expiresAt })],
          metadata,
        ),
      ]);
      session.version = versions[streams.session(session.sessionId)]!;
      session.expiresAt = expiresAt;
      session.updatedAt = at;
    } else if (roll < 0.67) {
      const session = random.pick(mine.sessions);
      const versions = await append([
        domainWrite(
          streams.session(session.sessionId),
          session.version,
          [SessionUpdated({ sessionId: session.sessionId, userId: session.userId, changes: {} })],
          metadata,
        ),
      ]);
      session.version = versions[streams.session(session.sessionId)]!;
      session.updatedAt = at;
    } else if (roll < 0.82) {
      // Sign out one session, or now and then revoke every session of a user in one atomic append.
      const one = random.pick(mine.sessions);
      const revoked = random.chance(0.2) ? mine.sessions.filter((s) => s.userId === one.userId) : [one];
      await append(
        revoked.map((s) =>
          domainWrite(
            streams.session(s.sessionId),
            s.version,
            [
              SessionRevoked({
                sessionId: s.sessionId,
                userId: s.userId,
                tokenHash: s.tokenHash,
                reason: revoked.length > 1 ? 'revoked_all' : 'signed_out',
              }),
            ],
            metadata,
          ),
        ),
      );
      for (const s of revoked) {
        mine.sessions.splice(mine.sessions.indexOf(s), 1);
        model.sessions.delete(s.sessionId);
      }
    } else if (roll < 0.95) {
      const user = random.pick(mine.users);
      const change = random.int(0, 2);
      const name = change !== 1 ? `${user.name.split(' (')[0]} (${random.int(1, 9999)})` : undefined;
      const image = change !== 0 ? (random.chance(0.5) ? null : `https://img.example/${randomUUID()}.png`) : undefined;
      const versions = await append([
        domainWrite(
          streams.user(user.userId),
          user.version,
          [UserUpdated({ userId: user.userId, ...(name !== undefined ? { name } : {}), ...(image !== undefined ? { image } : {}) })],
          metadata,
        ),
      ]);
      user.version = versions[streams.user(user.userId)]!;
      if (name !== undefined) user.name = name;
      if (image !== undefined) user.image = image;
      user.updatedAt = at;
    } else {
      // Events no projection reads still move every checkpoint.
      const user = random.pick(mine.users);
      await append([
        domainWrite(
          streams.signIn(user.email),
          'any',
          [SignInFailed({ email: user.email, userId: user.userId, reason: 'invalid_password' })],
          metadata,
        ),
      ]);
    }
  }
}

interface WriterState {
  users: ModelUser[];
  sessions: ModelSession[];
  organizations: ModelOrganization[];
}

type Append = (writes: StreamWrite[]) => Promise<Record<string, number>>;

/**
 * One step of organization traffic by a writer, on its own organizations, users and sessions: creating,
 * renaming and deleting organizations, members joining (added or invited) and going, teams and their
 * members, and sessions choosing an active organization and team. Every change the read models derive
 * (a member who goes loses the organization as active, a removed team is no one's active team) is applied
 * to the model here, so the comparison checks the projections' rules as well as their crash safety.
 */
function organizationTraffic(model: AuthTrafficModel, random: SeededRandom, mine: WriterState, append: Append) {
  const sessionsWhere = (match: (s: ModelSession) => boolean): ModelSession[] => mine.sessions.filter(match);

  const onOrganization = async (org: ModelOrganization, events: DomainEvent[], metadata: EventMetadata, also: StreamWrite[] = []) => {
    const versions = await append([domainWrite(streams.organization(org.organizationId), org.version, events, metadata), ...also]);
    org.version = versions[streams.organization(org.organizationId)]!;
  };

  const create = async (at: string, metadata: EventMetadata): Promise<void> => {
    const creator = random.pick(mine.users);
    const organizationId = randomUUID();
    const slug = `org-${organizationId.slice(0, 13)}`;
    const memberId = randomUUID();
    const org: ModelOrganization = {
      organizationId,
      slug,
      name: `Organization ${slug}`,
      version: 0,
      createdAt: at,
      members: new Map([[creator.userId, { memberId, role: 'owner', createdAt: at }]]),
      teams: new Map(),
    };
    const versions = await append([
      domainWrite(streams.organizationSlug(slug), 'no_stream', [OrganizationSlugReserved({ slug, organizationId })], metadata),
      domainWrite(
        streams.organization(organizationId),
        'no_stream',
        [
          OrganizationCreated({ organizationId, name: org.name, slug, logo: null, metadata: null, createdByUserId: creator.userId }),
          MemberAdded({ organizationId, memberId, userId: creator.userId, role: 'owner', teamId: null, via: 'creator' }),
        ],
        metadata,
      ),
    ]);
    org.version = versions[streams.organization(organizationId)]!;
    mine.organizations.push(org);
    model.organizations.set(organizationId, org);
  };

  /**
   * What the read models do when a member goes: the user's teams here, and this organization as active (a
   * change of the session, so its updatedAt moves).
   */
  const memberGone = (org: ModelOrganization, userId: string, at: string): void => {
    org.members.delete(userId);
    for (const team of org.teams.values()) team.members.delete(userId);
    for (const s of sessionsWhere((s) => s.userId === userId && s.activeOrganizationId === org.organizationId)) {
      s.activeOrganizationId = null;
      s.activeTeamId = null;
      s.updatedAt = at;
    }
  };

  return async function step(at: string, metadata: EventMetadata): Promise<void> {
    const roll = random.next();
    if (mine.organizations.length < 2 || roll < 0.1) return create(at, metadata);
    const org = random.pick(mine.organizations);
    const { organizationId } = org;
    const outsiders = mine.users.filter((u) => !org.members.has(u.userId));
    const members = [...org.members.keys()];
    const teams = [...org.teams.values()];
    const pending = [...model.invitations.values()].filter((i) => i.organizationId === organizationId && i.status === 'pending');

    if (roll < 0.22 && outsiders.length > 0) {
      const user = random.pick(outsiders);
      const memberId = randomUUID();
      const role = random.pick(['member', 'admin', 'admin,member']);
      await onOrganization(org, [MemberAdded({ organizationId, memberId, userId: user.userId, role, teamId: null, via: 'added' })], metadata);
      org.members.set(user.userId, { memberId, role, createdAt: at });
    } else if (roll < 0.34 && outsiders.length > 0) {
      const invitee = random.pick(outsiders);
      const invitation: ModelInvitation = {
        invitationId: randomUUID(),
        organizationId,
        email: invitee.email,
        role: random.pick(['member', 'admin']),
        inviterId: random.pick(members),
        status: 'pending',
        expiresAt: new Date(Date.parse(at) + 2 * DAY_MS).toISOString(),
      };
      await onOrganization(org, [InvitationCreated({ ...invitation, teamId: null })], metadata);
      model.invitations.set(invitation.invitationId, invitation);
    } else if (roll < 0.46 && pending.length > 0) {
      const invitation = random.pick(pending);
      const { invitationId } = invitation;
      const invitee = mine.users.find((u) => u.email === invitation.email)!;
      const settle = random.next();
      if (settle < 0.5 && !org.members.has(invitee.userId)) {
        const memberId = randomUUID();
        await onOrganization(
          org,
          [
            InvitationAccepted({ organizationId, invitationId, userId: invitee.userId }),
            MemberAdded({ organizationId, memberId, userId: invitee.userId, role: invitation.role, teamId: null, via: 'invitation' }),
          ],
          metadata,
        );
        invitation.status = 'accepted';
        org.members.set(invitee.userId, { memberId, role: invitation.role, createdAt: at });
      } else if (settle < 0.7) {
        await onOrganization(org, [InvitationRejected({ organizationId, invitationId, userId: invitee.userId })], metadata);
        invitation.status = 'rejected';
      } else if (settle < 0.85) {
        await onOrganization(org, [InvitationCanceled({ organizationId, invitationId, byUserId: random.pick(members) })], metadata);
        invitation.status = 'canceled';
      } else {
        const expiresAt = new Date(Date.parse(at) + 2 * DAY_MS).toISOString();
        await onOrganization(org, [InvitationResent({ organizationId, invitationId, inviterId: invitation.inviterId, expiresAt })], metadata);
        invitation.expiresAt = expiresAt;
      }
    } else if (roll < 0.54) {
      const team: ModelTeam = { teamId: randomUUID(), name: `Team ${random.int(1, 999)}`, createdAt: at, updatedAt: null, members: new Map() };
      const joining = members.filter(() => random.chance(0.5));
      for (const userId of joining) team.members.set(userId, randomUUID());
      await onOrganization(
        org,
        [
          TeamCreated({ organizationId, teamId: team.teamId, name: team.name }),
          ...[...team.members].map(([userId, teamMemberId]) => TeamMemberAdded({ organizationId, teamId: team.teamId, teamMemberId, userId })),
        ],
        metadata,
      );
      org.teams.set(team.teamId, team);
    } else if (roll < 0.64 && teams.length > 0) {
      const team = random.pick(teams);
      const joinable = members.filter((userId) => !team.members.has(userId));
      const change = random.next();
      if (change < 0.45 && joinable.length > 0) {
        const userId = random.pick(joinable);
        const teamMemberId = randomUUID();
        await onOrganization(org, [TeamMemberAdded({ organizationId, teamId: team.teamId, teamMemberId, userId })], metadata);
        team.members.set(userId, teamMemberId);
      } else if (change < 0.8 && team.members.size > 0) {
        const [userId, teamMemberId] = random.pick([...team.members]);
        await onOrganization(org, [TeamMemberRemoved({ organizationId, teamId: team.teamId, teamMemberId, userId })], metadata);
        team.members.delete(userId);
        for (const s of sessionsWhere((s) => s.userId === userId && s.activeTeamId === team.teamId)) {
          s.activeTeamId = null;
          s.updatedAt = at;
        }
      } else {
        const name = `Team ${random.int(1000, 9999)}`;
        await onOrganization(org, [TeamUpdated({ organizationId, teamId: team.teamId, name })], metadata);
        team.name = name;
        team.updatedAt = at;
      }
    } else if (roll < 0.8) {
      // A member's session chooses this organization, with one of the member's teams in it or none.
      const candidates = sessionsWhere((s) => org.members.has(s.userId));
      if (candidates.length === 0) return create(at, metadata);
      const session = random.pick(candidates);
      const ownTeams = teams.filter((t) => t.members.has(session.userId));
      const activeTeamId = ownTeams.length > 0 && random.chance(0.6) ? random.pick(ownTeams).teamId : null;
      const versions = await append([
        domainWrite(
          streams.session(session.sessionId),
          session.version,
          [SessionActiveOrganizationChanged({ sessionId: session.sessionId, userId: session.userId, activeOrganizationId: organizationId, activeTeamId })],
          metadata,
        ),
      ]);
      session.version = versions[streams.session(session.sessionId)]!;
      session.activeOrganizationId = organizationId;
      session.activeTeamId = activeTeamId;
      session.updatedAt = at;
    } else if (roll < 0.86 && teams.length > 0) {
      const team = random.pick(teams);
      await onOrganization(org, [TeamRemoved({ organizationId, teamId: team.teamId })], metadata);
      org.teams.delete(team.teamId);
      for (const s of sessionsWhere((s) => s.activeTeamId === team.teamId)) {
        s.activeTeamId = null;
        s.updatedAt = at;
      }
    } else if (roll < 0.92) {
      const goers = members.filter((userId) => org.members.get(userId)!.role !== 'owner');
      if (goers.length === 0) return create(at, metadata);
      const userId = random.pick(goers);
      const reason = random.pick(['left', 'removed'] as const);
      await onOrganization(org, [MemberRemoved({ organizationId, memberId: org.members.get(userId)!.memberId, userId, reason })], metadata);
      memberGone(org, userId, at);
    } else if (roll < 0.96) {
      const name = `Renamed ${random.int(1, 9999)}`;
      await onOrganization(org, [OrganizationUpdated({ organizationId, name })], metadata);
      org.name = name;
    } else {
      await onOrganization(org, [OrganizationDeleted({ organizationId, slug: org.slug, memberUserIds: members })], metadata, [
        domainWrite(streams.organizationSlug(org.slug), 1, [OrganizationSlugReleased({ slug: org.slug, organizationId })], metadata),
      ]);
      for (const s of sessionsWhere((s) => s.activeOrganizationId === organizationId)) {
        s.activeOrganizationId = null;
        s.activeTeamId = null;
        s.updatedAt = at;
      }
      mine.organizations.splice(mine.organizations.indexOf(org), 1);
      model.organizations.delete(organizationId);
      for (const i of [...model.invitations.values()]) if (i.organizationId === organizationId) model.invitations.delete(i.invitationId);
    }
  };
}

// ---------------------------------------------------------------------------------------------------------
// Snapshots of every read model.

interface RedisEntry {
  value: string | string[] | null;
  /** Absolute expiry in ms, or null for none. */
  expireAtMs: number | null;
}

interface Snapshot {
  users: Record<string, unknown>[];
  accounts: Record<string, unknown>[];
  sessions: Record<string, unknown>[];
  verifications: Record<string, unknown>[];
  organizations: Record<string, unknown>[];
  members: Record<string, unknown>[];
  invitations: Record<string, unknown>[];
  teams: Record<string, unknown>[];
  teamMembers: Record<string, unknown>[];
  redis: Record<string, RedisEntry> | null;
}

async function snapshotReadModels(db: EventLogDatabase, redis: Redis | null, prefix: string | null): Promise<Snapshot> {
  const rows = async (table: string): Promise<Record<string, unknown>[]> =>
    [...(await db.pool.any(sql.unsafe`SELECT * FROM ${sql.identifier([table])} ORDER BY id COLLATE "C"`))] as Record<string, unknown>[];
  return {
    users: await rows('user'),
    accounts: await rows('account'),
    sessions: await rows('session'),
    verifications: await rows('verification'),
    organizations: await rows('organization'),
    members: await rows('member'),
    invitations: await rows('invitation'),
    teams: await rows('team'),
    teamMembers: await rows('teamMember'),
    redis: redis && prefix ? await snapshotRedis(redis, prefix) : null,
  };
}

async function snapshotRedis(redis: Redis, prefix: string): Promise<Record<string, RedisEntry>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  const entries: Record<string, RedisEntry> = {};
  for (const key of keys.sort(compare)) {
    // The pointer and the checkpoints say where a generation is, not what it holds.
    if (key.includes('session-cache:') || key.includes('checkpoint:')) continue;
    const type = await redis.type(key);
    const value = type === 'set' ? (await redis.smembers(key)).sort(compare) : type === 'string' ? await redis.get(key) : `(${type})`;
    const pttl = await redis.pttl(key);
    entries[generationNeutral(key)] = { value, expireAtMs: pttl >= 0 ? Date.now() + pttl : null };
  }
  return entries;
}

/** A key with its generation's tag replaced by one fixed tag, so two generations' contents compare key by key. */
function generationNeutral(key: string): string {
  return key.replace(/\{sc:[^}]*\}/, NEUTRAL_TAG);
}

const NEUTRAL_TAG = '{sc:000000000000:generation}';

/** The session cache's keys as `snapshotRedis` names them. */
function snapshotKeys(prefix: string) {
  return sessionCacheLayout(prefix, '00000000-0000-0000-0000-000000000000').generation('generation');
}

/** Equal in every row and value; key expiries equal up to the time that passed between the two snapshots. */
function expectSameSnapshots(actual: Snapshot, expected: Snapshot): void {
  const withoutExpiry = (s: Snapshot): unknown => ({
    ...s,
    redis: s.redis && Object.fromEntries(Object.entries(s.redis).map(([k, e]) => [k, { value: e.value, expires: e.expireAtMs !== null }])),
  });
  expect(withoutExpiry(actual)).toEqual(withoutExpiry(expected));
  for (const [key, entry] of Object.entries(expected.redis ?? {})) {
    if (entry.expireAtMs === null) continue;
    expect(Math.abs(actual.redis![key]!.expireAtMs! - entry.expireAtMs), `expiry of ${key}`).toBeLessThan(5_000);
  }
}

// ---------------------------------------------------------------------------------------------------------

interface MonitorResult {
  samples: number;
  violations: string[];
}

/** Samples checkpoints and then the head (in that order, so a correct system can never look wrong). */
function startCheckpointMonitor(checkpoints: () => Promise<number[]>, head: () => Promise<number>): { stop(): Promise<MonitorResult> } {
  const result: MonitorResult = { samples: 0, violations: [] };
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const seen = await checkpoints();
        const h = await head();
        result.samples += 1;
        if (seen.some((c) => c > h)) result.violations.push(`checkpoints ${seen.join(',')} > head ${h}`);
      } catch {
        // A sample that failed to read says nothing either way.
      }
      // Sampling pace, not a wait for an outcome.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return result;
    },
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
