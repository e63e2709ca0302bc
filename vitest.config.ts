import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

export default defineConfig({
  // @portcullis/client publishes built files; specs run its sources (what its `portcullis-source` export
  // condition names for the other tools). An alias rather than the condition: vitest's module resolution
  // with conditions of its own would change how every dependency resolves.
  resolve: {
    alias: [
      { find: /^@portcullis\/client$/, replacement: source('./client/src/index.ts') },
      { find: /^@portcullis\/client\/react$/, replacement: source('./client/src/react.ts') },
    ],
  },
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
