import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CredentialAccountCreated,
  EmailChanged,
  EmailVerified,
  ImpersonationStarted,
  InvitationAccepted,
  InvitationCanceled,
  InvitationCreated,
  InvitationRejected,
  InvitationResent,
  MemberAdded,
  MemberRemoved,
  MemberRoleChanged,
  OrganizationCreated,
  OrganizationDeleted,
  OrganizationUpdated,
  PasswordChanged,
  SessionActiveOrganizationChanged,
  SessionCreated,
  SessionRefreshed,
  SessionRevoked,
  SessionUpdated,
  SignInFailed,
  TeamCreated,
  TeamMemberAdded,
  TeamMemberRemoved,
  TeamRemoved,
  TeamUpdated,
  UserBanned,
  UserDeleted,
  UsernameChanged,
  UserRegistered,
  UserRoleChanged,
  UserUnbanned,
  UserUpdated,
  VerificationTokenConsumed,
  VerificationTokenIssued,
  VerificationTokenRevoked,
  type DomainEvent,
  type EventMetadata,
} from '@portcullis/contracts';
import { PostgresProjectionTarget, rebuildAside, sql, type PostgresProjection } from '@portcullis/platform';
import { catchUp, createEventLogDatabase, type EventLogDatabase } from '../../../tests/support/event-log.ts';
import { seededRandom, type SeededRandom } from '../../../tests/support/seeded-random.ts';
import { auditIndexProjection, auditIndexProjectionThroughPort } from './audit/audit-index.projection.ts';
import { identityProjection } from './identity/identity.projection.ts';
import { organizationsProjection } from './organization/organizations.projection.ts';
import { sessionsProjection } from './session/sessions.projection.ts';

const hash = (): string => randomBytes(32).toString('hex');
// The audit index twice: its replay from the log's table (a Postgres log), and through the port (any other).
const projections: ReadonlyArray<readonly [string, PostgresProjection]> = [
  [identityProjection.name, identityProjection],
  [sessionsProjection.name, sessionsProjection],
  [organizationsProjection.name, organizationsProjection],
  [`${auditIndexProjection.name} (replayed from the log's table)`, auditIndexProjection],
  [`${auditIndexProjection.name} (replayed through the port)`, auditIndexProjectionThroughPort],
];
const ORDER_BY: Record<string, readonly string[]> = { audit_event: ['position'], audit_event_subject: ['subject', 'position'] };

interface User {
  id: string;
  email: string;
  accountId: string;
  sessions: string[];
  tokens: Array<{ hash: string; purpose: 'reset-password' | 'delete-account' }>;
}
interface Organization {
  id: string;
  members: Map<string, string>;
  invitations: string[];
  teams: Map<string, Map<string, string>>;
}

/**
 * A varied history, as the api could have written it, with lives begun and ended close together (a
 * session opened and revoked, a user registered and deleted) and long after: every kind of event each
 * Postgres projection is built from, in an order chosen by a seeded random walk.
 */
