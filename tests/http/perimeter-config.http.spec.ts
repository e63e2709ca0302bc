import { describe, expect, it } from 'vitest';
import { spawnService, type ServiceExit } from '../support/processes.ts';
import { serviceEntries } from '../../scripts/build.ts';

/** Perimeter settings are checked at start: a bad one stops the api, naming the variable (never a value). */
async function startApi(env: Record<string, string>): Promise<{ exit: ServiceExit; output: string }> {
  const api = spawnService({
    name: 'api-perimeter-config',
    entry: serviceEntries.api.built,
    env: {
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      // Nothing listens here: a configuration wrongly accepted would fail later, differently.
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/never_used',
      AUTH_SECRET: 'a-perfectly-good-secret-of-more-than-32-characters',
      REDIS_URL: '',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  try {
    return { exit: await api.exited, output: api.output() };
  } finally {
    await api.stop();
  }
}

describe('perimeter settings at start', () => {
  it('refuses cookie max ages above 400 days (34560000 s), bad trusted origins, proxies and rate-limit rules, all at once', async () => {
    // (Cross-field rules such as AUTH_RATE_LIMIT_STORAGE=redis without REDIS_URL are checked once every field
    // parses; the config unit specs cover them.)
    const { exit, output } = await startApi({
      AUTH_SESSION_EXPIRES_IN: '34560001',
      AUTH_COOKIE_CACHE_MAX_AGE: '34560001',
      TRUSTED_ORIGINS: 'https://app.example.com/login,*',
      AUTH_TRUSTED_PROXIES: 'proxy.local',
      AUTH_RATE_LIMIT_RULES: '/sign-in/email=ten/60',
    });
    expect(exit.code).not.toBe(0);
    expect(exit.signal).toBeNull();
    expect(output).toContain('Invalid configuration');
    expect(output).toMatch(/^\s*- AUTH_SESSION_EXPIRES_IN: cookie max age above 400 days/m);
    expect(output).toMatch(/^\s*- AUTH_COOKIE_CACHE_MAX_AGE: cookie max age above 400 days/m);
    expect(output).toMatch(/^\s*- TRUSTED_ORIGINS: 'https:\/\/app\.example\.com\/login' is not an origin/m);
    expect(output).toMatch(/^\s*- TRUSTED_ORIGINS: '\*' would trust every host/m);
    expect(output).toMatch(/^\s*- AUTH_TRUSTED_PROXIES: /m);
    expect(output).toMatch(/^\s*- AUTH_RATE_LIMIT_RULES: /m);
    expect(output).not.toMatch(/ECONNREFUSED|never_used/);
  });
});
