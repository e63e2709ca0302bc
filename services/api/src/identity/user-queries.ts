import type { User } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { IdentityPorts } from './ports.ts';
import { isoTime } from '../read-model.ts';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  image: string | null;
  emailVerified: boolean;
  createdAt: number;
  updatedAt: number;
  username: string | null;
  displayUsername: string | null;
  role: string;
  banned: boolean;
  banReason: string | null;
  banExpires: number | null;
}

/** The columns `userFromRow` reads, for any query of the user read model. */
export const userColumns = sql.fragment`
  id, email, name, image, "emailVerified", "createdAt", "updatedAt", username, "displayUsername", role, banned, "banReason", "banExpires"`;

/** A `user` row as every answer shows the user. */
export function userFromRow(row: UserRow): User {
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
    role: row.role,
    banned: row.banned,
    banReason: row.banReason,
    banExpires: row.banExpires === null ? null : isoTime(row.banExpires),
  };
}

export async function findUserById(ctx: IdentityPorts, userId: string): Promise<User | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`SELECT ${userColumns} FROM "user" WHERE id = ${userId}`)) as UserRow | null;
  return row ? userFromRow(row) : null;
}
