import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';

const migrationsDir = fileURLToPath(new URL('../../migrations', import.meta.url));

/**
 * Brings the schema up to date. node-pg-migrate takes an advisory lock, so api and projector processes that
 * start together do not race each other; the lock mode must be 'wait' (the default 'fail' makes whichever
 * process comes second exit with "Another migration is already running").
 */
export async function migrate(databaseUrl: string, log: (message: string) => void = () => {}): Promise<void> {
  await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'schema_migrations',
    log,
    singleTransaction: true,
    advisoryLockMode: 'wait',
    checkOrder: true,
    verbose: false,
  });
}
