import type { CachedSession, User } from '@portcullis/contracts';
import { evolveUserAnswer, projectionEventTypes, projectionNames } from '@portcullis/contracts';
import type { RedisBatch, RedisProjection, SessionCacheKeys } from '@portcullis/platform';

type ActiveSelection = Pick<CachedSession['session'], 'activeOrganizationId' | 'activeTeamId'>;

const noSelection: ActiveSelection = { activeOrganizationId: null, activeTeamId: null };

/** Entries cached before sessions had an active organization lack the fields; they mean none. */
function selectionOf(cached: CachedSession): ActiveSelection {
  return { activeOrganizationId: cached.session.activeOrganizationId ?? null, activeTeamId: cached.session.activeTeamId ?? null };
}

/**
 * The Redis session cache: `session:<tokenHash>` holds the `{session, user}` that get-session answers,
 * expiring at the session's expiresAt. It keeps its own copy of each user so that it never depends on how
 * far another projection has got, and rewrites every live session of a user when the user changes.
 *
 * Sessions working in an organization or team are also listed under it (`organization-sessions:<id>`,
 * `team-sessions:<id>`): deleting an organization or removing a team must clear it on every session that
 * has it active, and neither event names those sessions. A set may keep the hash of a session that has
 * since expired; whoever visits it drops such entries.
 */
