import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { shippedMigrations } from '@portcullis/platform';
import { pickFreePort } from '@portcullis/platform/free-port';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { fatalLinesOf, spawnService, type ServiceProcess } from '../support/processes.ts';
import { serviceEntries } from '../../scripts/build.ts';

/**
 * Migrating is a step of its own; the services check the schema at start. The built api and the built
 * migrate step, against databases that are empty, behind, ahead and current.
 */
describe('the schema check at start, and the migrate step', () => {
  const databases: TestDatabase[] = [];
  const started: ServiceProcess[] = [];

  afterAll(async () => {
    await Promise.all(started.map((service) => service.stop()));
    for (const database of databases) await database.drop();
  });

  async function database(prefix: string, migrated: boolean): Promise<TestDatabase> {
    const created = await createTestDatabase(prefix, { migrated });
    databases.push(created);
    return created;
  }

  async function query(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResultRow[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  function environment(databaseUrl: string, port = 0): Record<string, string> {
    return {
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      AUTH_SECRET: randomBytes(32).toString('base64url'),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      REDIS_URL: '',
    };
  }

  function run(name: string, entry: string, databaseUrl: string, port = 0): ServiceProcess {
    const service = spawnService({ name, entry, env: environment(databaseUrl, port) });
    started.push(service);
    return service;
  }

  /** The api's exit and the one fatal line it logged. */
  async function refusal(databaseUrl: string): Promise<{ code: number | null; fatal: string[] }> {
    const api = run('api', serviceEntries.api.built, databaseUrl);
    const exit = await api.exited;
    return { code: exit.code, fatal: fatalLinesOf(api.output()) };
  }

  it('refuses an empty database, naming the migrate step', async () => {
    const empty = await database('schema_empty', false);
    const { code, fatal } = await refusal(empty.url);
    expect(code).toBe(78);
    expect(fatal).toEqual(['the database has no schema yet: run the migrate step first (`portcullis migrate` in the image, `npm run migrate` in a checkout)']);
  });

  it('refuses a database behind the build, naming the newest migration it lacks and the migrate step', async () => {
    const behind = await database('schema_behind', true);
    const newest = shippedMigrations().at(-1)!;
    await query(behind.url, 'DELETE FROM schema_migrations WHERE name = $1', [newest]);
    const { code, fatal } = await refusal(behind.url);
    expect(code).toBe(78);
    expect(fatal).toEqual([
      `the database's schema is behind this build (1 migration not applied, the newest ${newest}): run the migrate step (\`portcullis migrate\` in the image, \`npm run migrate\` in a checkout)`,
    ]);
  });

  it('refuses a database ahead of the build, naming the migration it does not know', async () => {
    const ahead = await database('schema_ahead', true);
    const fromANewerBuild = '9999999999999_from-a-newer-build';
    await query(ahead.url, 'INSERT INTO schema_migrations (name, run_on) VALUES ($1, now())', [fromANewerBuild]);
    const { code, fatal } = await refusal(ahead.url);
    expect(code).toBe(78);
    expect(fatal).toEqual([
      `the database's schema is ahead of this build: it has ${fromANewerBuild}, which this build does not know; this build is older than the database: deploy the newer build`,
    ]);
    // The migrate step of the older build refuses it too, and changes nothing.
    const migrate = run('migrate', serviceEntries.migrate.built, ahead.url);
    expect((await migrate.exited).code).toBe(78);
    expect(migrate.output()).toContain(`it has ${fromANewerBuild}, which this build does not know`);
  });

  it('migrates an empty database step by step, and the api then starts on it', async () => {
    const empty = await database('schema_migrated', false);
    const migrate = run('migrate', serviceEntries.migrate.built, empty.url);
    expect((await migrate.exited).code).toBe(0);
    const shipped = shippedMigrations();
    for (const name of shipped) expect(migrate.output()).toContain(`[migrate] applying ${name}\n`);
    expect(migrate.output()).toContain(`the schema is current (${shipped.at(-1)})`);

    const again = run('migrate-again', serviceEntries.migrate.built, empty.url);
    expect((await again.exited).code).toBe(0);
    expect(again.output()).toContain(`the schema is current (${shipped.at(-1)}); nothing to apply`);

    const port = await pickFreePort();
    const api = run('api', serviceEntries.api.built, empty.url, port);
    await api.waitForOutput(/api listening on/, 60_000);
    const ok = await fetch(`http://127.0.0.1:${port}/api/auth/ok`);
    expect(ok.status).toBe(200);
  });
});
