import { unbannedUser, type CachedSession } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { SessionPorts } from './ports.ts';
import { isoTime } from '../read-model.ts';
import { sessionFromLog } from './session-log.ts';


interface SessionRow {
  id: string;
  userId: string;
  expiresAt: number;
  createdAt: number;
  updatedAt: number;
  ipAddress: string | null;
  userAgent: string | null;
  rememberMe: boolean;
  activeOrganizationId: string | null;
  activeTeamId: string | null;
  impersonatedBy: string | null;
}

interface SessionUserRow extends SessionRow {
  u_id: string;
  u_email: string;
  u_name: string;
  u_image: string | null;
  u_email_verified: boolean;
  u_created_at: number;
  u_updated_at: number;
  u_username: string | null;
  u_display_username: string | null;
  u_role: string;
  u_banned: boolean;
  u_ban_reason: string | null;
  u_ban_expires: number | null;
}

const sessionColumns = sql.fragment`
  s.id, s."userId", s."expiresAt", s."createdAt", s."updatedAt", s."ipAddress", s."userAgent", s."rememberMe",
  s."activeOrganizationId", s."activeTeamId", s."impersonatedBy"`;

function toSession(row: SessionRow): CachedSession['session'] {
  return {
    id: row.id,
    userId: row.userId,
    expiresAt: isoTime(row.expiresAt),
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
    ipAddress: row.ipAddress,
    userAgent: row.userAgent,
    rememberMe: row.rememberMe,
    activeOrganizationId: row.activeOrganizationId,
    activeTeamId: row.activeTeamId,
    impersonatedBy: row.impersonatedBy,
  };
}

/** The cache holds only what our own projection wrote from validated events: parsing is enough. */
function decodeCached(raw: string | null): CachedSession | null {
  return raw === null ? null : withSelection(JSON.parse(raw) as CachedSession);
}

/**
 * Sessions cached before they had an active organization lack the fields, which then mean none; those cached
 * before the admin plugin lack its fields: no impersonator, a user never given a role nor banned.
 */
function withSelection(cached: CachedSession): CachedSession {
  const { activeOrganizationId = null, activeTeamId = null, impersonatedBy = null } = cached.session;
  return { user: { ...unbannedUser, ...cached.user }, session: { ...cached.session, activeOrganizationId, activeTeamId, impersonatedBy } };
}

/**
 * The `{session, user}` for a token hash if this process holds it (the in-process session cache) and that
 * cache may be believed now (see ReadModelProgress), else undefined.
 */
export function heldSessionByTokenHash(ctx: SessionPorts, tokenHash: string): CachedSession | undefined {
  const local = ctx.cache?.local;
  if (!local || !ctx.progress.trusted('held')) return undefined;
  const keys = ctx.progress.redisKeys;
  return keys ? local.held(keys.session(tokenHash)) : undefined;
}

/**
 * The `{session, user}` for a token hash. A read model answers only while it may be believed (it is
 * close enough behind the log: see ReadModelProgress); Redis first, then the session table. When none may
 * be believed, or the one asked does not hold the session, the log answers (`sessionFromLog`): a session
 * appended a moment ago is found, and one ended is never brought back by a read model that missed it.
 */
export async function findSessionByTokenHash(ctx: SessionPorts, tokenHash: string): Promise<CachedSession | null> {
  const keys = ctx.progress.redisKeys;
  if (ctx.cache && keys && ctx.progress.trusted('redis')) {
    try {
      const { redis, local } = ctx.cache;
      const key = keys.session(tokenHash);
      const cached = local ? await local.lookup(key, (k) => redis.get(k), decodeCached) : decodeCached(await redis.get(key));
      // A miss in a cache this current is not "no session" yet: only the log can say that.
      return cached ?? (await sessionFromLog(ctx, tokenHash));
    } catch (error) {
      ctx.log.warn({ err: error }, 'session cache read failed; reading Postgres');
    }
  }
  if (ctx.progress.trusted('sessions')) {
    const found = await sessionFromTable(ctx, tokenHash);
    if (found) return found;
  }
  return sessionFromLog(ctx, tokenHash);
}

async function sessionFromTable(ctx: SessionPorts, tokenHash: string): Promise<CachedSession | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT ${sessionColumns},
           u.id AS u_id, u.email AS u_email, u.name AS u_name, u.image AS u_image,
           u."emailVerified" AS u_email_verified, u."createdAt" AS u_created_at, u."updatedAt" AS u_updated_at,
           u.username AS u_username, u."displayUsername" AS u_display_username,
           u.role AS u_role, u.banned AS u_banned, u."banReason" AS u_ban_reason, u."banExpires" AS u_ban_expires
    FROM session s JOIN "user" u ON u.id = s."userId"
    WHERE s.token = ${tokenHash}`)) as SessionUserRow | null;
  if (!row) return null;
  return {
    session: toSession(row),
    user: {
      id: row.u_id,
      email: row.u_email,
      name: row.u_name,
      image: row.u_image,
      emailVerified: row.u_email_verified,
      createdAt: isoTime(row.u_created_at),
      updatedAt: isoTime(row.u_updated_at),
      ...(row.u_username !== null ? { username: row.u_username } : {}),
      ...(row.u_display_username !== null ? { displayUsername: row.u_display_username } : {}),
      role: row.u_role,
      banned: row.u_banned,
      banReason: row.u_ban_reason,
      banExpires: row.u_ban_expires === null ? null : isoTime(row.u_ban_expires),
    },
  };
}

export interface ListedSession {
  readonly session: CachedSession['session'];
  readonly tokenHash: string;
}

/** A user's unexpired sessions, newest first, from the session table once it has reached the log's head. */
export async function listUserSessions(ctx: SessionPorts, userId: string, now: Date): Promise<ListedSession[]> {
  await ctx.progress.sessionTableCaughtUp();
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT ${sessionColumns}, s.token AS token_hash FROM session s
    WHERE s."userId" = ${userId} AND s."expiresAt" > ${sql.timestamp(now)}
    ORDER BY s."createdAt" DESC, s.id`)) as readonly (SessionRow & { token_hash: string })[];
  return rows.map((row) => ({ session: toSession(row), tokenHash: row.token_hash }));
}

export async function sessionIdByTokenHash(ctx: Pick<SessionPorts, 'pool'>, tokenHash: string): Promise<string | null> {
  return (await ctx.pool.maybeOneFirst(sql.unsafe`SELECT id FROM session WHERE token = ${tokenHash}`));
}
