import { runner } from 'node-pg-migrate';
import { migrationsFolder } from '../installation.ts';

/** Where node-pg-migrate records the steps it applied (one row a migration, named as its file without `.sql`). */
export const MIGRATIONS_TABLE = 'schema_migrations';

/**
 * Brings the schema up to date: the migrate step (`portcullis migrate`, `npm run migrate`), `npm start`, and
 * tests. The services themselves only check the schema (schema-version.ts). node-pg-migrate takes an advisory
 * lock, so two migrate steps started together do not race; the lock mode must be 'wait' (the default 'fail'
 * makes whichever comes second exit with "Another migration is already running").
 */
export async function migrate(databaseUrl: string, log: (message: string) => void = () => {}): Promise<void> {
  await runner({
    databaseUrl,
    dir: migrationsFolder(import.meta.url),
    direction: 'up',
    migrationsTable: MIGRATIONS_TABLE,
    log,
    singleTransaction: true,
    advisoryLockMode: 'wait',
    checkOrder: true,
    verbose: false,
  });
}
