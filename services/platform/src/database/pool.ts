import { createPool, type DatabasePool } from 'slonik';

export type { DatabasePool, DatabaseTransactionConnection, CommonQueryMethods } from 'slonik';
export { sql } from 'slonik';

export async function createDatabasePool(
  databaseUrl: string,
  options: { maximumPoolSize?: number } = {},
): Promise<DatabasePool> {
  return createPool(databaseUrl, {
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
