import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventSchemasByType, streams } from '@portcullis/contracts';
import { createRedisClient, hashToken, RedisProjectionTarget, sessionCacheLayout, sql, type ProjectionTarget, type Redis, type StreamWrite } from '@portcullis/platform';
import { PostgresProjectionTarget } from '@portcullis/platform';
import { auditIndexProjection } from '../../services/projector/src/audit/audit-index.projection.ts';
import { identityProjection } from '../../services/projector/src/identity/identity.projection.ts';
import { organizationsProjection } from '../../services/projector/src/organization/organizations.projection.ts';
import { sessionCacheProjection } from '../../services/projector/src/session/session-cache.projection.ts';
import { sessionsProjection } from '../../services/projector/src/session/sessions.projection.ts';
import { userHistoryFrom } from '../../services/projector/src/session/user-history.ts';
import { catchUp, createEventLogDatabase, metadataAt, type EventLogDatabase } from '../support/event-log.ts';
import { deleteRedisKeys, testRedisUrl, uniqueRedisPrefix } from '../support/redis.ts';

const at = new Date();
const expiresAt = new Date(at.getTime() + 7 * 24 * 3600 * 1000).toISOString();
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$aGlzdG9yeXNhbHQ$aGlzdG9yeWhhc2hoaXN0b3J5';
const SCRYPT = `${'5a'.repeat(16)}:${'c3'.repeat(64)}`;
const REHASHED = '$argon2id$v=19$m=24576,p=1,t=3$cmVoYXNoZWRzYWx0$cmVoYXNoZWRoYXNocmVoYXNoZWQ';

/**
 * A log that holds every version of every event this code reads, old ones as they were written then, in an
 * order that makes sense (a user, sessions, an organization...), replayed through every projection. Older
 * versions are upcast on the way; nothing fails, and what the replay builds is what the history says.
 */
