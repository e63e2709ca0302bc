import { describe, expect, it } from 'vitest';
import { spawnService, type ServiceExit } from '../support/processes.ts';
import { serviceEntries } from '../../scripts/build.ts';

/**
 * A bad deployment must fail at start, loudly and completely: every invalid variable named in one go, the
 * process exiting non-zero so a supervisor notices, and no secret value echoed into the logs.
 */
async function startExpectingRefusal(env: Record<string, string>, service: 'api' | 'mailer' = 'api'): Promise<{ exit: ServiceExit; output: string }> {
  const started = spawnService({
    name: `${service}-bad-config`,
    entry: serviceEntries[service].built,
    env: {
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      // Nothing listens here: if the config were wrongly accepted the api would fail later, differently.
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/never_used',
      AUTH_SECRET: 'a-perfectly-good-secret-of-more-than-32-characters',
      REDIS_URL: '',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  try {
    const exit = await started.exited;
    return { exit, output: started.output() };
  } finally {
    await started.stop();
  }
}

describe('api start-up configuration', () => {
  it('refuses bad values, naming every bad variable, and exits non-zero without echoing the secret', async () => {
    const badSecret = 'too-short-secret-value';
    const { exit, output } = await startExpectingRefusal({ PORT: 'abc', AUTH_PASSWORD_MIN_LENGTH: '0', AUTH_SECRET: badSecret });
    expect(exit.signal).toBeNull();
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(output).toContain('Invalid configuration');
    expect(output).toMatch(/^\s*- PORT: /m);
    expect(output).toMatch(/^\s*- AUTH_PASSWORD_MIN_LENGTH: /m);
    expect(output).toMatch(/^\s*- AUTH_SECRET: .*32/m);
    expect(output).not.toContain(badSecret);
    // It stopped at the configuration: it never got as far as the database.
    expect(output).not.toMatch(/ECONNREFUSED|never_used/);
  });

  it('refuses NODE_ENV=production without AUTH_SECRET, naming AUTH_SECRET', async () => {
    // An empty value counts as unset, and overrides an AUTH_SECRET the test runner's environment might carry.
    const { exit, output } = await startExpectingRefusal({ NODE_ENV: 'production', AUTH_SECRET: '' });
    expect(exit.signal).toBeNull();
    expect(exit.code).not.toBe(0);
    expect(output).toContain('Invalid configuration');
    expect(output).toMatch(/^\s*- AUTH_SECRET: /m);
    expect(output).not.toMatch(/ECONNREFUSED|never_used/);
  });

  it('refuses NODE_ENV=production without SMTP_URL, in the api and in the mailer that would have used the dev mailbox', async () => {
    for (const service of ['api', 'mailer'] as const) {
      const { exit, output } = await startExpectingRefusal({ NODE_ENV: 'production', SMTP_URL: '' }, service);
      expect(exit.code, service).not.toBe(0);
      expect(output, service).toMatch(/^\s*- SMTP_URL: is required in production/m);
      expect(output, service).not.toMatch(/ECONNREFUSED|never_used/);
    }
  });

  it('refuses SameSite=None cookies that would not be Secure, saying what to change', async () => {
    const { exit, output } = await startExpectingRefusal({ BASE_URL: 'http://auth.example.test', AUTH_COOKIE_SAME_SITE: 'none' });
    expect(exit.code).not.toBe(0);
    expect(output).toMatch(/^\s*- AUTH_COOKIE_SAME_SITE: none needs secure cookies .*AUTH_COOKIE_SECURE=true/m);
    expect(output).not.toMatch(/ECONNREFUSED|never_used/);
  });
});
