import { ConfigError, loadConfig } from './config/index.ts';

/** The smallest environment that loads. */
export const minimalEnv = { DATABASE_URL: 'postgres://localhost/db', AUTH_SECRET: 'x'.repeat(32) };

/** What loadConfig refuses in `env` laid over {@link minimalEnv}; empty when it loads. */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig({ ...minimalEnv, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
