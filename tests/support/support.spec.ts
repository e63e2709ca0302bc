import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { checkSchema, shippedMigrations } from '@portcullis/platform';
import { createTestDatabase, postgresAdminUrl } from './postgres.ts';
import { deleteRedisKeys, describeWithRedis, testRedisUrl, uniqueRedisPrefix } from './redis.ts';

async function databaseExists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: postgresAdminUrl() });
  await admin.connect();
  try {
    const result = await admin.query('select 1 from pg_database where datname = $1', [name]);
    return result.rowCount === 1;
  } finally {
    await admin.end();
  }
}

describe('createTestDatabase', () => {
  it('sees the same admin URL through inject() and the env that spawned services inherit', () => {
    expect(process.env.PORTCULLIS_TEST_PG_ADMIN_URL).toBe(inject('postgresAdminUrl'));
  });

  it('creates a usable database and drops it again', async () => {
    const db = await createTestDatabase('support');
    expect(db.name).toMatch(/^support_\d+_[0-9a-f]+$/);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const result = await client.query<{ one: number; db: string }>('select 1 as one, current_database() as db');
      expect(result.rows[0]).toEqual({ one: 1, db: db.name });
    } finally {
      await client.end();
    }

    await db.drop();
    expect(await databaseExists(db.name)).toBe(false);
  });

  it('drops a database that still has open connections', async () => {
    const db = await createTestDatabase('Support Lingering!');
    expect(db.name).toMatch(/^support_lingering_\d+_[0-9a-f]+$/);
    const lingering = new pg.Client({ connectionString: db.url });
    lingering.on('error', () => {});
    await lingering.connect();
    try {
      await db.drop();
      expect(await databaseExists(db.name)).toBe(false);
    } finally {
      await lingering.end().catch(() => {});
    }
  });

  it('copies a migrated database whose schema is current and whose log has an identity of its own', async () => {
    const copies = [await createTestDatabase('support_migrated', { migrated: true }), await createTestDatabase('support_migrated', { migrated: true })];
    try {
      const identities: string[] = [];
      for (const copy of copies) {
        expect(await checkSchema(copy.url)).toEqual({ state: 'current', newest: shippedMigrations().at(-1) });
        const client = new pg.Client({ connectionString: copy.url });
        await client.connect();
        try {
          identities.push((await client.query<{ id: string }>('select id from event_log_identity')).rows[0]!.id);
        } finally {
          await client.end();
        }
      }
      expect(new Set(identities).size).toBe(2);
    } finally {
      for (const copy of copies) await copy.drop();
    }
  });
});

describeWithRedis('redis test helpers', () => {
  const prefix = uniqueRedisPrefix();
  const client = new Redis(testRedisUrl() ?? '', { lazyConnect: true, maxRetriesPerRequest: 1 });

  afterAll(async () => {
    client.disconnect();
  });

  it('keeps keys under a unique prefix and deletes exactly those', async () => {
    const url = testRedisUrl() ?? '';
    await client.connect();
    const other = uniqueRedisPrefix();
    expect(other).not.toBe(prefix);

    await client.set(`${prefix}session:1`, 'alive');
    await client.set(`${prefix}session:2`, 'alive');
    await client.set(`${other}session:1`, 'untouched');
    expect(await client.get(`${prefix}session:1`)).toBe('alive');

    expect(await deleteRedisKeys(url, prefix)).toBe(2);
    expect(await client.exists(`${prefix}session:1`, `${prefix}session:2`)).toBe(0);
    expect(await client.get(`${other}session:1`)).toBe('untouched');

    await deleteRedisKeys(url, other);
  });
});