function variedHistory(random: SeededRandom, steps: number): Array<{ event: DomainEvent; metadata: EventMetadata }> {
  const out: Array<{ event: DomainEvent; metadata: EventMetadata }> = [];
  let clock = Date.parse('2026-05-01T08:00:00.000Z');
  const users: User[] = [];
  const organizations: Organization[] = [];
  const at = (): EventMetadata => {
    clock += random.int(1, 90_000);
    const someone = (): string => random.pick(users).id;
    const actorId = users.length > 0 && random.chance(0.8) ? someone() : null;
    // Every shape of actor the log holds (the audit index reads it two ways, see its replay).
    const shape = users.length > 0 ? random.int(0, 6) : 0;
    const who: Omit<EventMetadata, 'occurredAt'> =
      shape === 0
        ? { actorId } // stored before `actor` existed
        : shape === 1
          ? { actorId, actor: actorId ? { kind: 'user', id: actorId } : { kind: 'anonymous', id: null } }
          : shape === 2
            ? { actorId: someone(), impersonatedBy: someone() } // an impersonation, stored before `actor`
            : shape === 3
              ? { actor: { kind: 'impersonator', id: someone(), impersonatorId: someone() } }
              : shape === 4
                ? { actor: { kind: random.pick(['admin', 'server', 'system'] as const), id: random.chance(0.5) ? someone() : null } }
                : shape === 5
                  ? // An admin's command from an impersonation session, stored before that read as the impersonator's.
                    { actorId: someone(), actor: { kind: 'admin', id: someone() }, impersonatedBy: someone() }
                  : {}; // nobody: the system, or anonymous by its request id or address
    const address = random.int(0, 9);
    const ipAddress = address < 7 ? `198.51.100.${random.int(1, 254)}` : address === 7 ? 'not-an-ip' : address === 8 ? '' : undefined;
    return { occurredAt: new Date(clock).toISOString(), ...who, ipAddress, requestId: random.chance(0.7) ? randomUUID() : undefined };
  };
  const emit = (...events: DomainEvent[]): void => {
    const metadata = at();
    for (const event of events) out.push({ event, metadata });
  };
  const later = (days: number): string => new Date(clock + days * 86_400_000).toISOString();
  const register = (): void => {
    const user: User = { id: randomUUID(), email: `${randomUUID()}@example.test`, accountId: randomUUID(), sessions: [], tokens: [] };
    users.push(user);
    emit(
      UserRegistered({ userId: user.id, email: user.email, name: `User ${users.length}`, image: random.chance(0.3) ? 'https://img.example/a.png' : null, emailVerified: false }),
      CredentialAccountCreated({ userId: user.id, accountId: user.accountId, passwordHash: `$argon2id$v=19$m=19456,t=2,p=1$${randomUUID()}` }),
    );
  };
  const newOrganization = (owner: User): void => {
    const organization: Organization = { id: randomUUID(), members: new Map(), invitations: [], teams: new Map() };
    const memberId = randomUUID();
    organization.members.set(owner.id, memberId);
    organizations.push(organization);
    emit(
      OrganizationCreated({ organizationId: organization.id, name: 'Org', slug: `org-${randomUUID()}`, logo: null, metadata: null, createdByUserId: owner.id }),
      MemberAdded({ organizationId: organization.id, memberId, userId: owner.id, role: 'owner', teamId: null, via: 'creator' }),
    );
  };
  for (let step = 0; step < steps; step += 1) {
    if (users.length < 3 || random.chance(0.12)) {
      register();
      continue;
    }
    // Mostly the newest users and organizations, so that many lives begin and change within one batch.
    const user = random.chance(0.7) ? random.pick(users.slice(-12)) : random.pick(users);
    const organization = organizations.length === 0 ? null : random.chance(0.7) ? random.pick(organizations.slice(-6)) : random.pick(organizations);
    switch (random.int(0, 22)) {
      case 0: {
        const sessionId = randomUUID();
        user.sessions.push(sessionId);
        const opened = { sessionId, userId: user.id, tokenHash: hash(), expiresAt: later(7), ipAddress: '198.51.100.1', userAgent: 'spec' };
        emit(random.chance(0.8) ? SessionCreated({ ...opened, rememberMe: random.chance(0.5), method: 'email-password' }) : ImpersonationStarted({ ...opened, impersonatedBy: random.pick(users).id }));
        break;
      }
      case 1:
        if (user.sessions.length > 0) emit(SessionRefreshed({ sessionId: random.pick(user.sessions), userId: user.id, expiresAt: later(8) }));
        break;
      case 2:
        if (user.sessions.length > 0) emit(SessionUpdated({ sessionId: random.pick(user.sessions), userId: user.id, changes: {} }));
        break;
      case 3:
        if (user.sessions.length > 0) {
          const sessionId = user.sessions.splice(random.int(0, user.sessions.length - 1), 1)[0]!;
          emit(SessionRevoked({ sessionId, userId: user.id, tokenHash: null, reason: 'signed_out' }));
        }
        break;
      case 4:
        if (user.sessions.length > 0 && organization) {
          const teams = [...organization.teams.keys()];
          emit(
            SessionActiveOrganizationChanged({
              sessionId: random.pick(user.sessions),
              userId: user.id,
              activeOrganizationId: organization.id,
              activeTeamId: teams.length > 0 && random.chance(0.5) ? random.pick(teams) : null,
            }),
          );
        }
        break;
      case 5:
        emit(random.chance(0.5) ? UserUpdated({ userId: user.id, name: `Renamed ${step}` }) : UserUpdated({ userId: user.id, image: random.chance(0.5) ? null : 'https://img.example/b.png' }));
        break;
      case 6:
        emit(UsernameChanged({ userId: user.id, username: `user_${step}`, displayUsername: `User_${step}` }));
        break;
      case 7:
        emit(EmailVerified({ userId: user.id, email: random.chance(0.8) ? user.email : 'stale@example.test' }));
        break;
      case 8: {
        const previousEmail = user.email;
        user.email = `${randomUUID()}@example.test`;
        emit(EmailChanged({ userId: user.id, previousEmail, email: user.email, emailVerified: random.chance(0.5) }));
        break;
      }
      case 9:
        emit(PasswordChanged({ userId: user.id, accountId: user.accountId, passwordHash: `$argon2id$v=19$m=19456,t=2,p=1$step-${step}`, via: 'change-password' }));
        break;
      case 10:
        emit(
          random.chance(0.4)
            ? UserRoleChanged({ userId: user.id, role: random.pick(['admin', 'user']) })
            : random.chance(0.5)
              ? UserBanned({ userId: user.id, reason: 'spam', expiresAt: random.chance(0.5) ? null : later(3) })
              : UserUnbanned({ userId: user.id, reason: 'admin' }),
        );
        break;
      case 11: {
        const token = { hash: hash(), purpose: random.pick(['reset-password', 'delete-account'] as const) };
        user.tokens.push(token);
        emit(VerificationTokenIssued({ purpose: token.purpose, tokenHash: token.hash, userId: user.id, expiresAt: later(1) }));
        break;
      }
      case 12:
        if (user.tokens.length > 0) {
          const token = user.tokens.splice(0, 1)[0]!;
          emit(
            random.chance(0.5)
              ? VerificationTokenConsumed({ purpose: token.purpose, tokenHash: token.hash, userId: user.id })
              : VerificationTokenRevoked({ purpose: token.purpose, tokenHash: token.hash, userId: user.id, reason: 'superseded' }),
          );
        }
        break;
      case 13:
        newOrganization(user);
        break;
      case 14:
        if (organization) emit(OrganizationUpdated({ organizationId: organization.id, name: `Org ${step}`, ...(random.chance(0.3) ? { slug: `org-${randomUUID()}` } : {}), logo: random.chance(0.5) ? null : 'https://img.example/o.png' }));
        break;
      case 15:
        if (organization && !organization.members.has(user.id)) {
          const memberId = randomUUID();
          organization.members.set(user.id, memberId);
          emit(MemberAdded({ organizationId: organization.id, memberId, userId: user.id, role: 'member', teamId: null, via: 'added' }));
        }
        break;
      case 16:
        if (organization && organization.members.has(user.id)) {
          const memberId = organization.members.get(user.id)!;
          if (random.chance(0.5)) emit(MemberRoleChanged({ organizationId: organization.id, memberId, userId: user.id, role: 'admin' }));
          else {
            organization.members.delete(user.id);
            for (const members of organization.teams.values()) members.delete(user.id);
            emit(MemberRemoved({ organizationId: organization.id, memberId, userId: user.id, reason: random.pick(['removed', 'left'] as const) }));
          }
        }
        break;
      case 17:
        if (organization) {
          const invitationId = randomUUID();
          organization.invitations.push(invitationId);
          const teams = [...organization.teams.keys()];
          emit(
            InvitationCreated({
              organizationId: organization.id,
              invitationId,
              email: `${randomUUID()}@example.test`,
              role: 'member',
              teamId: teams.length > 0 && random.chance(0.5) ? random.pick(teams) : null,
              inviterId: user.id,
              expiresAt: later(2),
            }),
          );
        }
        break;
      case 18:
        if (organization && organization.invitations.length > 0) {
          const invitationId = random.pick(organization.invitations);
          const organizationId = organization.id;
          emit(
            random.pick([
              InvitationResent({ organizationId, invitationId, inviterId: user.id, expiresAt: later(4) }),
              InvitationAccepted({ organizationId, invitationId, userId: user.id }),
              InvitationRejected({ organizationId, invitationId, userId: user.id }),
              InvitationCanceled({ organizationId, invitationId, byUserId: user.id }),
            ]),
          );
        }
        break;
      case 19:
        if (organization) {
          const teams = [...organization.teams.keys()];
          if (teams.length === 0 || random.chance(0.5)) {
            const teamId = randomUUID();
            organization.teams.set(teamId, new Map());
            emit(TeamCreated({ organizationId: organization.id, teamId, name: `Team ${step}` }));
          } else if (random.chance(0.6)) emit(TeamUpdated({ organizationId: organization.id, teamId: random.pick(teams), name: `Team ${step}` }));
          else {
            const teamId = random.pick(teams);
            organization.teams.delete(teamId);
            emit(TeamRemoved({ organizationId: organization.id, teamId }));
          }
        }
        break;
      case 20:
        if (organization && organization.members.has(user.id) && organization.teams.size > 0) {
          const teamId = random.pick([...organization.teams.keys()]);
          const members = organization.teams.get(teamId)!;
          const existing = members.get(user.id);
          if (existing) {
            members.delete(user.id);
            emit(TeamMemberRemoved({ organizationId: organization.id, teamId, teamMemberId: existing, userId: user.id }));
          } else {
            const teamMemberId = randomUUID();
            members.set(user.id, teamMemberId);
            emit(TeamMemberAdded({ organizationId: organization.id, teamId, teamMemberId, userId: user.id }));
          }
        }
        break;
      case 21:
        if (organization && random.chance(0.3)) {
          organizations.splice(organizations.indexOf(organization), 1);
          emit(OrganizationDeleted({ organizationId: organization.id, slug: 'gone', memberUserIds: [...organization.members.keys()] }));
        } else emit(SignInFailed({ email: user.email, userId: user.id, reason: 'invalid_password' }));
        break;
      default:
        if (random.chance(0.3)) {
          users.splice(users.indexOf(user), 1);
          for (const o of organizations) {
            o.members.delete(user.id);
            for (const members of o.teams.values()) members.delete(user.id);
          }
          emit(UserDeleted({ userId: user.id, email: user.email }));
        }
        break;
    }
  }
  return out;
}