export function sessionCacheProjection(keys: SessionCacheKeys): RedisProjection {
  const name = projectionNames.sessionCache;

  async function rewriteUserSessions(batch: RedisBatch, user: User): Promise<void> {
    const userSessions = keys.userSessions(user.id);
    for (const tokenHash of await batch.members(userSessions)) {
      const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
      if (!cached) {
        batch.removeMember(userSessions, tokenHash);
        continue;
      }
      batch.setJson(keys.session(tokenHash), { ...cached, user }, Date.parse(cached.session.expiresAt));
    }
  }

  /** Moves a session's entry from the index sets of its old selection to those of its new one. */
  function reindex(batch: RedisBatch, tokenHash: string, before: ActiveSelection, after: ActiveSelection): void {
    if (before.activeOrganizationId !== after.activeOrganizationId) {
      if (before.activeOrganizationId !== null) batch.removeMember(keys.organizationSessions(before.activeOrganizationId), tokenHash);
      if (after.activeOrganizationId !== null) batch.addMember(keys.organizationSessions(after.activeOrganizationId), tokenHash);
    }
    if (before.activeTeamId !== after.activeTeamId) {
      if (before.activeTeamId !== null) batch.removeMember(keys.teamSessions(before.activeTeamId), tokenHash);
      if (after.activeTeamId !== null) batch.addMember(keys.teamSessions(after.activeTeamId), tokenHash);
    }
  }

  /** A change of selection is an update of the session, so it moves updatedAt (better-auth's onUpdate). */
  function select(batch: RedisBatch, tokenHash: string, cached: CachedSession, selection: ActiveSelection, at: string): void {
    reindex(batch, tokenHash, selectionOf(cached), selection);
    const session = { ...cached.session, ...selection, updatedAt: at };
    batch.setJson(keys.session(tokenHash), { ...cached, session }, Date.parse(cached.session.expiresAt));
  }

  /**
   * Visits the cached sessions listed under `setKey` (dropping entries whose session is gone) and gives
   * each one the selection `change` returns for it, or leaves it when that is null.
   */
  async function reselect(
    batch: RedisBatch,
    setKey: string,
    at: string,
    change: (current: ActiveSelection) => ActiveSelection | null,
  ): Promise<void> {
    for (const tokenHash of await batch.members(setKey)) {
      const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
      if (!cached) {
        batch.removeMember(setKey, tokenHash);
        continue;
      }
      const next = change(selectionOf(cached));
      if (next !== null) select(batch, tokenHash, cached, next, at);
    }
  }

  async function dropSession(batch: RedisBatch, sessionId: string, userId: string): Promise<void> {
    const tokenHash = await batch.getString(keys.sessionToken(sessionId));
    if (tokenHash === null) return;
    const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
    if (cached) reindex(batch, tokenHash, selectionOf(cached), noSelection);
    batch.delete(keys.session(tokenHash));
    batch.delete(keys.sessionToken(sessionId));
    batch.removeMember(keys.userSessions(userId), tokenHash);
  }

  return {
    name,
    keyPattern: keys.all,
    checkpointKey: keys.checkpoint(name),
    checkpointChannel: keys.checkpointChannel,
    handles: projectionEventTypes[name],
    readsOf({ event }) {
      switch (event.type) {
        case 'session.created.v1':
        case 'user.updated.v1':
        case 'user.username_changed.v1':
        case 'user.email_verified.v1':
        case 'user.email_changed.v1':
          return [keys.user(event.data.userId)];
        default:
          return [];
      }
    },
    async apply(batch, { event, recorded }) {
      const at = recorded.metadata.occurredAt;
      switch (event.type) {
        case 'user.registered.v1':
          batch.setJson(keys.user(event.data.userId), evolveUserAnswer(null, event, at));
          return;
        case 'user.updated.v1':
        case 'user.username_changed.v1':
        case 'user.email_verified.v1':
        case 'user.email_changed.v1': {
          const current = await batch.getJson<User>(keys.user(event.data.userId));
          if (!current) return;
          const user = evolveUserAnswer(current, event, at);
          if (user === null || user === current) return;
          batch.setJson(keys.user(user.id), user);
          await rewriteUserSessions(batch, user);
          return;
        }
        case 'session.created.v1': {
          const s = event.data;
          const user = await batch.getJson<User>(keys.user(s.userId));
          if (!user) return;
          const expireAt = Date.parse(s.expiresAt);
          const cached: CachedSession = {
            session: {
              id: s.sessionId,
              userId: s.userId,
              expiresAt: s.expiresAt,
              createdAt: at,
              updatedAt: at,
              ipAddress: s.ipAddress,
              userAgent: s.userAgent,
              rememberMe: s.rememberMe,
              ...noSelection,
            },
            user,
          };
          batch.setJson(keys.session(s.tokenHash), cached, expireAt);
          batch.setString(keys.sessionToken(s.sessionId), s.tokenHash, expireAt);
          batch.addMember(keys.userSessions(s.userId), s.tokenHash);
          return;
        }
        case 'session.refreshed.v1':
        case 'session.updated.v1': {
          const tokenHash = await batch.getString(keys.sessionToken(event.data.sessionId));
          if (tokenHash === null) return;
          const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
          if (!cached) return;
          const expiresAt = event.type === 'session.refreshed.v1' ? event.data.expiresAt : cached.session.expiresAt;
          const next: CachedSession = { ...cached, session: { ...cached.session, expiresAt, updatedAt: at } };
          batch.setJson(keys.session(tokenHash), next, Date.parse(expiresAt));
          batch.setString(keys.sessionToken(event.data.sessionId), tokenHash, Date.parse(expiresAt));
          return;
        }
        case 'session.revoked.v1':
          await dropSession(batch, event.data.sessionId, event.data.userId);
          return;
        case 'session.active_organization_changed.v1': {
          const c = event.data;
          const tokenHash = await batch.getString(keys.sessionToken(c.sessionId));
          if (tokenHash === null) return;
          const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
          if (!cached) return;
          select(batch, tokenHash, cached, { activeOrganizationId: c.activeOrganizationId, activeTeamId: c.activeTeamId }, at);
          return;
        }
        case 'organization.member_removed.v1': {
          const { organizationId, userId } = event.data;
          await reselect(batch, keys.userSessions(userId), at, (current) =>
            current.activeOrganizationId === organizationId ? noSelection : null,
          );
          return;
        }
        case 'organization.deleted.v1': {
          const { organizationId } = event.data;
          const setKey = keys.organizationSessions(organizationId);
          await reselect(batch, setKey, at, (current) => (current.activeOrganizationId === organizationId ? noSelection : null));
          batch.delete(setKey);
          return;
        }
        case 'organization.team_removed.v1': {
          const { teamId } = event.data;
          const setKey = keys.teamSessions(teamId);
          await reselect(batch, setKey, at, (current) => (current.activeTeamId === teamId ? { ...current, activeTeamId: null } : null));
          batch.delete(setKey);
          return;
        }
        case 'organization.team_member_removed.v1': {
          const { teamId, userId } = event.data;
          await reselect(batch, keys.userSessions(userId), at, (current) =>
            current.activeTeamId === teamId ? { ...current, activeTeamId: null } : null,
          );
          return;
        }
        case 'user.deleted.v1': {
          const userId = event.data.userId;
          const userSessions = keys.userSessions(userId);
          for (const tokenHash of await batch.members(userSessions)) {
            const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
            if (cached) {
              batch.delete(keys.sessionToken(cached.session.id));
              reindex(batch, tokenHash, selectionOf(cached), noSelection);
            }
            batch.delete(keys.session(tokenHash));
          }
          batch.delete(userSessions);
          // Without its user, a session created in a race with the deletion is not cached either.
          batch.delete(keys.user(userId));
          return;
        }
        default:
          return;
      }
    },
  };
}
