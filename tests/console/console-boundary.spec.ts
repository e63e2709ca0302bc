import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/processes.ts';

/** The project's own lint configuration, run on this text as if it were a console page (the type-aware parser wants a file the console's tsconfig has). */
async function consoleImportProblems(source: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: repoRoot });
  const [result] = await eslint.lintText(source, { filePath: path.join(repoRoot, 'console/src/pages/users.tsx') });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'import-x/no-restricted-paths' || m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the console imports nothing but contracts, the client package and its own code', () => {
  it('refuses the server workspaces by package name', async () => {
    const problems = await consoleImportProblems("import { sql } from '@portcullis/platform';\nexport const probe = sql;\n");
    expect(problems).toContainEqual(expect.stringContaining('only @portcullis/contracts'));
  });

  it('refuses server code reached by a relative path', async () => {
    const problems = await consoleImportProblems("import { buildApp } from '../../../services/api/src/app.ts';\nexport const probe = buildApp;\n");
    expect(problems).toEqual([expect.stringContaining('only contracts, the client package, its own code')]);
  });

  it('accepts contracts, the client package, its own modules and npm packages', async () => {
    const problems = await consoleImportProblems(
      "import { adminEndpoints } from '@portcullis/contracts/api/admin';\nimport { callEndpoint } from '@portcullis/client';\nimport { call } from '../api/client.ts';\nimport { z } from 'zod';\nexport const probe = [adminEndpoints, callEndpoint, call, z];\n",
    );
    expect(problems).toEqual([]);
  }, 60_000);
});