describe('a rebuild aside, against the live projection', () => {
  let db: EventLogDatabase;
  const random = seededRandom(Number(process.env.PORTCULLIS_TEST_SEED ?? Date.now() % 2 ** 31));

  beforeAll(async () => {
    db = await createEventLogDatabase('rebuild_equivalence');
    const history = variedHistory(random, 3000);
    // Appends of a few events up to a few hundred, so that a live batch and a rebuild's batch cut the
    // history in different places.
    for (let i = 0; i < history.length; ) {
      const size = random.chance(0.2) ? random.int(50, 300) : random.int(1, 6);
      const slice = history.slice(i, i + size);
      await db.store.append(slice.map(({ event, metadata }) => ({ streamId: `spec-${randomUUID()}`, expectedVersion: 'no_stream', events: [{ type: event.type, data: event.data, metadata }] })));
      i += size;
    }
  });

  afterAll(async () => {
    await db?.close();
  });

  async function tableRows(table: string): Promise<readonly string[]> {
    const order = sql.join((ORDER_BY[table] ?? ['id']).map((column) => sql.identifier([column])), sql.fragment`, `);
    return (await db.pool.anyFirst(sql.unsafe`SELECT to_jsonb(t)::text FROM ${sql.identifier([table])} t ORDER BY ${order}`));
  }

  /** Its indexes and constraints, by definition. */
  async function indexesOf(table: string): Promise<readonly string[]> {
    return (await db.pool.anyFirst(sql.unsafe`
      SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = ${table}
      UNION ALL
      SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = ${`public."${table}"`}::regclass
      ORDER BY 1`));
  }

  it.each(projections)(
    '%s: rebuilt aside in large batches equals projected live in small ones, and event by event, indexes included',
    async (_name, projection) => {
      // As the runner projects: whole events through `applyAll`. A replay's own way (`replay`) is what is held to it.
      const asLive: PostgresProjection = { ...projection, replay: undefined };
      const live = new PostgresProjectionTarget(db.pool, asLive);
      await catchUp(db.store, live, 4);
      const snapshot = async () => Object.fromEntries(await Promise.all(projection.tables.map(async (t) => [t, await tableRows(t)] as const)));
      const projected = await snapshot();
      const indexes = await Promise.all(projection.tables.map(indexesOf));
      expect(Object.values(projected).some((rows) => rows.length > 0), `seed ${random.seed}`).toBe(true);

      const head = await rebuildAside(new PostgresProjectionTarget(db.pool, projection), { databaseUrl: db.url, store: db.store, batchSize: 1000 });
      expect(head).toBe(await db.store.headPosition());
      expect(await snapshot(), `seed ${random.seed}`).toEqual(projected);
      expect(await Promise.all(projection.tables.map(indexesOf))).toEqual(indexes);

      // The reference: every event through `apply`, one at a time.
      await live.reset();
      await catchUp(db.store, new PostgresProjectionTarget(db.pool, { ...asLive, applyAll: undefined }), 1);
      expect(await snapshot(), `seed ${random.seed}`).toEqual(projected);
    },
  );

  it('rebuilds a read model no projector has followed yet, and leaves its checkpoint at the head', async () => {
    await db.pool.query(sql.unsafe`DELETE FROM projection_checkpoints WHERE name = ${auditIndexProjection.name}`);
    await db.pool.query(sql.unsafe`TRUNCATE audit_event, audit_event_subject`);
    const head = await rebuildAside(new PostgresProjectionTarget(db.pool, auditIndexProjection), { databaseUrl: db.url, store: db.store, batchSize: 1000 });
    expect(head).toBe(await db.store.headPosition());
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${auditIndexProjection.name}`))).toBe(head);
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM audit_event`))).toBe(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM events`)));
  });
});
