import { LRUCache } from 'lru-cache';
import type { CachedSession, DomainEvent, User } from '@portcullis/contracts';
import { evolveUserAnswer, projectionEventTypes, projectionNames, unbannedUser } from '@portcullis/contracts';
import type { ProjectedEvent, RedisBatch, RedisProjection, SessionCacheKeys } from '@portcullis/platform';

type ActiveSelection = Pick<CachedSession['session'], 'activeOrganizationId' | 'activeTeamId'>;

const noSelection: ActiveSelection = { activeOrganizationId: null, activeTeamId: null };

/**
 * A registered user's entry lives this long before any session needs it; each session then keeps it at
 * least as long as itself. A user whose entry has gone is folded from the log again when a session needs it.
 */
const USER_ENTRY_LIFETIME_MS = 24 * 3600 * 1000;

/** Entries cached before sessions had an active organization lack the fields; they mean none. */
function selectionOf(cached: CachedSession): ActiveSelection {
  return { activeOrganizationId: cached.session.activeOrganizationId ?? null, activeTeamId: cached.session.activeTeamId ?? null };
}

/** Users cached before the admin plugin's fields lack them: such a user was never given a role nor banned. */
function withAdminFields(user: User | null): User | null {
  return user === null ? null : { ...unbannedUser, ...user };
}

/** Where the projection finds a user whose cached entry has expired: the user as the log held it then. */
export interface UserHistory {
  /** The user as folded from its stream up to and including log position `position`, or null. */
  asOf(userId: string, position: number): Promise<User | null>;
}

/** The user whose answer an event changes (what every cached session of theirs shows), or null. */
function userChangedBy(event: DomainEvent): string | null {
  switch (event.type) {
    case 'user.updated.v1':
    case 'user.username_changed.v1':
    case 'user.email_verified.v1':
    case 'user.email_changed.v1':
    case 'user.role_changed.v1':
    case 'user.banned.v1':
    case 'user.unbanned.v1':
      return event.data.userId;
    default:
      return null;
  }
}

/** Sessions whose token hash the projection remembers: most of the sessions a busy hour changes. */
const REMEMBERED_TOKEN_HASHES = 50_000;

/**
 * The Redis session cache: `session:<tokenHash>` holds the `{session, user}` that get-session answers,
 * expiring at the session's expiresAt. It keeps its own copy of each user so that it never depends on how
 * far another projection has got, and rewrites every live session of a user when the user changes.
 *
 * Every key it writes expires: sessions at their expiry, and the keys that index them (a user's sessions,
 * the sessions working in an organization or team, a user's entry) no sooner than the last session they
 * name. Ending a session needs no index: `session.revoked.v2` names the token's hash.
 *
 * Sessions working in an organization or team are also listed under it (`organization-sessions:<id>`,
 * `team-sessions:<id>`): deleting an organization or removing a team must clear it on every session that
 * has it active, and neither event names those sessions. A set may keep the hash of a session that has
 * since expired; whoever visits it drops such entries.
 */
