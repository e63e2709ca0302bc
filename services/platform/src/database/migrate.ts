import { createRequire } from 'node:module';
import path from 'node:path';
import { runner } from 'node-pg-migrate';

// Found through the package rather than beside this file: a service built into one file lives elsewhere.
const migrationsDir = path.join(path.dirname(createRequire(import.meta.url).resolve('@portcullis/platform/package.json')), 'migrations');

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
