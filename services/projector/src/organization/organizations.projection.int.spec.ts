import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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
  OrganizationSlugReleased,
  OrganizationSlugReserved,
  OrganizationUpdated,
  streams,
  TeamCreated,
  TeamMemberAdded,
  TeamMemberRemoved,
  TeamRemoved,
  TeamUpdated,
  UserDeleted,
  type DomainEvent,
} from '@portcullis/contracts';
import { PostgresProjectionTarget, ProjectionRunner, resetProjection, sql, type EventStore } from '@portcullis/platform';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { organizationsProjection } from './organizations.projection.ts';

type Row = Record<string, unknown>;
const tables = ['organization', 'member', 'invitation', 'team', 'teamMember'] as const;

/**
 * Appends as the organization commands do: each stream at the version last written, several streams in one
 * atomic append where a command writes them together, one decision time per append.
 */
class OrganizationLog {
  private clock = Date.parse('2026-07-01T09:00:00.000Z');
  private readonly versions = new Map<string, number>();

  constructor(private readonly store: EventStore) {}

  /** Appends the writes at the next decision time (a minute after the last) and returns that time. */
  async append(...writes: [streamId: string, events: DomainEvent[]][]): Promise<string> {
    this.clock += 60_000;
    const at = new Date(this.clock).toISOString();
    const { versions } = await this.store.append(
      writes.map(([streamId, events]) => domainWrite(streamId, this.versions.get(streamId) ?? 'no_stream', events, metadataAt(at))),
    );
    for (const [streamId, version] of Object.entries(versions)) this.versions.set(streamId, version);
    return at;
  }

  on(organizationId: string, ...events: DomainEvent[]): Promise<string> {
    return this.append([streams.organization(organizationId), events]);
  }

  /** An organization with its creator as owner, the slug reserved in the same append. */
  async create(slug: string, ownerId: string, fields: { name?: string; logo?: string | null; metadata?: string | null } = {}) {
    const organizationId = randomUUID();
    const ownerMemberId = randomUUID();
    const createdAt = await this.append(
      [streams.organizationSlug(slug), [OrganizationSlugReserved({ slug, organizationId })]],
      [
        streams.organization(organizationId),
        [
          OrganizationCreated({
            organizationId,
            name: fields.name ?? `Org ${slug}`,
            slug,
            logo: fields.logo ?? null,
            metadata: fields.metadata ?? null,
            createdByUserId: ownerId,
          }),
          MemberAdded({ organizationId, memberId: ownerMemberId, userId: ownerId, role: 'owner', teamId: null, via: 'creator' }),
        ],
      ],
    );
    return { organizationId, ownerMemberId, createdAt };
  }

  async addMember(organizationId: string, userId: string, role = 'member'): Promise<string> {
    const memberId = randomUUID();
    await this.on(organizationId, MemberAdded({ organizationId, memberId, userId, role, teamId: null, via: 'added' }));
    return memberId;
  }

  async addTeam(organizationId: string, name: string, memberUserIds: string[] = []): Promise<string> {
    const teamId = randomUUID();
    await this.on(
      organizationId,
      TeamCreated({ organizationId, teamId, name }),
      ...memberUserIds.map((userId) => TeamMemberAdded({ organizationId, teamId, teamMemberId: randomUUID(), userId })),
    );
    return teamId;
  }

  async invite(organizationId: string, inviterId: string, email: string, role = 'member'): Promise<string> {
    const invitationId = randomUUID();
    await this.on(
      organizationId,
      InvitationCreated({ organizationId, invitationId, email, role, teamId: null, inviterId, expiresAt: '2026-07-10T00:00:00.000Z' }),
    );
    return invitationId;
  }
}

