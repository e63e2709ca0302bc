import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabasePool, createLogger, type DatabasePool } from '@portcullis/platform';
import { createTestDatabase, planOf, runSql, type TestDatabase } from '../../../../tests/support/postgres.ts';
import { listUsers } from './user-list.ts';

const USERS = 100_000;

/**
 * list-users' `contains` search on a tenant large enough for Postgres to prefer an index when it has one:
 * the statements list-users runs are explained as run, and each reads the trigram index (migration
 * 1732230000310), not the whole table.
 */
describe('list-users contains search', () => {
  let db: TestDatabase;
  let pool: DatabasePool;
  let closePool: (() => Promise<void>) | undefined;
  const ran: Array<{ text: string; values: readonly unknown[] }> = [];
  const log = createLogger({ name: 'user-list-spec', level: 'silent', format: 'json' });

  beforeAll(async () => {
    db = await createTestDatabase('user_list_search', { migrated: true });
    const inner = await createDatabasePool(db.url, { maximumPoolSize: 2 });
    // Every statement list-users runs, as sent.
    pool = new Proxy(inner, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property !== 'any' && property !== 'oneFirst') return value;
        return (query: { sql: string; values: readonly unknown[] }) => {
          // slonik numbers its placeholders `$slonik_N` until it sends them.
          ran.push({ text: query.sql.replace(/\$slonik_(\d+)/g, '$$$1'), values: query.values });
          return (value as (q: unknown) => Promise<unknown>).call(target, query);
        };
      },
    });
    closePool = () => inner.end();
    await runSql(
      db.url,
      `INSERT INTO "user" (id, name, email, "createdAt", "updatedAt")
       SELECT 'u' || i, 'Person ' || md5(i::text), 'person-' || md5(i::text) || '@example.com', now() - i * interval '1 second', now()
       FROM generate_series(1, ${USERS}) AS i`,
    );
    await runSql(db.url, 'ANALYZE "user"');
  });

  afterAll(async () => {
    await closePool?.();
    await db?.drop();
  });

  it('answers a contains search on email and on name from the trigram indexes', async () => {
    // Eight characters from the middle of one user's md5: in that user's email and name, and no other's.
    const needle = createHash('md5').update('4242').digest('hex').slice(8, 16);
    for (const [field, index] of [
      ['email', 'user_email_trigram'],
      ['name', 'user_name_trigram'],
    ] as const) {
      ran.length = 0;
      const page = await listUsers({ pool, log }, { searchField: field, searchOperator: 'contains', searchValue: needle });
      expect(page.total).toBe(1);
      expect(page.users.map((user) => user.id)).toEqual(['u4242']);
      expect(ran).toHaveLength(2);
      for (const statement of ran) expect(await planOf(db.url, statement), statement.text).toContain(index);
    }
  });
});

