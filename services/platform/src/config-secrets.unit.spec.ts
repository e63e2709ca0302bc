import { describe, expect, it } from 'vitest';
import { loadConfig } from './config/index.ts';
import { configProblems } from './config.test-support.ts';

const A = 'a'.repeat(32);
const B = `b-secret-${'b'.repeat(30)}`;
const C = `c-secret-${'c'.repeat(30)}`;

/** loadConfig with only what the secrets need besides them. */
const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'postgres://localhost/db', ...env });
const problemsWithout = (env: Record<string, string>) => configProblems({ AUTH_SECRET: '', ...env });

describe('the secret ring (AUTH_SECRETS, AUTH_SECRET)', () => {
  it('reads AUTH_SECRETS newest first, trimmed around the commas, the newest as `secret`', () => {
    const config = load({ AUTH_SECRETS: ` ${C} ,${B},${A}` });
    expect(config.secrets).toEqual([C, B, A]);
    expect(config.secret).toBe(C);
    expect(Object.isFrozen(config.secrets)).toBe(true);
  });

  it('takes AUTH_SECRET as a ring of one, whole, commas included', () => {
    const withComma = `${A},still-the-same-secret`;
    const config = load({ AUTH_SECRET: withComma });
    expect(config.secrets).toEqual([withComma]);
    expect(config.secret).toBe(withComma);
  });

  it('refuses both at once, naming what to keep', () => {
    expect(configProblems({ AUTH_SECRET: A, AUTH_SECRETS: `${B},${A}` })).toEqual([
      'AUTH_SECRETS: and AUTH_SECRET are both set: keep one (AUTH_SECRETS with the secret of AUTH_SECRET in it)',
    ]);
  });

  it('refuses a short, empty or repeated entry by its place, never echoing a value', () => {
    const problems = problemsWithout({ AUTH_SECRETS: `${C},short-one,,${C}` });
    expect(problems).toEqual([
      'AUTH_SECRETS: entry 2 of 4 must be at least 32 characters',
      'AUTH_SECRETS: entry 3 of 4 is empty',
      'AUTH_SECRETS: entry 4 of 4 repeats entry 1',
    ]);
    expect(problems.join('\n')).not.toContain('short-one');
  });

  it('needs one of them, in production too', () => {
    expect(problemsWithout({})).toEqual(['AUTH_SECRET: is required, or AUTH_SECRETS (npm start generates one for the embedded default)']);
    expect(problemsWithout({ NODE_ENV: 'production' })).toContain('AUTH_SECRET: is required in production (or AUTH_SECRETS)');
    expect(problemsWithout({ NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example.com:587', AUTH_SECRETS: B })).toEqual([]);
  });
});
