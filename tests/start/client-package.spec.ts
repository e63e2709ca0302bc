import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient, clientRoot } from '../../scripts/build-client.ts';
import { repoRoot } from '../support/processes.ts';

const run = promisify(execFile);

/**
 * @portcullis/client as its users get it: built, packed by npm, unpacked into an app's node_modules beside
 * its peers, and used there by plain Node and by a TypeScript that knows nothing of this repository's
 * source condition, so what is published is the built files and declarations alone, and they hold together.
 */
describe('the published @portcullis/client', () => {
  let app: string;

  beforeAll(async () => {
    await buildClient();
    app = await mkdtemp(path.join(tmpdir(), 'portcullis-client-app-'));
    const { stdout } = await run('npm', ['pack', '--pack-destination', app, '--json'], { cwd: clientRoot });
    const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    expect(packed.files.map((file) => file.path).filter((file) => !file.startsWith('dist/')).sort()).toEqual(['README.md', 'package.json']);
    const installed = path.join(app, 'node_modules', '@portcullis', 'client');
    await mkdir(installed, { recursive: true });
    await run('tar', ['xzf', path.join(app, packed.filename), '-C', installed, '--strip-components=1']);
    // The app's own installs: the peers and the dependency, and the types a TypeScript app has.
    for (const name of ['better-auth', 'zod', 'react', '@types']) await symlink(path.join(repoRoot, 'node_modules', name), path.join(app, 'node_modules', name));
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'an-app', private: true, type: 'module' }));
  }, 300_000);

  afterAll(async () => {
    if (app) await rm(app, { recursive: true, force: true });
  });

  it('loads in plain Node from its entries', async () => {
    await writeFile(
      path.join(app, 'load.mjs'),
      [
        "import * as client from '@portcullis/client';",
        "import * as react from '@portcullis/client/react';",
        "const auth = client.createAuthClient({ baseURL: 'http://127.0.0.1:1' });",
        "const ops = client.createOpsClient({ baseURL: 'http://127.0.0.1:1' });",
        'console.log(JSON.stringify({ auth: typeof auth.organization.create, admin: typeof auth.admin.listUsers, react: typeof react.createAuthClient, ops: typeof ops.auditEvents, delay: client.retryDelay({ type: "exponential", attempts: 5, baseDelay: 100, maxDelay: 300 }, 3) }));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['load.mjs'], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({ auth: 'function', admin: 'function', react: 'function', ops: 'function', delay: 300 });
  });

  it('type-checks an app against its declarations, plugins and ops answers included', async () => {
    await writeFile(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, lib: ['ES2022', 'DOM'], types: ['node'] },
        include: ['app.ts'],
      }),
    );
    await writeFile(
      path.join(app, 'app.ts'),
      `import { ApiError, createAuthClient, createOpsClient } from '@portcullis/client';
import { createAuthClient as createReactAuthClient } from '@portcullis/client/react';

const auth = createAuthClient({ baseURL: 'https://auth.example.com' });
const react = createReactAuthClient({ baseURL: 'https://auth.example.com' });
const ops = createOpsClient({ baseURL: 'https://auth.example.com', apiKey: 'key', retry: 2, timeout: 5000 });

export async function use(): Promise<number> {
  await auth.signIn.username({ username: 'ada', password: 'correct horse battery' });
  await auth.organization.createTeam({ name: 'Core' });
  await auth.admin.banUser({ userId: 'u' });
  void react.useSession;
  const page = await ops.auditEvents({ query: { user: ['a', 'b'] } });
  const position: number = page.events[0]!.position;
  const { rebuild } = await ops.rebuildProjection({ params: { name: 'identity' } });
  const percent: number | null = rebuild.percent;
  try {
    await ops.retryMailDelivery({ params: { jobId: 'j' } });
  } catch (error) {
    if (error instanceof ApiError) return error.status + error.statusText.length;
  }
  // @ts-expect-error: the ops answers are typed, not any
  const wrong: string = (await ops.mailQueue()).dead;
  return position + (percent ?? 0) + wrong.length;
}
`,
    );
    const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app }).then(
      () => '',
      (error: Error & { stdout?: string }) => error.stdout || error.message,
    );
    expect(checked).toBe('');
    expect(await readdir(path.join(app, 'node_modules', '@portcullis', 'client', 'dist'))).toContain('index.js');
  }, 180_000);
});
