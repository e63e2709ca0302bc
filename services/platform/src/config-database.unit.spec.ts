import { describe, expect, it } from 'vitest';
import { loadConfig, poolSizesOf } from './config/index.ts';
import { configProblems, minimalEnv } from './config.test-support.ts';

const problems = (databaseUrl: string): string[] => configProblems({ DATABASE_URL: databaseUrl });

describe('DATABASE_URL', () => {
  it('takes a TCP address and a Unix socket as a percent-encoded host', () => {
    expect(problems('postgres://app:secret@db.internal:5432/portcullis?sslmode=require')).toEqual([]);
    expect(problems('postgresql://app@%2Fvar%2Frun%2Fpostgresql/portcullis')).toEqual([]);
  });

  it("refuses libpq's query-parameter form, which would connect as the wrong user, and names the form to use", () => {
    const [problem, ...rest] = problems('postgres:///portcullis?host=/var/run/postgresql&user=app');
    expect(rest).toEqual([]);
    expect(problem).toMatch(/^DATABASE_URL: takes host, user in the URL itself, not as query parameters: /);
    expect(problem).toContain('postgres://user@%2Fvar%2Frun%2Fpostgresql/db');
  });

  it('refuses what is not a URL', () => {
    expect(problems('postgres://app@/var/run/postgresql/db')).toEqual([
      expect.stringMatching(/^DATABASE_URL: is not a valid URL; use postgres:\/\/user:password@host:5432\/db/),
    ]);
    expect(problems('mysql://localhost/db')).toEqual(['DATABASE_URL: must be a postgres:// URL']);
  });
});

describe('pool sizes', () => {
  it("keep each program's own sizes unless set", () => {
    const config = loadConfig({ ...minimalEnv, MAILER_CONCURRENCY: '6' });
    expect(poolSizesOf(config, 'api')).toEqual({ readModels: 20, eventStore: 10, dataKeys: 4 });
    expect(poolSizesOf(config, 'projector')).toEqual({ readModels: 6, eventStore: 2, dataKeys: 4 });
    expect(poolSizesOf(config, 'mailer')).toEqual({ readModels: 10, eventStore: 4, dataKeys: 4 });
    expect(poolSizesOf(config, 'rebuild-projection')).toEqual({ readModels: 4, eventStore: 2, dataKeys: 4 });
    expect(poolSizesOf(config, 'audit')).toEqual({ readModels: 2, eventStore: 2, dataKeys: 4 });
  });

  it('are what the settings say, for every program', () => {
    const config = loadConfig({ ...minimalEnv, DATABASE_POOL_MAX: '8', EVENT_STORE_POOL_MAX: '3', DATA_KEYS_POOL_MAX: '2' });
    for (const owner of ['api', 'projector', 'mailer', 'rebuild-projection', 'audit'] as const) {
      expect(poolSizesOf(config, owner), owner).toEqual({ readModels: 8, eventStore: 3, dataKeys: 2 });
    }
  });

  it('refuse what is no size', () => {
    const found = configProblems({ DATABASE_POOL_MAX: '0', EVENT_STORE_POOL_MAX: 'many', DATA_KEYS_POOL_MAX: '1.5' });
    for (const name of ['DATABASE_POOL_MAX', 'EVENT_STORE_POOL_MAX', 'DATA_KEYS_POOL_MAX']) {
      expect(found.some((p) => p.startsWith(`${name}:`)), `${name} in ${JSON.stringify(found)}`).toBe(true);
    }
  });
});
