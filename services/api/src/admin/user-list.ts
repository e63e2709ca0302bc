import { DEFAULT_USERS_PAGE, type ListUsersQuery, type User } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { userColumns, userFromRow, type UserRow } from '../identity/user-queries.ts';

type Fragment = ReturnType<typeof sql.fragment>;
type ColumnType = 'text' | 'boolean' | 'timestamptz';

/** The user fields better-auth's adapter can filter and sort on, as read-model columns. */
const columns: Readonly<Record<string, { readonly name: string; readonly type: ColumnType }>> = {
  id: { name: 'id', type: 'text' },
  email: { name: 'email', type: 'text' },
  name: { name: 'name', type: 'text' },
  image: { name: 'image', type: 'text' },
  emailVerified: { name: 'emailVerified', type: 'boolean' },
  createdAt: { name: 'createdAt', type: 'timestamptz' },
  updatedAt: { name: 'updatedAt', type: 'timestamptz' },
  username: { name: 'username', type: 'text' },
  displayUsername: { name: 'displayUsername', type: 'text' },
  role: { name: 'role', type: 'text' },
  banned: { name: 'banned', type: 'boolean' },
  banReason: { name: 'banReason', type: 'text' },
  banExpires: { name: 'banExpires', type: 'timestamptz' },
};

/** A field the read model does not have: better-auth's adapter fails on it, and list-users answers an empty list. */
class UnknownField extends Error {}

function columnOf(field: string): { name: string; type: ColumnType } {
  const column = Object.hasOwn(columns, field) ? columns[field] : undefined;
  if (!column) throw new UnknownField(field);
  return column;
}

/** LIKE treats `%`, `_` and `\` as its own; a search for them means the characters. */
const likeEscaped = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

function typedValue(value: string | number | boolean, type: ColumnType): Fragment {
  if (type === 'boolean') return sql.fragment`${value === true || value === 'true'}`;
  if (type === 'timestamptz') return sql.fragment`${String(value)}::timestamptz`;
  return sql.fragment`${String(value)}`;
}

type Operator = NonNullable<ListUsersQuery['filterOperator']>;

function condition(field: string, operator: Operator, value: string | number | boolean | readonly string[]): Fragment {
  const column = columnOf(field);
  const target = sql.identifier([column.name]);
  const values = (Array.isArray(value) ? value : [value]) as Array<string | number | boolean>;
  const one = values[0] ?? '';
  switch (operator) {
    case 'eq':
      return sql.fragment`${target} = ${typedValue(one, column.type)}`;
    case 'ne':
      return sql.fragment`${target} IS DISTINCT FROM ${typedValue(one, column.type)}`;
    case 'lt':
      return sql.fragment`${target} < ${typedValue(one, column.type)}`;
    case 'lte':
      return sql.fragment`${target} <= ${typedValue(one, column.type)}`;
    case 'gt':
      return sql.fragment`${target} > ${typedValue(one, column.type)}`;
    case 'gte':
      return sql.fragment`${target} >= ${typedValue(one, column.type)}`;
    case 'in':
    case 'not_in': {
      const list = values.length === 0 ? sql.fragment`NULL` : sql.join(values.map((v) => typedValue(v, column.type)), sql.fragment`, `);
      return operator === 'in' ? sql.fragment`${target} IN (${list})` : sql.fragment`${target} NOT IN (${list})`;
    }
    case 'contains':
      return sql.fragment`${target}::text LIKE ${`%${likeEscaped(String(one))}%`}`;
    case 'starts_with':
      // Not cast: on a text column the pattern index (text_pattern_ops) serves a prefix.
      return column.type === 'text'
        ? sql.fragment`${target} LIKE ${`${likeEscaped(String(one))}%`}`
        : sql.fragment`${target}::text LIKE ${`${likeEscaped(String(one))}%`}`;
    case 'ends_with':
      return sql.fragment`${target}::text LIKE ${`%${likeEscaped(String(one))}`}`;
    default: {
      const unreachable: never = operator;
      return unreachable;
    }
  }
}

export interface UserPage {
  readonly users: User[];
  readonly total: number;
  readonly limit?: number;
  readonly offset?: number;
}

/**
 * better-auth's list-users over the `user` read model: a search (email or name; contains, starts_with or
 * ends_with), a filter on any user field, a sort, and a page (of `DEFAULT_USERS_PAGE` users without a
 * limit), with the total of what matched. Without a sort, users come oldest first, ties by id, so pages do
 * not overlap. A query that fails (a field the users
 * do not have) answers an empty list, as better-auth's does.
 */
export async function listUsers(ctx: Pick<AdminPorts, 'pool' | 'log'>, query: ListUsersQuery): Promise<UserPage> {
  const { limit, offset: asked } = query;
  // better-auth's `Number(offset) || undefined`: an offset of 0 is none.
  const offset = asked === 0 ? undefined : asked;
  try {
    const where: Fragment[] = [];
    if (query.searchValue) where.push(condition(query.searchField ?? 'email', query.searchOperator ?? 'contains', query.searchValue));
    if (query.filterValue !== undefined) where.push(condition(query.filterField ?? 'email', query.filterOperator ?? 'eq', query.filterValue));
    const whereClause = where.length > 0 ? sql.fragment`WHERE ${sql.join(where, sql.fragment` AND `)}` : sql.fragment``;
    const direction = query.sortDirection === 'desc' ? sql.fragment`DESC` : sql.fragment`ASC`;
    const order = query.sortBy
      ? sql.fragment`ORDER BY ${sql.identifier([columnOf(query.sortBy).name])} ${direction}, id ${direction}`
      : sql.fragment`ORDER BY "createdAt" ASC, id ASC`;
    const page = sql.fragment`LIMIT ${limit ?? DEFAULT_USERS_PAGE} ${offset !== undefined ? sql.fragment`OFFSET ${offset}` : sql.fragment``}`;
    const [rows, total] = await Promise.all([
      ctx.pool.any(sql.unsafe`SELECT ${userColumns} FROM "user" ${whereClause} ${order} ${page}`) as Promise<readonly UserRow[]>,
      ctx.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM "user" ${whereClause}`) as Promise<number>,
    ]);
    return { users: rows.map(userFromRow), total, ...(limit !== undefined ? { limit } : {}), ...(offset !== undefined ? { offset } : {}) };
  } catch (error) {
    // better-auth answers an empty list whatever failed (a field the users lack, a value the column cannot hold).
    if (!(error instanceof UnknownField)) ctx.log.warn({ err: error }, 'list-users query failed; answering an empty list');
    return { users: [], total: 0 };
  }
}
