import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/** Workspace packages that publish built files are tested from their sources (see client/package.json). */
const sourceCondition = 'portcullis-source';

export default defineConfig({
  resolve: { conditions: [sourceCondition, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [sourceCondition, ...defaultServerConditions] } },
  test: {
    include: ['contracts/**/*.spec.ts', 'client/**/*.spec.ts', 'services/**/*.spec.ts', 'tests/**/*.spec.ts', 'console/src/**/*.spec.tsx'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['tests/support/global-setup.ts'],
    // Forks rather than threads: system tests spawn and signal child processes, and native modules
    // (argon2, pg) behave more predictably with one process per worker.
    pool: 'forks',
    // Each worker creates databases and may start services; more parallelism mostly adds contention.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
