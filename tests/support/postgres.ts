import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Superuser URL decided once per run by global-setup. */
export function postgresAdminUrl(): string {
  let injected: string | undefined;
  try {
    injected = inject('postgresAdminUrl');
  } catch {
    // Not inside a vitest worker (e.g. a spawned service or a script): global-setup also exported it via env.
  }
  const url = injected || process.env.PORTCULLIS_TEST_PG_ADMIN_URL;
  if (!url) {
    throw new Error(
      'No Postgres admin URL: run under vitest (tests/support/global-setup.ts) or set PORTCULLIS_TEST_PG_ADMIN_URL.',
    );
  }
  return url;
}

/** The database global-setup migrated once per run, which `createTestDatabase({ migrated: true })` copies. */
export function migratedTemplateName(): string {
  let injected: string | undefined;
  try {
    injected = inject('migratedTemplateDatabase');
  } catch {
    // Outside a vitest worker: global-setup also exported it via env.
  }
  const name = injected || process.env.PORTCULLIS_TEST_PG_TEMPLATE;
  if (!name) throw new Error('No migrated template database: run under vitest (tests/support/global-setup.ts) or set PORTCULLIS_TEST_PG_TEMPLATE.');
  return name;
}

export interface CreateTestDatabaseOptions {
  /**
   * Migrated to this build's schema, as the migrate step leaves a database before the services start (they
   * refuse any other schema). Copied from global-setup's migrated template, which costs a fraction of
   * running every migration again; a spec about migrations themselves asks for an empty database.
   */
  migrated?: boolean;
}

/**
 * A fresh database per caller (empty, or migrated) so tests running in parallel (and repeated runs against a
 * shared server) never see each other's rows or schema.
 */
export async function createTestDatabase(prefix = 'test', options: CreateTestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = postgresAdminUrl();
  const name = uniqueDatabaseName(prefix);
  await withAdmin(adminUrl, async (client) => {
    const template = options.migrated ? ` template ${client.escapeIdentifier(migratedTemplateName())}` : '';
    await client.query(`create database ${client.escapeIdentifier(name)}${template}`);
  });

  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // The log's identity is drawn when its migration runs; a copy would share the template's, and a cache
  // keyed by it would take one spec's database for another's. Each copy draws its own, as migrating does.
  if (options.migrated) await renewLogIdentity(url.toString());

  let dropping: Promise<void> | undefined;
  const drop = (): Promise<void> => {
    dropping ??= withAdmin(adminUrl, async (client) => {
      // WITH (FORCE) already disconnects sessions; terminating first also covers sessions that are
      // mid-connect, and keeps the intent explicit if this ever runs against a server without FORCE.
      await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
        name,
      ]);
      await client.query(`drop database if exists ${client.escapeIdentifier(name)} with (force)`);
    });
    return dropping;
  };

  return { url: url.toString(), name, drop };
}

async function renewLogIdentity(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query('update event_log_identity set id = gen_random_uuid(), created_at = now()');
  } finally {
    await client.end();
  }
}

function uniqueDatabaseName(prefix: string): string {
  let safe = prefix.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (!/^[a-z]/.test(safe)) safe = `t_${safe}`;
  // Postgres truncates identifiers at 63 bytes, which could make two "unique" names collide.
  const suffix = `_${process.pid}_${randomBytes(5).toString('hex')}`;
  return `${safe.slice(0, 63 - suffix.length)}${suffix}`;
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A statement as Postgres would plan it (EXPLAIN, JSON), with its parameters: what a spec asserting on index use reads. */
export async function planOf(databaseUrl: string, statement: { readonly text: string; readonly values: readonly unknown[] }): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, [...statement.values]);
    return JSON.stringify(result.rows[0]!['QUERY PLAN']);
  } finally {
    await client.end();
  }
}

/** Rows put straight into a database (a read model's, at a size no spec would write through the api). */
export async function runSql(databaseUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
