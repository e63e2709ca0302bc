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
