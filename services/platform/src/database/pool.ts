import { createPool, sql as slonikSql, type DatabasePool } from 'slonik';
import { z } from 'zod';

export type { DatabasePool, DatabaseTransactionConnection, CommonQueryMethods } from 'slonik';

/** The result "parser" of every untyped query; nothing is validated with it (the pool has no interceptors). */
const untypedResult = z.any();

/**
 * slonik's `sql`, except that `sql.unsafe` shares one result parser: slonik's own builds a new zod schema for
 * every query, which costs more than the rest of composing the query.
 */
export const sql: typeof slonikSql = { ...slonikSql, unsafe: slonikSql.type(untypedResult) };

export async function createDatabasePool(
  databaseUrl: string,
  options: {
    maximumPoolSize?: number;
    /**
     * For pools that write only what can be rebuilt from the log (read models with their checkpoints): a
     * commit does not wait for its WAL flush. A Postgres crash may then undo the last few such commits, rows
     * and checkpoint together, and the projection applies those events again; the log itself must never be
     * written through such a pool.
     */
    asynchronousCommit?: boolean;
  } = {},
): Promise<DatabasePool> {
  return createPool(options.asynchronousCommit ? withSessionSetting(databaseUrl, 'synchronous_commit', 'off') : databaseUrl, {
    maximumPoolSize: options.maximumPoolSize ?? 10,
    connectionTimeout: 10_000,
    // Deciding never waits on a lock for long; a stuck statement is a bug to surface, not to wait out.
    statementTimeout: 30_000,
    idleInTransactionSessionTimeout: 30_000,
    interceptors: [],
    // slonik sends DISCARD ALL on every release by default, a second round trip per query. Nothing here keeps
    // session state on pooled connections (advisory locks and LISTEN use dedicated clients), so skip it.
    resetConnection: async () => {},
  });
}

/** Adds `-c name=value` to the connection's startup options, keeping any the URL already has. */
function withSessionSetting(databaseUrl: string, name: string, value: string): string {
  const url = new URL(databaseUrl);
  const existing = url.searchParams.get('options');
  url.searchParams.set('options', `${existing ? `${existing} ` : ''}-c ${name}=${value}`);
  return url.toString();
}

/**
 * A piece of SQL taken as it is: only for text the database itself wrote (`pg_get_indexdef`,
 * `pg_get_constraintdef`), never for anything a caller supplied.
 */
export function sqlFromCatalog(text: string): ReturnType<typeof slonikSql.fragment> {
  const parts = Object.freeze(Object.assign([text], { raw: Object.freeze([text]) }));
  return slonikSql.fragment(parts);
}
