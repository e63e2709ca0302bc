import { readdirSync } from 'node:fs';
import pg from 'pg';
import { migrationsFolder } from '../installation.ts';
import { MIGRATIONS_TABLE } from './migrate.ts';

/**
 * The services do not migrate: migrating is a step of its own (a job, an init container, `npm run migrate`),
 * run once per deployment before the new build starts. Each service checks at start that the database's
 * schema is exactly the one its build ships, and refuses to run on any other: on an older schema its
 * statements would fail at some later request, and on a newer one (a rollback of the build) it would
 * write rows the newer schema's code does not expect.
 */
export type SchemaVerdict =
  | { readonly state: 'current'; readonly newest: string }
  | { readonly state: 'empty' }
  | { readonly state: 'behind'; readonly pending: readonly string[] }
  | { readonly state: 'ahead'; readonly unknown: readonly string[] };

const MIGRATE_STEP = '`portcullis migrate` in the image, `npm run migrate` in a checkout';

/** The migrations this build ships, oldest first, named as node-pg-migrate records them (the file name without `.sql`). */
export function shippedMigrations(): string[] {
  return readdirSync(migrationsFolder(import.meta.url))
    .filter((file) => file.endsWith('.sql'))
    .map((file) => file.slice(0, -'.sql'.length))
    .sort();
}

async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const table = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [MIGRATIONS_TABLE]);
    if (!table.rows[0]?.found) return [];
    const rows = await client.query<{ name: string }>(`SELECT name FROM ${client.escapeIdentifier(MIGRATIONS_TABLE)} ORDER BY run_on, id`);
    return rows.rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

export async function checkSchema(databaseUrl: string): Promise<SchemaVerdict> {
  const shipped = shippedMigrations();
  const applied = await appliedMigrations(databaseUrl);
  if (applied.length === 0) return { state: 'empty' };
  const known = new Set(shipped);
  const unknown = applied.filter((name) => !known.has(name)).sort();
  // Ahead wins over behind: migrating cannot help a database that has steps this build never heard of.
  if (unknown.length > 0) return { state: 'ahead', unknown };
  const done = new Set(applied);
  const pending = shipped.filter((name) => !done.has(name));
  if (pending.length > 0) return { state: 'behind', pending };
  return { state: 'current', newest: shipped.at(-1) ?? '' };
}

/** The one line a service that refuses this schema logs, saying which step to run; null when it may start. */
export function schemaRefusal(verdict: SchemaVerdict): string | null {
  switch (verdict.state) {
    case 'current':
      return null;
    case 'empty':
      return `the database has no schema yet: run the migrate step first (${MIGRATE_STEP})`;
    case 'behind': {
      const count = verdict.pending.length === 1 ? '1 migration' : `${verdict.pending.length} migrations`;
      return `the database's schema is behind this build (${count} not applied, the newest ${verdict.pending.at(-1)}): run the migrate step (${MIGRATE_STEP})`;
    }
    case 'ahead':
      return `the database's schema is ahead of this build: it has ${verdict.unknown.at(-1)}, which this build does not know; this build is older than the database: deploy the newer build`;
    default: {
      const never: never = verdict;
      return never;
    }
  }
}

/** The exit code of a service that refuses the database's schema: EX_CONFIG, as for a configuration it refuses. */
export const SCHEMA_REFUSED_EXIT_CODE = 78;

/**
 * Checked by every service and CLI at start, before anything else touches the database: on a schema other
 * than the build's, it reports one line (`report`, the process' logger) and exits 78.
 */
export async function exitUnlessSchemaIsCurrent(databaseUrl: string, report: (message: string) => void): Promise<void> {
  const refusal = schemaRefusal(await checkSchema(databaseUrl));
  if (refusal === null) return;
  report(refusal);
  process.exit(SCHEMA_REFUSED_EXIT_CODE);
}
