import type { UserRef } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';

type Fragment = ReturnType<typeof sql.fragment>;

/**
 * The name and email of the user a row names, as `<prefix>_name` and `<prefix>_email` columns: a LEFT JOIN of
 * the user read model under `alias`, so a user no longer there still leaves its id.
 */
export function userJoin(alias: string, idColumn: Fragment): Fragment {
  const table = sql.identifier([alias]);
  return sql.fragment`LEFT JOIN "user" ${table} ON ${table}.id = ${idColumn}`;
}

/** The columns `userJoin` makes readable, named for `refOf`. */
export function userRefColumns(alias: string): Fragment {
  return sql.fragment`${sql.identifier([alias, 'name'])} AS ${sql.identifier([`${alias}_name`])}, ${sql.identifier([alias, 'email'])} AS ${sql.identifier([`${alias}_email`])}`;
}

/** A user named by a row: its id, with the name and email the `userRefColumns` of `alias` read. */
export function refOf(row: Readonly<Record<string, unknown>>, alias: string, id: string): UserRef {
  const name = row[`${alias}_name`];
  const email = row[`${alias}_email`];
  return { id, name: typeof name === 'string' ? name : null, email: typeof email === 'string' ? email : null };
}
