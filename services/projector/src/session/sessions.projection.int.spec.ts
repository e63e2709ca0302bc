import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CredentialAccountCreated,
  EmailReserved,
  MemberRemoved,
  OrganizationDeleted,
  SessionActiveOrganizationChanged,
  SessionCreated,
  SessionRefreshed,
  SessionRevoked,
  SessionUpdated,
  streams,
  TeamMemberRemoved,
  TeamRemoved,
  UserRegistered,
  type DomainEvent,
} from '@portcullis/contracts';
import { generateSessionToken, hashToken, PostgresProjectionTarget, sql } from '@portcullis/platform';
import { catchUp, createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { sessionsProjection } from './sessions.projection.ts';

const createdAt = '2026-04-01T08:00:00.000Z';
const refreshedAt = '2026-04-02T08:00:00.000Z';
const expiresAt = '2026-04-08T08:00:00.000Z';
const refreshedExpiresAt = '2026-04-09T08:00:00.000Z';

describe('sessions projection (session)', () => {
  let db: EventLogDatabase;
  let target: PostgresProjectionTarget;

  beforeAll(async () => {
    db = await createEventLogDatabase('sessions_projection');
    target = new PostgresProjectionTarget(db.pool, sessionsProjection);
  });

  afterAll(async () => {
    await db?.close();
  });

  /** Appends a session.created the way sign-in does; returns the raw token, which only the client keeps. */
  async function signIn(sessionId: string, userId: string, overrides: { rememberMe?: boolean } = {}): Promise<string> {
    const token = generateSessionToken();
    await db.store.append([
      domainWrite(
        streams.session(sessionId),
        'no_stream',
        [
          SessionCreated({
            sessionId,
            userId,
            tokenHash: hashToken(token),
            expiresAt,
            ipAddress: '203.0.113.7',
            userAgent: 'vitest',
            rememberMe: overrides.rememberMe ?? true,
            method: 'email-password',
          }),
        ],
        metadataAt(createdAt, { actorId: userId }),
      ),
    ]);
    return token;
  }

  async function sessionRow(sessionId: string): Promise<Record<string, unknown> | null> {
    return (await db.pool.maybeOne(sql.unsafe`SELECT * FROM session WHERE id = ${sessionId}`)) as Record<string, unknown> | null;
  }

  it('writes a batch\'s new sessions, changes included, in one statement, and the rows equal those written event by event', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const userId = randomUUID();
    const from = await catchUp(db.store, target);
    const tokens = [await signIn(ids[0]!, userId), await signIn(ids[1]!, userId, { rememberMe: false })];
    await db.store.append([
      domainWrite(streams.session(ids[0]!), 1, [SessionRefreshed({ sessionId: ids[0]!, userId, expiresAt: refreshedExpiresAt })], metadataAt(refreshedAt)),
    ]);
    tokens.push(await signIn(ids[2]!, userId), await signIn(ids[3]!, userId));

    let statements = 0;
    const counted = new PostgresProjectionTarget(db.pool, {
      ...sessionsProjection,
      applyAll: (tx, events) =>
        sessionsProjection.applyAll!.call(sessionsProjection, { query: (q) => ((statements += 1), tx.query(q)), maybeOneFirst: tx.maybeOneFirst }, events),
    });
    await catchUp(db.store, counted);
    // Four creations and a refresh of one of them: the refresh is applied to its row before it is written,
    // and the four rows are one statement, not five.
    expect(statements).toBe(1);
    const batched = await Promise.all(ids.map((id) => sessionRow(id)));

    // The same events once more, one handler call each, from a reset table.
    await db.pool.query(sql.unsafe`DELETE FROM session WHERE id = ANY(${sql.array(ids, 'text')})`);
    const oneByOne = new PostgresProjectionTarget(db.pool, { ...sessionsProjection, applyAll: undefined });
    const recorded = await db.store.readAll({ after: from, limit: 100 });
    await db.pool.query(sql.unsafe`UPDATE projection_checkpoints SET position = ${from} WHERE name = ${sessionsProjection.name}`);
    await catchUp(db.store, oneByOne);
    expect(recorded).toHaveLength(5);
    expect(await Promise.all(ids.map((id) => sessionRow(id)))).toEqual(batched);
    expect(batched[0]).toMatchObject({ expiresAt: Date.parse(refreshedExpiresAt), updatedAt: Date.parse(refreshedAt), token: hashToken(tokens[0]!) });
    expect(batched[1]).toMatchObject({ rememberMe: false, token: hashToken(tokens[1]!) });
  });

  it('session.created gives a row whose token column holds the SHA-256 of the token, never the token', async () => {
    const [sessionId, userId] = [randomUUID(), randomUUID()];
    const token = await signIn(sessionId, userId, { rememberMe: false });
    await catchUp(db.store, target);

    expect(await sessionRow(sessionId)).toEqual({
      id: sessionId,
      expiresAt: Date.parse(expiresAt),
      token: hashToken(token),
      createdAt: Date.parse(createdAt),
      updatedAt: Date.parse(createdAt),
      ipAddress: '203.0.113.7',
      userAgent: 'vitest',
      userId,
      rememberMe: false,
      activeOrganizationId: null,
      activeTeamId: null,
      impersonatedBy: null,
    });
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    const leaked = await db.pool.any(sql.unsafe`SELECT id FROM session WHERE token = ${token} OR id = ${token}`);
    expect(leaked).toEqual([]);
  });

  it('the session of a sign-up lands beside the user events of the same append', async () => {
    const [sessionId, userId] = [randomUUID(), randomUUID()];
    const email = `${userId}@example.test`;
    const token = generateSessionToken();
    const metadata = metadataAt(createdAt, { actorId: userId });
    await db.store.append([
      domainWrite(streams.email(email), 'no_stream', [EmailReserved({ email, userId })], metadata),
      domainWrite(
        streams.user(userId),
        'no_stream',
        [
          UserRegistered({ userId, email, name: 'New', image: null, emailVerified: false }),
          CredentialAccountCreated({ userId, accountId: randomUUID(), passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$x$y' }),
        ],
        metadata,
      ),
      domainWrite(
        streams.session(sessionId),
        'no_stream',
        [
          SessionCreated({
            sessionId,
            userId,
            tokenHash: hashToken(token),
            expiresAt,
            ipAddress: null,
            userAgent: null,
            rememberMe: true,
            method: 'sign-up',
          }),
        ],
        metadata,
      ),
    ]);
    await catchUp(db.store, target);

    expect(await sessionRow(sessionId)).toMatchObject({ userId, token: hashToken(token), ipAddress: null, userAgent: null });
  });

  it('session.refreshed moves expiresAt and updatedAt; session.updated moves updatedAt only', async () => {
    const [sessionId, userId] = [randomUUID(), randomUUID()];
    await signIn(sessionId, userId);
    await db.store.append([
      domainWrite(
        streams.session(sessionId),
        1,
        [SessionRefreshed({ sessionId, userId, expiresAt: refreshedExpiresAt })],
        metadataAt(refreshedAt),
      ),
    ]);
    await catchUp(db.store, target);

    expect(await sessionRow(sessionId)).toMatchObject({
      expiresAt: Date.parse(refreshedExpiresAt),
      createdAt: Date.parse(createdAt),
      updatedAt: Date.parse(refreshedAt),
    });

    const touchedAt = '2026-04-03T08:00:00.000Z';
    await db.store.append([
      domainWrite(streams.session(sessionId), 2, [SessionUpdated({ sessionId, userId, changes: {} })], metadataAt(touchedAt)),
    ]);
    await catchUp(db.store, target);
    expect(await sessionRow(sessionId)).toMatchObject({ expiresAt: Date.parse(refreshedExpiresAt), updatedAt: Date.parse(touchedAt) });
  });

  it('session.revoked deletes the row and leaves the user’s other sessions', async () => {
    const userId = randomUUID();
    const [revoked, kept] = [randomUUID(), randomUUID()];
    await signIn(revoked, userId);
    await signIn(kept, userId);
    await catchUp(db.store, target);
    expect(await sessionRow(revoked)).not.toBeNull();

    await db.store.append([
      domainWrite(streams.session(revoked), 1, [SessionRevoked({ sessionId: revoked, userId, tokenHash: null, reason: 'signed_out' })], metadataAt(refreshedAt)),
    ]);
    await catchUp(db.store, target);

    expect(await sessionRow(revoked)).toBeNull();
    expect(await sessionRow(kept)).not.toBeNull();
  });

  it('a whole life in one batch (created, refreshed, revoked) leaves no row, and its neighbour intact', async () => {
    const userId = randomUUID();
    const [shortLived, neighbour] = [randomUUID(), randomUUID()];
    const checkpoint = await catchUp(db.store, target);
    await signIn(shortLived, userId);
    await signIn(neighbour, userId);
    await db.store.append([
      domainWrite(streams.session(shortLived), 1, [SessionRefreshed({ sessionId: shortLived, userId, expiresAt: refreshedExpiresAt })], metadataAt(refreshedAt)),
    ]);
    await db.store.append([
      domainWrite(streams.session(neighbour), 1, [SessionRefreshed({ sessionId: neighbour, userId, expiresAt: refreshedExpiresAt })], metadataAt(refreshedAt)),
    ]);
    const { position } = await db.store.append([
      domainWrite(streams.session(shortLived), 2, [SessionRevoked({ sessionId: shortLived, userId, tokenHash: null, reason: 'revoked' })], metadataAt(refreshedAt)),
    ]);

    expect(position - checkpoint).toBe(5);
    expect(await catchUp(db.store, target, 100)).toBe(position);

    expect(await sessionRow(shortLived)).toBeNull();
    expect(await sessionRow(neighbour)).toMatchObject({ expiresAt: Date.parse(refreshedExpiresAt) });
  });
  describe('active organization and team', () => {
    const selectedAt = '2026-04-04T08:00:00.000Z';

    async function select(sessionId: string, userId: string, activeOrganizationId: string | null, activeTeamId: string | null): Promise<void> {
      await db.store.append([
        domainWrite(
          streams.session(sessionId),
          'any',
          [SessionActiveOrganizationChanged({ sessionId, userId, activeOrganizationId, activeTeamId })],
          metadataAt(selectedAt, { actorId: userId }),
        ),
      ]);
    }

    async function onOrganization(organizationId: string, events: DomainEvent[]): Promise<void> {
      await db.store.append([domainWrite(streams.organization(organizationId), 'any', events, metadataAt(selectedAt))]);
    }

    /** A signed-in session working in `organizationId` (and `teamId`). */
    async function working(userId: string, organizationId: string, teamId: string | null = null): Promise<string> {
      const sessionId = randomUUID();
      await signIn(sessionId, userId);
      await select(sessionId, userId, organizationId, teamId);
      return sessionId;
    }

    async function selection(sessionId: string): Promise<{ activeOrganizationId: string | null; activeTeamId: string | null }> {
      const row = await sessionRow(sessionId);
      return { activeOrganizationId: row?.activeOrganizationId as string | null, activeTeamId: row?.activeTeamId as string | null };
    }

    it('session.active_organization_changed sets both columns to the values it carries, and moves updatedAt', async () => {
      const [sessionId, userId, organizationId, teamId, otherOrganizationId] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      await signIn(sessionId, userId);
      await catchUp(db.store, target);
      expect(await selection(sessionId)).toEqual({ activeOrganizationId: null, activeTeamId: null });

      await select(sessionId, userId, organizationId, teamId);
      await catchUp(db.store, target);
      // A change of selection is an update of the session: better-auth moves updatedAt on every update.
      expect(await sessionRow(sessionId)).toMatchObject({
        activeOrganizationId: organizationId,
        activeTeamId: teamId,
        userId,
        updatedAt: Date.parse(selectedAt),
      });

      await select(sessionId, userId, otherOrganizationId, null);
      await catchUp(db.store, target);
      expect(await selection(sessionId)).toEqual({ activeOrganizationId: otherOrganizationId, activeTeamId: null });

      await select(sessionId, userId, null, null);
      await catchUp(db.store, target);
      expect(await selection(sessionId)).toEqual({ activeOrganizationId: null, activeTeamId: null });
    });

    it('a member who leaves or is removed loses the organization (and its team) on each of their sessions, and no one else does', async () => {
      const [leaver, removed, stays] = [randomUUID(), randomUUID(), randomUUID()];
      const [organizationId, elsewhere, teamId] = [randomUUID(), randomUUID(), randomUUID()];
      const leaverHere = [await working(leaver, organizationId, teamId), await working(leaver, organizationId)];
      const leaverElsewhere = await working(leaver, elsewhere, randomUUID());
      const removedHere = await working(removed, organizationId, teamId);
      const staysHere = await working(stays, organizationId, teamId);
      await onOrganization(organizationId, [
        MemberRemoved({ organizationId, memberId: randomUUID(), userId: leaver, reason: 'left' }),
        MemberRemoved({ organizationId, memberId: randomUUID(), userId: removed, reason: 'removed' }),
      ]);
      await catchUp(db.store, target);

      for (const sessionId of [...leaverHere, removedHere]) {
        expect(await selection(sessionId)).toEqual({ activeOrganizationId: null, activeTeamId: null });
      }
      expect(await selection(leaverElsewhere)).toMatchObject({ activeOrganizationId: elsewhere });
      expect(await selection(staysHere)).toEqual({ activeOrganizationId: organizationId, activeTeamId: teamId });
    });

    it('deleting an organization clears it on every session that has it active', async () => {
      const [organizationId, survivor, teamId] = [randomUUID(), randomUUID(), randomUUID()];
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      const cleared = [await working(a, organizationId, teamId), await working(b, organizationId)];
      const kept = await working(c, survivor, randomUUID());
      await onOrganization(organizationId, [OrganizationDeleted({ organizationId, slug: `slug-${organizationId}`, memberUserIds: [a, b] })]);
      await catchUp(db.store, target);

      for (const sessionId of cleared) expect(await selection(sessionId)).toEqual({ activeOrganizationId: null, activeTeamId: null });
      expect(await selection(kept)).toMatchObject({ activeOrganizationId: survivor });
    });

    it('leaving a team clears it for that user; removing a team clears it for everyone; the organization stays active', async () => {
      const [organizationId, teamId, otherTeamId] = [randomUUID(), randomUUID(), randomUUID()];
      const [u, v, w] = [randomUUID(), randomUUID(), randomUUID()];
      const uSession = await working(u, organizationId, teamId);
      const vSession = await working(v, organizationId, teamId);
      const wSession = await working(w, organizationId, otherTeamId);

      await onOrganization(organizationId, [TeamMemberRemoved({ organizationId, teamId, teamMemberId: randomUUID(), userId: u })]);
      await catchUp(db.store, target);
      expect(await selection(uSession)).toEqual({ activeOrganizationId: organizationId, activeTeamId: null });
      expect(await selection(vSession)).toEqual({ activeOrganizationId: organizationId, activeTeamId: teamId });

      await onOrganization(organizationId, [TeamRemoved({ organizationId, teamId })]);
      await catchUp(db.store, target);
      expect(await selection(vSession)).toEqual({ activeOrganizationId: organizationId, activeTeamId: null });
      expect(await selection(wSession)).toEqual({ activeOrganizationId: organizationId, activeTeamId: otherTeamId });
    });
  });
});
