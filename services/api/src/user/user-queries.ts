import type { User } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { isoTime } from '../read-model.ts';

interface UserRow {
  id: string;
  email: string;
  name: string;
  image: string | null;
  emailVerified: boolean;
  createdAt: number;
  updatedAt: number;
  username: string | null;
  displayUsername: string | null;
}

export async function findUserById(ctx: ApiContext, userId: string): Promise<User | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT id, email, name, image, "emailVerified", "createdAt", "updatedAt", username, "displayUsername"
    FROM "user" WHERE id = ${userId}`)) as UserRow | null;
  if (!row) return null;
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    image: row.image,
    emailVerified: row.emailVerified,
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
    ...(row.username !== null ? { username: row.username } : {}),
    ...(row.displayUsername !== null ? { displayUsername: row.displayUsername } : {}),
  };
}

/**
 * The user as get-session answers it: from the session cache's copy when Redis holds one (the same answer,
 * without a Postgres round trip), else from the read model. The cache is at least as fresh as the caller's
 * own writes once `commit` has returned.
 */
export async function findSessionUser(ctx: ApiContext, userId: string): Promise<User | null> {
  if (ctx.cache) {
    const cached = await ctx.cache.redis.get(ctx.cache.keys.user(userId)).catch(() => null);
    if (cached !== null) return JSON.parse(cached) as User;
  }
  return findUserById(ctx, userId);
}