describe('replaying every historical version of every event', () => {
  let db: EventLogDatabase;
  let redis: Redis | null = null;
  const prefix = uniqueRedisPrefix();
  const userId = randomUUID();
  const email = `history-${userId}@example.test`;
  const organizationId = randomUUID();
  const teamId = randomUUID();
  const sessions = { v1Revoked: randomUUID(), v2Revoked: randomUUID(), kept: randomUUID() };
  const impersonation = randomUUID();
  const adminId = randomUUID();
  const tokenHash = (sessionId: string): string => hashToken(`token-of-${sessionId}`);
  const githubAccountId = randomUUID();
  const STATE_HASH = hashToken(`state-of-${userId}`);
  const credentialAccountId = randomUUID();
  const importedUserId = randomUUID();
  const importedAccountId = randomUUID();

  /** One example of each type and version, as written when it was current, on the stream it belongs to. */
  const history: Array<{ stream: string; type: string; data: Record<string, unknown> }> = [
    { stream: streams.email(email), type: 'email.reserved.v1', data: { email, userId } },
    { stream: streams.user(userId), type: 'user.registered.v1', data: { userId, email, name: 'History', image: null, emailVerified: false } },
    { stream: streams.user(userId), type: 'user.credential_account_created.v1', data: { userId, accountId: credentialAccountId, passwordHash: HASH } },
    // An account imported from better-auth with its scrypt hash, replaced at its first sign-in.
    { stream: streams.user(importedUserId), type: 'user.registered.v1', data: { userId: importedUserId, email: `imported-${email}`, name: 'Imported', image: null, emailVerified: true } },
    { stream: streams.user(importedUserId), type: 'user.credential_account_created.v2', data: { userId: importedUserId, accountId: importedAccountId, passwordHash: SCRYPT } },
    {
      stream: streams.user(importedUserId),
      type: 'user.password_rehashed.v1',
      data: { userId: importedUserId, accountId: importedAccountId, passwordHash: HASH, previous: 'better-auth-scrypt', cost: { memoryKiB: 19_456, iterations: 2, parallelism: 1 } },
    },
    {
      stream: streams.user(userId),
      type: 'user.password_rehashed.v1',
      data: { userId, accountId: credentialAccountId, passwordHash: REHASHED, previous: 'argon2', cost: { memoryKiB: 24_576, iterations: 3, parallelism: 1 } },
    },
    { stream: streams.user(userId), type: 'user.updated.v1', data: { userId, name: 'History Renamed' } },
    { stream: streams.username('historic'), type: 'username.reserved.v1', data: { username: 'historic', userId } },
    { stream: streams.user(userId), type: 'user.username_changed.v1', data: { userId, username: 'historic', displayUsername: 'Historic' } },
    { stream: streams.user(userId), type: 'user.email_verified.v1', data: { userId, email } },
    { stream: streams.username('historic'), type: 'username.released.v1', data: { username: 'historic', userId } },
    // A provider's sign-in: its flow, the account claimed and linked, new tokens, then unlinked and released.
    { stream: streams.socialFlow(STATE_HASH), type: 'social.flow_started.v1', data: { stateHash: STATE_HASH, providerId: 'github', callbackURL: '/', errorURL: null, newUserURL: null, requestSignUp: false, linkUserId: userId, linkEmail: email, expiresAt } },
    { stream: streams.socialFlow(STATE_HASH), type: 'social.flow_finished.v1', data: { stateHash: STATE_HASH } },
    { stream: streams.providerAccount('github', '4242'), type: 'provider_account.claimed.v1', data: { providerId: 'github', providerAccountId: '4242', userId, accountId: githubAccountId } },
    {
      stream: streams.user(userId),
      type: 'user.provider_account_linked.v1',
      data: { userId, accountId: githubAccountId, providerId: 'github', providerAccountId: '4242', scope: 'read:user', accessToken: 'gho_history', refreshToken: null, idToken: null, accessTokenExpiresAt: expiresAt, refreshTokenExpiresAt: null },
    },
    {
      stream: streams.user(userId),
      type: 'user.provider_tokens_updated.v1',
      data: { userId, accountId: githubAccountId, providerId: 'github', accessToken: 'gho_renewed', refreshToken: null, idToken: null, accessTokenExpiresAt: expiresAt, refreshTokenExpiresAt: null },
    },
    { stream: streams.user(userId), type: 'user.account_unlinked.v1', data: { userId, accountId: githubAccountId, providerId: 'github' } },
    { stream: streams.providerAccount('github', '4242'), type: 'provider_account.released.v1', data: { providerId: 'github', providerAccountId: '4242', userId } },
    ...Object.values(sessions).flatMap((sessionId) => [
      // The first version knew no providers: the kept session is the second's, opened by a provider.
      sessionId === sessions.kept
        ? {
            stream: streams.session(sessionId),
            type: 'session.created.v2',
            data: { sessionId, userId, tokenHash: tokenHash(sessionId), expiresAt, ipAddress: '203.0.113.1', userAgent: 'history', rememberMe: true, method: 'social', providerId: 'github' },
          }
        : {
            stream: streams.session(sessionId),
            type: 'session.created.v1',
            data: { sessionId, userId, tokenHash: tokenHash(sessionId), expiresAt, ipAddress: '203.0.113.1', userAgent: 'history', rememberMe: true, method: 'email-password' },
          },
      { stream: streams.userSessions(userId), type: 'session_index.session_opened.v1', data: { userId, sessionId, tokenHash: tokenHash(sessionId), expiresAt } },
    ]),
    { stream: streams.session(sessions.kept), type: 'session.refreshed.v1', data: { sessionId: sessions.kept, userId, expiresAt } },
    { stream: streams.session(sessions.kept), type: 'session.updated.v1', data: { sessionId: sessions.kept, userId, changes: {} } },
    { stream: streams.userSessions(userId), type: 'session_index.session_extended.v1', data: { userId, sessionId: sessions.kept, expiresAt } },
    // The first version of a revocation named no token hash.
    { stream: streams.session(sessions.v1Revoked), type: 'session.revoked.v1', data: { sessionId: sessions.v1Revoked, userId, reason: 'signed_out' } },
    {
      stream: streams.session(sessions.v2Revoked),
      type: 'session.revoked.v2',
      data: { sessionId: sessions.v2Revoked, userId, tokenHash: tokenHash(sessions.v2Revoked), reason: 'password_reset' },
    },
    { stream: streams.userSessions(userId), type: 'session_index.sessions_closed.v1', data: { userId, sessionIds: [sessions.v1Revoked, sessions.v2Revoked] } },
    { stream: streams.signIn(email), type: 'credentials.sign_in_failed.v1', data: { email, userId, reason: 'invalid_password' } },
    { stream: streams.usernameSignIn('historic'), type: 'credentials.username_sign_in_failed.v1', data: { username: 'historic', userId, reason: 'invalid_password' } },
    { stream: streams.signIn(email), type: 'credentials.sign_in_locked.v1', data: { identifier: email, userId, failures: 5, lockedUntil: expiresAt } },
    { stream: streams.signIn(email), type: 'credentials.sign_in_unlocked.v1', data: { identifier: email, userId, reason: 'password_reset' } },
    { stream: streams.accountSignIn(userId), type: 'credentials.account_sign_in_failed.v1', data: { userId, via: 'username', reason: 'invalid_password' } },
    { stream: streams.accountSignIn(userId), type: 'credentials.account_sign_in_locked.v1', data: { userId, failures: 5, lockedUntil: expiresAt } },
    { stream: streams.accountSignIn(userId), type: 'credentials.account_sign_in_unlocked.v1', data: { userId, reason: 'password_reset' } },
    { stream: streams.perimeter('203.0.113.1'), type: 'perimeter.sign_in_rate_limited.v1', data: { route: '/sign-in/email', max: 3, windowSeconds: 10 } },
    { stream: streams.perimeter('203.0.113.1'), type: 'perimeter.captcha_refused.v1', data: { route: '/sign-in/email', reason: 'failed' } },
    { stream: streams.user(userId), type: 'user.password_changed.v1', data: { userId, accountId: randomUUID(), passwordHash: HASH, via: 'reset-password' } },
    {
      stream: streams.verification('a'.repeat(64)),
      type: 'verification.token_issued.v1',
      data: { purpose: 'reset-password', tokenHash: 'a'.repeat(64), userId, expiresAt },
    },
    { stream: streams.passwordReset(userId), type: 'verification.password_reset_link_issued.v1', data: { userId, tokenHash: 'a'.repeat(64), expiresAt } },
    {
      stream: streams.verification('b'.repeat(64)),
      type: 'verification.token_issued.v1',
      data: { purpose: 'reset-password', tokenHash: 'b'.repeat(64), userId, expiresAt },
    },
    { stream: streams.verification('b'.repeat(64)), type: 'verification.token_revoked.v1', data: { purpose: 'reset-password', tokenHash: 'b'.repeat(64), userId, reason: 'superseded' } },
    { stream: streams.verification('a'.repeat(64)), type: 'verification.token_consumed.v1', data: { purpose: 'reset-password', tokenHash: 'a'.repeat(64), userId } },
    {
      stream: streams.mail(randomUUID()),
      type: 'mail.job_queued.v1',
      // As written before invitation mail existed: no `invitation` field at all.
      data: { jobId: randomUUID(), kind: 'password-reset', userId, to: email, name: 'History', sealedToken: 'sealed', callbackURL: null, expiresAt, newEmail: null },
    },
    { stream: streams.mail(randomUUID()), type: 'mail.retry_requested.v1', data: { jobId: randomUUID(), kind: 'password-reset', userId } },
    { stream: streams.organizationSlug('history'), type: 'organization.slug_reserved.v1', data: { slug: 'history', organizationId } },
    {
      stream: streams.organization(organizationId),
      type: 'organization.created.v1',
      data: { organizationId, name: 'History Inc', slug: 'history', logo: null, metadata: null, createdByUserId: userId },
    },
    {
      stream: streams.organization(organizationId),
      type: 'organization.member_added.v1',
      data: { organizationId, memberId: randomUUID(), userId, role: 'owner', teamId: null, via: 'creator' },
    },
    { stream: streams.userOrganizations(userId), type: 'organization_index.joined.v1', data: { userId, organizationId } },
    { stream: streams.organization(organizationId), type: 'organization.updated.v1', data: { organizationId, name: 'History Ltd' } },
    { stream: streams.organization(organizationId), type: 'organization.team_created.v1', data: { organizationId, teamId, name: 'Archivists' } },
    { stream: streams.organization(organizationId), type: 'organization.team_updated.v1', data: { organizationId, teamId, name: 'Curators' } },
    {
      stream: streams.organization(organizationId),
      type: 'organization.team_member_added.v1',
      data: { organizationId, teamId, teamMemberId: randomUUID(), userId },
    },
    {
      stream: streams.session(sessions.kept),
      type: 'session.active_organization_changed.v1',
      data: { sessionId: sessions.kept, userId, activeOrganizationId: organizationId, activeTeamId: teamId },
    },
    {
      stream: streams.organization(organizationId),
      type: 'organization.invitation_created.v1',
      data: { organizationId, invitationId: 'inv-1', email: 'guest@example.test', role: 'member', teamId: null, inviterId: userId, expiresAt },
    },
    { stream: streams.organization(organizationId), type: 'organization.invitation_resent.v1', data: { organizationId, invitationId: 'inv-1', inviterId: userId, expiresAt } },
    { stream: streams.organization(organizationId), type: 'organization.invitation_rejected.v1', data: { organizationId, invitationId: 'inv-1', userId } },
    {
      stream: streams.organization(organizationId),
      type: 'organization.invitation_created.v1',
      data: { organizationId, invitationId: 'inv-2', email: 'other@example.test', role: 'member', teamId: null, inviterId: userId, expiresAt },
    },
    { stream: streams.organization(organizationId), type: 'organization.invitation_canceled.v1', data: { organizationId, invitationId: 'inv-2', byUserId: userId } },
    {
      stream: streams.organization(organizationId),
      type: 'organization.invitation_created.v1',
      data: { organizationId, invitationId: 'inv-3', email, role: 'admin', teamId: null, inviterId: userId, expiresAt },
    },
    { stream: streams.organization(organizationId), type: 'organization.invitation_accepted.v1', data: { organizationId, invitationId: 'inv-3', userId } },
    { stream: streams.organization(organizationId), type: 'organization.member_role_changed.v1', data: { organizationId, memberId: 'm-2', userId, role: 'admin' } },
    {
      stream: streams.organization(organizationId),
      type: 'organization.team_member_removed.v1',
      data: { organizationId, teamId, teamMemberId: randomUUID(), userId },
    },
    { stream: streams.organization(organizationId), type: 'organization.team_removed.v1', data: { organizationId, teamId } },
    { stream: streams.organization(organizationId), type: 'organization.member_removed.v1', data: { organizationId, memberId: 'm-2', userId, reason: 'left' } },
    { stream: streams.userOrganizations(userId), type: 'organization_index.left.v1', data: { userId, organizationId } },
    { stream: streams.organization(organizationId), type: 'organization.deleted.v1', data: { organizationId, slug: 'history', memberUserIds: [] } },
    { stream: streams.organizationSlug('history'), type: 'organization.slug_released.v1', data: { slug: 'history', organizationId } },
    { stream: streams.user(userId), type: 'user.role_changed.v1', data: { userId, role: 'admin,user' } },
    { stream: streams.user(userId), type: 'user.banned.v1', data: { userId, reason: 'spam', expiresAt } },
    { stream: streams.user(userId), type: 'user.unbanned.v1', data: { userId, reason: 'admin' } },
    {
      stream: streams.session(impersonation),
      type: 'session.impersonation_started.v1',
      data: { sessionId: impersonation, userId, tokenHash: tokenHash(impersonation), expiresAt, ipAddress: null, userAgent: null, impersonatedBy: adminId },
    },
    {
      stream: streams.impersonations(adminId),
      type: 'impersonation_index.session_opened.v1',
      data: { adminId, userId, sessionId: impersonation, tokenHash: tokenHash(impersonation), expiresAt },
    },
    { stream: streams.impersonations(adminId), type: 'impersonation_index.sessions_closed.v1', data: { adminId, sessionIds: [impersonation] } },
    {
      stream: streams.user(userId),
      type: 'user.email_changed.v1',
      data: { userId, previousEmail: email, email: `moved-${email}`, emailVerified: false },
    },
    { stream: streams.email(email), type: 'email.released.v1', data: { email, userId } },
    // Written by a newer version of the service, unknown here: skipped, not a crash.
    { stream: streams.user(userId), type: 'user.nickname_changed.v1', data: { userId, nickname: 'Future' } },
  ];
  const deletedUserId = randomUUID();

  beforeAll(async () => {
    db = await createEventLogDatabase('event_history');
    const url = testRedisUrl();
    if (url) redis = createRedisClient(url, { name: 'event-history-spec' });
    // Appended one by one, each at the version its stream has reached, as the api appends them.
    const versions = new Map<string, number>();
    for (const { stream, type, data } of history) {
      const version = versions.get(stream) ?? 0;
      const write: StreamWrite = { streamId: stream, expectedVersion: version, events: [{ type, data, metadata: metadataAt(at) }] };
      await db.store.append([write]);
      versions.set(stream, version + 1);
    }
    await db.store.append([
      {
        streamId: streams.user(deletedUserId),
        expectedVersion: 'no_stream',
        events: [
          { type: 'user.registered.v1', data: { userId: deletedUserId, email: 'gone@example.test', name: 'Gone', image: null, emailVerified: true }, metadata: metadataAt(at) },
          { type: 'user.deleted.v1', data: { userId: deletedUserId, email: 'gone@example.test' }, metadata: metadataAt(at) },
        ],
      },
    ]);
  });

  afterAll(async () => {
    if (redis) {
      redis.disconnect();
      await deleteRedisKeys(testRedisUrl()!, prefix);
    }
    await db?.close();
  });

  it('holds an example of every version this code reads', () => {
    const examples = new Set([...history.map((h) => h.type), 'user.deleted.v1']);
    expect(Object.keys(eventSchemasByType()).filter((type) => !examples.has(type))).toEqual([]);
  });

  it('replays through every projection, upcasting old versions and skipping unknown ones', async () => {
    const targets: ProjectionTarget[] = [
      new PostgresProjectionTarget(db.pool, identityProjection),
      new PostgresProjectionTarget(db.pool, sessionsProjection),
      new PostgresProjectionTarget(db.pool, organizationsProjection),
      new PostgresProjectionTarget(db.pool, auditIndexProjection),
    ];
    const layout = sessionCacheLayout(prefix, await db.store.logId());
    if (redis) targets.push(new RedisProjectionTarget(redis, sessionCacheProjection(userHistoryFrom(db.store)), layout, db.store));
    const head = await db.store.headPosition();
    for (const target of targets) expect(await catchUp(db.store, target, 7), target.name).toBe(head);

    const user = await db.pool.one(sql.unsafe`SELECT email, name, "emailVerified", username, role, banned FROM "user" WHERE id = ${userId}`);
    expect(user).toEqual({ email: `moved-${email}`, name: 'History Renamed', emailVerified: false, username: 'historic', role: 'admin,user', banned: false });
    expect(await db.pool.anyFirst(sql.unsafe`SELECT id FROM "user" WHERE id = ${deletedUserId}`)).toEqual([]);
    // The provider's account came and went; the password account stays.
    expect(await db.pool.anyFirst(sql.unsafe`SELECT "providerId" FROM account WHERE "userId" = ${userId}`)).toEqual(['credential']);
    // ...with the hash its sign-in rehashed it to.
    expect(await db.pool.anyFirst(sql.unsafe`SELECT password FROM account WHERE id = ${credentialAccountId}`)).toEqual([REHASHED]);
    expect(await db.pool.anyFirst(sql.unsafe`SELECT password FROM account WHERE id = ${importedAccountId}`)).toEqual([HASH]);
    // The v1 revocation (no token hash) and the v2 one both ended their sessions; the third one lives on,
    // its organization and team cleared by the organization's own events.
    expect(
      await db.pool.any(sql.unsafe`SELECT id, "activeOrganizationId", "activeTeamId", "impersonatedBy" FROM session WHERE "userId" = ${userId} ORDER BY "impersonatedBy" NULLS FIRST`),
    ).toEqual([
      { id: sessions.kept, activeOrganizationId: null, activeTeamId: null, impersonatedBy: null },
      { id: impersonation, activeOrganizationId: null, activeTeamId: null, impersonatedBy: adminId },
    ]);
    expect(await db.pool.anyFirst(sql.unsafe`SELECT id FROM organization WHERE id = ${organizationId}`)).toEqual([]);
    // The audit index holds every event this code reads (an unknown type is skipped, as everywhere).
    const known = Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM events WHERE type <> 'user.nickname_changed.v1'`));
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM audit_event`))).toBe(known);
    if (redis) {
      const keys = layout.generation((targets.at(-1) as RedisProjectionTarget).generation!);
      expect(await redis.get(keys.session(tokenHash(sessions.v1Revoked)))).toBeNull();
      expect(await redis.get(keys.session(tokenHash(sessions.v2Revoked)))).toBeNull();
      expect(JSON.parse((await redis.get(keys.session(tokenHash(sessions.kept))))!)).toMatchObject({
        session: { id: sessions.kept, activeOrganizationId: null, activeTeamId: null },
        user: { email: `moved-${email}`, username: 'historic', role: 'admin,user', banned: false },
      });
      expect(JSON.parse((await redis.get(keys.session(tokenHash(impersonation))))!)).toMatchObject({ session: { impersonatedBy: adminId } });
    }
  });
});
