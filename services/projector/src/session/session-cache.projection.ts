import type { CachedSession, User } from '@portcullis/contracts';
import { projectionNames } from '@portcullis/contracts';
import type { RedisBatch, RedisProjection, SessionCacheKeys } from '@portcullis/platform';

/**
 * The Redis session cache: `session:<tokenHash>` holds the `{session, user}` that get-session answers,
 * expiring at the session's expiresAt. It keeps its own copy of each user so that it never depends on how
 * far another projection has got, and rewrites every live session of a user when the user changes.
 */
export function sessionCacheProjection(keys: SessionCacheKeys): RedisProjection {
  const name = projectionNames.sessionCache;

  async function rewriteUserSessions(batch: RedisBatch, user: User): Promise<void> {
    const userSessions = keys.userSessions(user.id);
    for (const tokenHash of await batch.members(userSessions)) {
      const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
      if (!cached) {
        await batch.removeMember(userSessions, tokenHash);
        continue;
      }
      batch.setJson(keys.session(tokenHash), { ...cached, user }, Date.parse(cached.session.expiresAt));
    }
  }

  async function dropSession(batch: RedisBatch, sessionId: string, userId: string): Promise<void> {
    const tokenHash = await batch.getString(keys.sessionToken(sessionId));
    if (tokenHash === null) return;
    batch.delete(keys.session(tokenHash));
    batch.delete(keys.sessionToken(sessionId));
    await batch.removeMember(keys.userSessions(userId), tokenHash);
  }

  return {
    name,
    keyPattern: keys.all,
    checkpointKey: keys.checkpoint(name),
    async apply(batch, { event, recorded }) {
      const at = recorded.metadata.occurredAt;
      switch (event.type) {
        case 'user.registered.v1': {
          const u = event.data;
          const user: User = {
            id: u.userId,
            email: u.email,
            name: u.name,
            image: u.image,
            emailVerified: u.emailVerified,
            createdAt: at,
            updatedAt: at,
          };
          batch.setJson(keys.user(u.userId), user);
          return;
        }
        case 'user.updated.v1': {
          const current = await batch.getJson<User>(keys.user(event.data.userId));
          if (!current) return;
          const { userId: _id, ...changes } = event.data;
          const user: User = {
            ...current,
            ...(changes.name !== undefined ? { name: changes.name } : {}),
            ...(changes.image !== undefined ? { image: changes.image } : {}),
            updatedAt: at,
          };
          batch.setJson(keys.user(user.id), user);
          await rewriteUserSessions(batch, user);
          return;
        }
        case 'user.username_changed.v1': {
          const current = await batch.getJson<User>(keys.user(event.data.userId));
          if (!current) return;
          const { username: _username, displayUsername: _displayUsername, ...rest } = current;
          const user: User = {
            ...rest,
            ...(event.data.username !== null ? { username: event.data.username } : {}),
            ...(event.data.displayUsername !== null ? { displayUsername: event.data.displayUsername } : {}),
            updatedAt: at,
          };
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
            },
            user,
          };
          batch.setJson(keys.session(s.tokenHash), cached, expireAt);
          batch.setString(keys.sessionToken(s.sessionId), s.tokenHash, expireAt);
          await batch.addMember(keys.userSessions(s.userId), s.tokenHash);
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
        case 'user.email_verified.v1':
        case 'user.email_changed.v1': {
          const current = await batch.getJson<User>(keys.user(event.data.userId));
          if (!current) return;
          const user: User =
            event.type === 'user.email_changed.v1'
              ? { ...current, email: event.data.email, emailVerified: event.data.emailVerified, updatedAt: at }
              : current.email === event.data.email
                ? { ...current, emailVerified: true, updatedAt: at }
                : current;
          batch.setJson(keys.user(user.id), user);
          await rewriteUserSessions(batch, user);
          return;
        }
        case 'user.deleted.v1': {
          const userId = event.data.userId;
          const userSessions = keys.userSessions(userId);
          for (const tokenHash of await batch.members(userSessions)) {
            const cached = await batch.getJson<CachedSession>(keys.session(tokenHash));
            if (cached) batch.delete(keys.sessionToken(cached.session.id));
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
