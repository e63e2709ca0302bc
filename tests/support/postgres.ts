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

/**
 * A fresh, empty database per caller so tests running in parallel (and repeated runs against a shared
 * server) never see each other's rows or schema.
 */
export async function createTestDatabase(prefix = 'test'): Promise<TestDatabase> {
  const adminUrl = postgresAdminUrl();
  const name = uniqueDatabaseName(prefix);
  await withAdmin(adminUrl, async (client) => {
    await client.query(`create database ${client.escapeIdentifier(name)}`);
  });

  const url = new URL(adminUrl);
  url.pathname = `/${name}`;

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