describe('organizations projection (organization, member, invitation, team, teamMember)', () => {
  let db: EventLogDatabase;
  let target: PostgresProjectionTarget;
  let runner: ProjectionRunner;
  let log: OrganizationLog;
  const failures: unknown[] = [];
  const deletedUsers: string[] = [];

  beforeAll(async () => {
    db = await createEventLogDatabase('organizations_projection');
    target = new PostgresProjectionTarget(db.pool, organizationsProjection);
    runner = new ProjectionRunner({
      store: db.store,
      target,
      databaseUrl: db.url,
      control: db.control,
      // Small batches, so a scenario's events are split across batches and a replay splits them differently.
      batchSize: 5,
      pollIntervalMs: 200,
      standbyIntervalMs: 100,
      log: { info: () => {}, warn: () => {}, error: (obj) => failures.push(obj) },
    });
    runner.start();
    log = new OrganizationLog(db.store);
  });

  afterAll(async () => {
    await runner?.stop();
    await db?.close();
  });

  /** Waits for the runner to apply everything appended so far; a batch that failed fails the test. */
  async function settled(): Promise<void> {
    const head = await db.store.headPosition();
    await waitFor(async () => failures.length > 0 || (await target.readCheckpoint()) >= head, {
      timeoutMs: 15_000,
      message: `the organizations projection to reach ${head}`,
    });
    expect(failures).toEqual([]);
  }

  async function rows(table: (typeof tables)[number], where = sql.fragment`true`): Promise<Row[]> {
    return [
      ...(await db.pool.any(sql.unsafe`SELECT * FROM ${sql.identifier([table])} WHERE ${where} ORDER BY "createdAt", id COLLATE "C"`)),
    ] as Row[];
  }

  const ofOrganization = (organizationId: string) => sql.fragment`"organizationId" = ${organizationId}`;

  /** Rows that point at something gone: what no removal may leave behind. */
  async function danglingRows(): Promise<Row[]> {
    return [
      ...(await db.pool.any(sql.unsafe`
        SELECT 'member without organization' AS what, m.id FROM member m
          WHERE NOT EXISTS (SELECT 1 FROM organization o WHERE o.id = m."organizationId")
        UNION ALL
        SELECT 'invitation without organization', i.id FROM invitation i
          WHERE NOT EXISTS (SELECT 1 FROM organization o WHERE o.id = i."organizationId")
        UNION ALL
        SELECT 'team without organization', t.id FROM team t
          WHERE NOT EXISTS (SELECT 1 FROM organization o WHERE o.id = t."organizationId")
        UNION ALL
        SELECT 'teamMember without team', tm.id FROM "teamMember" tm
          WHERE NOT EXISTS (SELECT 1 FROM team t WHERE t.id = tm."teamId")
        UNION ALL
        SELECT 'teamMember without member', tm.id FROM "teamMember" tm JOIN team t ON t.id = tm."teamId"
          WHERE NOT EXISTS (SELECT 1 FROM member m WHERE m."organizationId" = t."organizationId" AND m."userId" = tm."userId")
        UNION ALL
        SELECT 'member of a deleted user', m.id FROM member m WHERE m."userId" = ANY(${sql.array(deletedUsers, 'text')})
        UNION ALL
        SELECT 'teamMember of a deleted user', tm.id FROM "teamMember" tm WHERE tm."userId" = ANY(${sql.array(deletedUsers, 'text')})
        UNION ALL
        SELECT 'pending invitation from a deleted user', i.id FROM invitation i
          WHERE i.status = 'pending' AND i."inviterId" = ANY(${sql.array(deletedUsers, 'text')})`)),
    ] as Row[];
  }

  it('projects an organization’s life into better-auth’s rows, times from the events', async () => {
    const [owner, ada, bob] = [randomUUID(), randomUUID(), randomUUID()];
    const slug = `acme-${randomUUID().slice(0, 8)}`;
    const { organizationId, ownerMemberId, createdAt } = await log.create(slug, owner, { name: 'Acme', metadata: '{"plan":"pro"}' });
    const newSlug = `${slug}-inc`;
    await log.append(
      [streams.organizationSlug(slug), [OrganizationSlugReleased({ slug, organizationId })]],
      [streams.organizationSlug(newSlug), [OrganizationSlugReserved({ slug: newSlug, organizationId })]],
      [streams.organization(organizationId), [OrganizationUpdated({ organizationId, name: 'Acme Inc', slug: newSlug, logo: 'https://img.example/acme.png' })]],
    );
    const teamId = randomUUID();
    const teamCreatedAt = await log.on(organizationId, TeamCreated({ organizationId, teamId, name: 'Core' }));
    const teamUpdatedAt = await log.on(organizationId, TeamUpdated({ organizationId, teamId, name: 'Core Team' }));

    const [toAda, toBob, toCy] = [randomUUID(), randomUUID(), randomUUID()];
    const adaInvitedAt = await log.on(
      organizationId,
      InvitationCreated({
        organizationId,
        invitationId: toAda,
        email: 'ada@example.test',
        role: 'admin,member',
        teamId,
        inviterId: owner,
        expiresAt: '2026-07-03T09:00:00.000Z',
      }),
    );
    await log.on(organizationId, InvitationResent({ organizationId, invitationId: toAda, inviterId: owner, expiresAt: '2026-07-04T09:00:00.000Z' }));
    const adaMemberId = randomUUID();
    const adaTeamMemberId = randomUUID();
    const adaJoinedAt = await log.on(
      organizationId,
      InvitationAccepted({ organizationId, invitationId: toAda, userId: ada }),
      MemberAdded({ organizationId, memberId: adaMemberId, userId: ada, role: 'admin,member', teamId, via: 'invitation' }),
      TeamMemberAdded({ organizationId, teamId, teamMemberId: adaTeamMemberId, userId: ada }),
    );
    const bobInvitedAt = await log.on(
      organizationId,
      InvitationCreated({ organizationId, invitationId: toBob, email: 'bob@example.test', role: 'member', teamId: null, inviterId: ada, expiresAt: '2026-07-05T00:00:00.000Z' }),
    );
    await log.on(organizationId, InvitationRejected({ organizationId, invitationId: toBob, userId: bob }));
    const cyInvitedAt = await log.on(
      organizationId,
      InvitationCreated({ organizationId, invitationId: toCy, email: 'cy@example.test', role: 'admin', teamId: null, inviterId: owner, expiresAt: '2026-07-06T00:00:00.000Z' }),
    );
    await log.on(organizationId, InvitationCanceled({ organizationId, invitationId: toCy, byUserId: owner }));
    await log.on(organizationId, MemberRoleChanged({ organizationId, memberId: adaMemberId, userId: ada, role: 'member' }));
    await settled();

    expect(await rows('organization', sql.fragment`id = ${organizationId}`)).toEqual([
      {
        id: organizationId,
        name: 'Acme Inc',
        slug: newSlug,
        logo: 'https://img.example/acme.png',
        metadata: '{"plan":"pro"}',
        createdAt: Date.parse(createdAt),
      },
    ]);
    expect(await rows('member', ofOrganization(organizationId))).toEqual([
      { id: ownerMemberId, organizationId, userId: owner, role: 'owner', teamId: null, createdAt: Date.parse(createdAt) },
      { id: adaMemberId, organizationId, userId: ada, role: 'member', teamId, createdAt: Date.parse(adaJoinedAt) },
    ]);
    const invitation = (id: string, fields: Row): Row => ({ id, organizationId, teamId: null, ...fields });
    expect(await rows('invitation', ofOrganization(organizationId))).toEqual([
      invitation(toAda, {
        email: 'ada@example.test',
        role: 'admin,member',
        status: 'accepted',
        teamId,
        inviterId: owner,
        expiresAt: Date.parse('2026-07-04T09:00:00.000Z'),
        createdAt: Date.parse(adaInvitedAt),
      }),
      invitation(toBob, {
        email: 'bob@example.test',
        role: 'member',
        status: 'rejected',
        inviterId: ada,
        expiresAt: Date.parse('2026-07-05T00:00:00.000Z'),
        createdAt: Date.parse(bobInvitedAt),
      }),
      invitation(toCy, {
        email: 'cy@example.test',
        role: 'admin',
        status: 'canceled',
        inviterId: owner,
        expiresAt: Date.parse('2026-07-06T00:00:00.000Z'),
        createdAt: Date.parse(cyInvitedAt),
      }),
    ]);
    expect(await rows('team', ofOrganization(organizationId))).toEqual([
      { id: teamId, name: 'Core Team', organizationId, createdAt: Date.parse(teamCreatedAt), updatedAt: Date.parse(teamUpdatedAt) },
    ]);
    expect(await rows('teamMember', sql.fragment`"teamId" = ${teamId}`)).toEqual([
      { id: adaTeamMemberId, teamId, userId: ada, createdAt: Date.parse(adaJoinedAt) },
    ]);
  });

  it('an update changes only the fields it carries, and can clear the logo and metadata', async () => {
    const owner = randomUUID();
    const slug = `partial-${randomUUID().slice(0, 8)}`;
    const { organizationId } = await log.create(slug, owner, { name: 'Before', logo: 'https://img.example/a.png', metadata: '{"a":1}' });
    await log.on(organizationId, OrganizationUpdated({ organizationId, metadata: '{"b":2}' }));
    await settled();
    expect(await rows('organization', sql.fragment`id = ${organizationId}`)).toMatchObject([
      { name: 'Before', slug, logo: 'https://img.example/a.png', metadata: '{"b":2}' },
    ]);

    await log.on(organizationId, OrganizationUpdated({ organizationId, logo: null, metadata: null }));
    await settled();
    expect(await rows('organization', sql.fragment`id = ${organizationId}`)).toMatchObject([{ name: 'Before', slug, logo: null, metadata: null }]);
  });

  it('a member who goes takes their team memberships in that organization with them, and nothing else', async () => {
    const [owner, leaver, stays] = [randomUUID(), randomUUID(), randomUUID()];
    const a = await log.create(`a-${randomUUID().slice(0, 8)}`, owner);
    const b = await log.create(`b-${randomUUID().slice(0, 8)}`, owner);
    const leaverMemberId = await log.addMember(a.organizationId, leaver, 'admin');
    await log.addMember(a.organizationId, stays);
    await log.addMember(b.organizationId, leaver);
    const [first, second] = [
      await log.addTeam(a.organizationId, 'First', [leaver, stays]),
      await log.addTeam(a.organizationId, 'Second', [leaver]),
    ];
    const elsewhere = await log.addTeam(b.organizationId, 'Elsewhere', [leaver]);
    // Leaving keeps the invitations the member sent: accepting one then fails on its inviter, as in better-auth.
    const sent = await log.invite(a.organizationId, leaver, 'friend@example.test');
    await log.on(a.organizationId, MemberRemoved({ organizationId: a.organizationId, memberId: leaverMemberId, userId: leaver, reason: 'left' }));
    await settled();

    expect((await rows('member', ofOrganization(a.organizationId))).map((m) => m.userId)).toEqual([owner, stays]);
    expect((await rows('member', ofOrganization(b.organizationId))).map((m) => m.userId)).toEqual([owner, leaver]);
    expect((await rows('teamMember', sql.fragment`"teamId" IN (${first}, ${second}, ${elsewhere})`)).map((t) => [t.teamId, t.userId])).toEqual([
      [first, stays],
      [elsewhere, leaver],
    ]);
    expect(await rows('team', ofOrganization(a.organizationId))).toHaveLength(2);
    expect(await rows('invitation', sql.fragment`id = ${sent}`)).toMatchObject([{ status: 'pending', inviterId: leaver }]);
    expect(await danglingRows()).toEqual([]);
  });

  it('removing a team or a team member removes their teamMember rows only', async () => {
    const [owner, u, v] = [randomUUID(), randomUUID(), randomUUID()];
    const { organizationId } = await log.create(`teams-${randomUUID().slice(0, 8)}`, owner);
    await log.addMember(organizationId, u);
    await log.addMember(organizationId, v);
    const removed = await log.addTeam(organizationId, 'Removed', [u, v]);
    const kept = await log.addTeam(organizationId, 'Kept', [u, v]);
    await log.on(organizationId, TeamMemberRemoved({ organizationId, teamId: kept, teamMemberId: randomUUID(), userId: u }));
    await log.on(organizationId, TeamRemoved({ organizationId, teamId: removed }));
    await settled();

    expect((await rows('team', ofOrganization(organizationId))).map((t) => t.id)).toEqual([kept]);
    expect((await rows('teamMember', sql.fragment`"teamId" IN (${removed}, ${kept})`)).map((t) => [t.teamId, t.userId])).toEqual([[kept, v]]);
    expect((await rows('member', ofOrganization(organizationId))).map((m) => m.userId)).toEqual([owner, u, v]);
    expect(await danglingRows()).toEqual([]);
  });

  it('deleting an organization leaves no member, invitation, team or teamMember row of it, and its slug can be taken again', async () => {
    const [owner, member] = [randomUUID(), randomUUID()];
    const slug = `gone-${randomUUID().slice(0, 8)}`;
    const doomed = await log.create(slug, owner);
    const neighbour = await log.create(`next-door-${randomUUID().slice(0, 8)}`, owner);
    for (const organizationId of [doomed.organizationId, neighbour.organizationId]) {
      await log.addMember(organizationId, member);
      await log.addTeam(organizationId, 'Team', [owner, member]);
      await log.invite(organizationId, owner, `${randomUUID()}@example.test`);
    }
    await log.append(
      [streams.organizationSlug(slug), [OrganizationSlugReleased({ slug, organizationId: doomed.organizationId })]],
      [streams.organization(doomed.organizationId), [OrganizationDeleted({ organizationId: doomed.organizationId, slug, memberUserIds: [owner, member] })]],
    );
    const reborn = await log.create(slug, member);
    await settled();

    for (const table of ['member', 'invitation', 'team'] as const) {
      expect(await rows(table, ofOrganization(doomed.organizationId))).toEqual([]);
      expect(await rows(table, ofOrganization(neighbour.organizationId))).not.toEqual([]);
    }
    expect(await rows('organization', sql.fragment`id = ${doomed.organizationId}`)).toEqual([]);
    expect(await rows('teamMember', sql.fragment`"teamId" IN (SELECT id FROM team WHERE "organizationId" = ${neighbour.organizationId})`)).toHaveLength(2);
    expect(await rows('organization', sql.fragment`slug = ${slug}`)).toMatchObject([{ id: reborn.organizationId }]);
    expect(await danglingRows()).toEqual([]);
  });

  it('deleting a user removes their memberships and pending invitations, before or after the organizations say so', async () => {
    const [owner, first, second] = [randomUUID(), randomUUID(), randomUUID()];
    const orgs = [await log.create(`x-${randomUUID().slice(0, 8)}`, owner), await log.create(`y-${randomUUID().slice(0, 8)}`, owner)];
    const memberIds = new Map<string, string>();
    const invitations = new Map<string, { pending: string; accepted: string }>();
    for (const userId of [first, second]) {
      for (const { organizationId } of orgs) {
        memberIds.set(`${organizationId}:${userId}`, await log.addMember(organizationId, userId, 'admin'));
        await log.addTeam(organizationId, `Team of ${userId}`, [owner, userId]);
      }
      const { organizationId } = orgs[0]!;
      const pending = await log.invite(organizationId, userId, `${randomUUID()}@example.test`);
      const accepted = await log.invite(organizationId, userId, `${randomUUID()}@example.test`);
      await log.on(organizationId, InvitationAccepted({ organizationId, invitationId: accepted, userId: randomUUID() }));
      invitations.set(userId, { pending, accepted });
    }
    const memberRemovals = (userId: string) =>
      orgs.map(({ organizationId }) =>
        log.on(organizationId, MemberRemoved({ organizationId, memberId: memberIds.get(`${organizationId}:${userId}`)!, userId, reason: 'user_deleted' })),
      );
    const userDeleted = (userId: string) => log.append([streams.user(userId), [UserDeleted({ userId, email: `${userId}@example.test` })]]);

    const leftBehind = async (userId: string): Promise<unknown[]> => [
      ...(await rows('member', sql.fragment`"userId" = ${userId}`)),
      ...(await rows('teamMember', sql.fragment`"userId" = ${userId}`)),
      ...(await rows('invitation', sql.fragment`"inviterId" = ${userId} AND status = 'pending'`)),
    ];
    await settled();
    expect(await leftBehind(first)).toHaveLength(5);

    // The first user's deletion lands before the organizations' removals, the second user's after them:
    // either one alone leaves nothing behind, and the other then finds nothing to do.
    await userDeleted(first);
    await settled();
    expect(await leftBehind(first)).toEqual([]);
    await Promise.all(memberRemovals(first));
    await Promise.all(memberRemovals(second));
    await settled();
    expect(await leftBehind(second)).toEqual([]);
    await userDeleted(second);
    deletedUsers.push(first, second);
    await settled();

    for (const { organizationId } of orgs) {
      expect((await rows('member', ofOrganization(organizationId))).map((m) => m.userId)).toEqual([owner]);
      expect((await rows('teamMember', sql.fragment`"teamId" IN (SELECT id FROM team WHERE ${ofOrganization(organizationId)})`)).map((t) => t.userId)).toEqual([
        owner,
        owner,
      ]);
    }
    for (const userId of [first, second]) {
      const { pending, accepted } = invitations.get(userId)!;
      expect(await rows('invitation', sql.fragment`id = ${pending}`)).toEqual([]);
      // Settled history stays, as the other statuses of better-auth's invitations do.
      expect(await rows('invitation', sql.fragment`id = ${accepted}`)).toMatchObject([{ status: 'accepted', inviterId: userId }]);
    }
    expect(await danglingRows()).toEqual([]);
  });

  it('a rebuild from position 0 reproduces exactly the rows the live projection built', async () => {
    await settled();
    const snapshot = async (): Promise<Record<string, Row[]>> => Object.fromEntries(await Promise.all(tables.map(async (t) => [t, await rows(t)])));
    const live = await snapshot();
    expect(live.organization!.length).toBeGreaterThanOrEqual(8);
    expect(live.teamMember!.length).toBeGreaterThanOrEqual(10);

    // The runner is asked to step aside, the tables are emptied, and it replays the log from the start.
    await resetProjection(db.url, target);
    await settled();
    expect(await snapshot()).toEqual(live);
    expect(await danglingRows()).toEqual([]);
  });
});
