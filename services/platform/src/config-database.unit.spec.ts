import { describe, expect, it } from 'vitest';
import { configProblems } from './config.test-support.ts';

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