export function sessionCacheProjection(users: UserHistory): RedisProjection {
  const name = projectionNames.sessionCache;
  /**
   * Session id -> token hash, as the log fixed it at the session's creation (it never changes): lets a
   * batch fetch the entry a session change rewrites in its one read ahead, instead of looking the hash up
   * first and then the entry, two round trips more on every set-active's way to its answer.
   */
  const tokenHashes = new LRUCache<string, string>({ max: REMEMBERED_TOKEN_HASHES });
  const rememberTokenHash = (sessionId: string, tokenHash: string): void => {
    tokenHashes.set(sessionId, tokenHash);
  };
  /** The keys a change of session `sessionId` reads: its hash's index, and its entry when the hash is known. */
  const sessionReads = (keys: SessionCacheKeys, sessionId: string): string[] => {
    const known = tokenHashes.get(sessionId);
    return known === undefined ? [keys.sessionToken(sessionId)] : [keys.sessionToken(sessionId), keys.session(known)];
  };
  const tokenHashOf = async (batch: RedisBatch, keys: SessionCacheKeys, sessionId: string): Promise<string | null> => {
    const tokenHash = await batch.getString(keys.sessionToken(sessionId));
    if (tokenHash !== null) rememberTokenHash(sessionId, tokenHash);
    return tokenHash;
  };

  /** The cached sessions a set of token hashes names, read together: [hash, entry or null]. */
  async function sessionsOf(batch: RedisBatch, keys: SessionCacheKeys, setKey: string): Promise<Array<[string, CachedSession | null]>> {
    const members = [...(await batch.members(setKey))];
    const entries = await batch.getJsonAll<CachedSession>(members.map((tokenHash) => keys.session(tokenHash)));
    return members.map((tokenHash, i) => [tokenHash, entries[i] ?? null]);
  }

  async function rewriteUserSessions(batch: RedisBatch, keys: SessionCacheKeys, user: User): Promise<void> {
    const userSessions = keys.userSessions(user.id);
    for (const [tokenHash, cached] of await sessionsOf(batch, keys, userSessions)) {
      if (!cached) {
        batch.removeMember(userSessions, tokenHash);
        continue;
      }
      batch.setJson(keys.session(tokenHash), { ...cached, user }, Date.parse(cached.session.expiresAt));
    }
  }

  /** Moves a session's entry from the index sets of its old selection to those of its new one. */
  function reindex(
    batch: RedisBatch,
    keys: SessionCacheKeys,
    tokenHash: string,
    expiresAtMs: number,
    before: ActiveSelection,
    after: ActiveSelection,
  ): void {
    if (before.activeOrganizationId !== after.activeOrganizationId) {
      if (before.activeOrganizationId !== null) batch.removeMember(keys.organizationSessions(before.activeOrganizationId), tokenHash);
      if (after.activeOrganizationId !== null) {
        const set = keys.organizationSessions(after.activeOrganizationId);
        batch.addMember(set, tokenHash);
        batch.expireNoSoonerThan(set, expiresAtMs);
      }
    }
    if (before.activeTeamId !== after.activeTeamId) {
      if (before.activeTeamId !== null) batch.removeMember(keys.teamSessions(before.activeTeamId), tokenHash);
      if (after.activeTeamId !== null) {
        const set = keys.teamSessions(after.activeTeamId);
        batch.addMember(set, tokenHash);
        batch.expireNoSoonerThan(set, expiresAtMs);
      }
    }
  }

  /** A change of selection is an update of the session, so it moves updatedAt (better-auth's onUpdate). */
  function select(batch: RedisBatch, keys: SessionCacheKeys, tokenHash: string, cached: CachedSession, selection: ActiveSelection, at: string): void {
    const expiresAtMs = Date.parse(cached.session.expiresAt);
    reindex(batch, keys, tokenHash, expiresAtMs, selectionOf(cached), selection);
    const session = { ...cached.session, ...selection, updatedAt: at };
    batch.setJson(keys.session(tokenHash), { ...cached, session }, expiresAtMs);
  }

  /**
   * Visits the cached sessions listed under `setKey` (dropping entries whose session is gone) and gives
   * each one the selection `change` returns for it, or leaves it when that is null.
   */
  async function reselect(
    batch: RedisBatch,
    keys: SessionCacheKeys,
    setKey: string,
    at: string,
    change: (current: ActiveSelection) => ActiveSelection | null,
  ): Promise<void> {
    for (const [tokenHash, cached] of await sessionsOf(batch, keys, setKey)) {
      if (!cached) {
        batch.removeMember(setKey, tokenHash);
        continue;
      }
      const next = change(selectionOf(cached));
      if (next !== null) select(batch, keys, tokenHash, cached, next, at);
    }
  }

  async function dropSession(batch: RedisBatch, keys: SessionCacheKeys, sessionId: string, userId: string, named: string | null): Promise<void> {
    // Events before v2 do not name the hash; the index written at creation still does.
    const tokenHash = named ?? (await tokenHashOf(batch, keys, sessionId));
    tokenHashes.delete(sessionId);
    if (tokenHash === null) return;
    const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
    if (cached) reindex(batch, keys, tokenHash, Date.parse(cached.session.expiresAt), selectionOf(cached), noSelection);
    batch.delete(keys.session(tokenHash));
    batch.delete(keys.sessionToken(sessionId));
    batch.removeMember(keys.userSessions(userId), tokenHash);
  }

  /**
   * The user's cached entry, or the user folded from the log as of this event when the entry has expired
   * (kept then as long as the session that needs it).
   */
  async function userFor(batch: RedisBatch, keys: SessionCacheKeys, userId: string, projected: ProjectedEvent, untilMs: number): Promise<User | null> {
    const cached = withAdminFields(await batch.getJson<User>(keys.user(userId)));
    if (cached) return cached;
    const user = await users.asOf(userId, projected.recorded.position);
    if (user) batch.setJson(keys.user(userId), user, untilMs);
    return user;
  }

  /** Keeps the indexes of a user's sessions at least as long as the session that expires last. */
  function keepUserIndexesUntil(batch: RedisBatch, keys: SessionCacheKeys, userId: string, expiresAtMs: number): void {
    batch.expireNoSoonerThan(keys.user(userId), expiresAtMs);
    batch.expireNoSoonerThan(keys.userSessions(userId), expiresAtMs);
  }

  return {
    name,
    handles: projectionEventTypes[name],
    readsOf({ event }, keys) {
      const changedUser = userChangedBy(event);
      if (changedUser !== null) return [keys.user(changedUser)];
      switch (event.type) {
        case 'session.created.v2':
        case 'session.impersonation_started.v1':
          return [keys.user(event.data.userId)];
        case 'session.refreshed.v1':
        case 'session.updated.v1':
        case 'session.active_organization_changed.v1':
          return sessionReads(keys, event.data.sessionId);
        case 'session.revoked.v2':
          return event.data.tokenHash === null ? sessionReads(keys, event.data.sessionId) : [keys.session(event.data.tokenHash)];
        default:
          return [];
      }
    },
    setReadsOf({ event }, keys) {
      const changedUser = userChangedBy(event);
      if (changedUser !== null) return [keys.userSessions(changedUser)];
      switch (event.type) {
        case 'user.deleted.v1':
        case 'organization.member_removed.v1':
        case 'organization.team_member_removed.v1':
          return [keys.userSessions(event.data.userId)];
        case 'organization.deleted.v1':
          return [keys.organizationSessions(event.data.organizationId)];
        case 'organization.team_removed.v1':
          return [keys.teamSessions(event.data.teamId)];
        default:
          return [];
      }
    },
    async apply(batch, projected, keys) {
      const { event, recorded } = projected;
      const at = recorded.metadata.occurredAt;
      const changedUser = userChangedBy(event);
      if (changedUser !== null) {
        // No entry: the user has no cached session (the entry lives as long as the last one), nothing to change.
        const current = withAdminFields(await batch.getJson<User>(keys.user(changedUser)));
        if (!current) return;
        const user = evolveUserAnswer(current, event, at);
        if (user === null || user === current) return;
        batch.setJson(keys.user(user.id), user, 'keep');
        batch.expireNoSoonerThan(keys.user(user.id), Date.parse(at) + USER_ENTRY_LIFETIME_MS);
        await rewriteUserSessions(batch, keys, user);
        return;
      }
      switch (event.type) {
        case 'user.registered.v1':
          batch.setJson(keys.user(event.data.userId), evolveUserAnswer(null, event, at), Date.parse(at) + USER_ENTRY_LIFETIME_MS);
          return;
        case 'session.created.v2':
        case 'session.impersonation_started.v1': {
          const s = event.type === 'session.created.v2' ? { ...event.data, impersonatedBy: null } : { ...event.data, rememberMe: false };
          const expireAt = Date.parse(s.expiresAt);
          // Over already (a replay of old history): Redis would drop the entry the moment it was written.
          if (expireAt <= Date.now()) return;
          const user = await userFor(batch, keys, s.userId, projected, expireAt);
          if (!user) return;
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
              impersonatedBy: s.impersonatedBy,
            },
            user,
          };
          batch.setJson(keys.session(s.tokenHash), cached, expireAt);
          batch.setString(keys.sessionToken(s.sessionId), s.tokenHash, expireAt);
          rememberTokenHash(s.sessionId, s.tokenHash);
          batch.addMember(keys.userSessions(s.userId), s.tokenHash);
          keepUserIndexesUntil(batch, keys, s.userId, expireAt);
          return;
        }
        case 'session.refreshed.v1':
        case 'session.updated.v1': {
          const tokenHash = await tokenHashOf(batch, keys, event.data.sessionId);
          if (tokenHash === null) return;
          const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
          if (!cached) return;
          const expiresAt = event.type === 'session.refreshed.v1' ? event.data.expiresAt : cached.session.expiresAt;
          const expireAt = Date.parse(expiresAt);
          const next: CachedSession = { ...cached, session: { ...cached.session, expiresAt, updatedAt: at } };
          batch.setJson(keys.session(tokenHash), next, expireAt);
          batch.setString(keys.sessionToken(event.data.sessionId), tokenHash, expireAt);
          keepUserIndexesUntil(batch, keys, cached.session.userId, expireAt);
          const { activeOrganizationId, activeTeamId } = selectionOf(cached);
          if (activeOrganizationId !== null) batch.expireNoSoonerThan(keys.organizationSessions(activeOrganizationId), expireAt);
          if (activeTeamId !== null) batch.expireNoSoonerThan(keys.teamSessions(activeTeamId), expireAt);
          return;
        }
        case 'session.revoked.v2':
          await dropSession(batch, keys, event.data.sessionId, event.data.userId, event.data.tokenHash);
          return;
        case 'session.active_organization_changed.v1': {
          const c = event.data;
          const tokenHash = await tokenHashOf(batch, keys, c.sessionId);
          if (tokenHash === null) return;
          const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
          if (!cached) return;
          select(batch, keys, tokenHash, cached, { activeOrganizationId: c.activeOrganizationId, activeTeamId: c.activeTeamId }, at);
          return;
        }
        case 'organization.member_removed.v1': {
          const { organizationId, userId } = event.data;
          await reselect(batch, keys, keys.userSessions(userId), at, (current) =>
            current.activeOrganizationId === organizationId ? noSelection : null,
          );
          return;
        }
        case 'organization.deleted.v1': {
          const { organizationId } = event.data;
          const setKey = keys.organizationSessions(organizationId);
          await reselect(batch, keys, setKey, at, (current) => (current.activeOrganizationId === organizationId ? noSelection : null));
          batch.delete(setKey);
          return;
        }
        case 'organization.team_removed.v1': {
          const { teamId } = event.data;
          const setKey = keys.teamSessions(teamId);
          await reselect(batch, keys, setKey, at, (current) => (current.activeTeamId === teamId ? { ...current, activeTeamId: null } : null));
          batch.delete(setKey);
          return;
        }
        case 'organization.team_member_removed.v1': {
          const { teamId, userId } = event.data;
          await reselect(batch, keys, keys.userSessions(userId), at, (current) =>
            current.activeTeamId === teamId ? { ...current, activeTeamId: null } : null,
          );
          return;
        }
        case 'user.deleted.v1': {
          // The deletion also ends each session on its own stream (named by hash); this clears what is left.
          const userId = event.data.userId;
          const userSessions = keys.userSessions(userId);
          for (const [tokenHash, cached] of await sessionsOf(batch, keys, userSessions)) {
            if (cached) {
              batch.delete(keys.sessionToken(cached.session.id));
              reindex(batch, keys, tokenHash, Date.parse(cached.session.expiresAt), selectionOf(cached), noSelection);
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
