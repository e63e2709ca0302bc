/**
 * Builds @portcullis/client for publishing (`client/dist`): its entries as ES modules with esbuild, the
 * contracts compiled in (a private workspace its users cannot install), better-auth, react and zod left to
 * their imports; and the declarations with tsc, the contracts' beside its own, their imports made ones a
 * consumer's TypeScript resolves (`.js`, relative). `npm run build -w client`.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const clientRoot = path.join(root, 'client');
export const clientDist = path.join(clientRoot, 'dist');
const typesDir = path.join(clientDist, 'types');

/** What the package leaves to its users' installs: its peers and its dependency. */
const external = ['better-auth', 'better-auth/*', 'react', 'react/*', 'zod', 'zod/*'];

async function bundle(): Promise<void> {
  try {
    await build({
      absWorkingDir: root,
      entryPoints: { index: 'client/src/index.ts', react: 'client/src/react.ts' },
      outdir: clientDist,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['portcullis-source'],
      target: 'es2022',
      external,
      sourcemap: true,
      logLevel: 'warning',
    });
  } finally {
    await stop();
  }
}

async function declarations(): Promise<void> {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', path.join(clientRoot, 'tsconfig.build.json')], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
}

/** A specifier as a published declaration file can use it: relative ones end in `.js`, the contracts' point into dist/types. */
export function publishedSpecifier(specifier: string, fromFile: string): string {
  const contracts = /^@portcullis\/contracts(?:\/(.+))?$/.exec(specifier);
  if (contracts) {
    const target = path.join(typesDir, 'contracts', 'src', `${contracts[1] ?? 'index'}.js`);
    const relative = path.relative(path.dirname(fromFile), target).split(path.sep).join('/');
    return relative.startsWith('.') ? relative : `./${relative}`;
  }
  return specifier.startsWith('.') ? specifier.replace(/\.tsx?$/, '.js') : specifier;
}

async function rewriteDeclarations(): Promise<void> {
  const files = (await readdir(typesDir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    const rewritten = text.replace(/(\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\2/gm, (_whole, lead: string, quote: string, specifier: string) => `${lead}${quote}${publishedSpecifier(specifier, file)}${quote}`);
    if (rewritten !== text) await writeFile(file, rewritten);
  }
}

export async function buildClient(): Promise<void> {
  await rm(clientDist, { recursive: true, force: true });
  await bundle();
  await declarations();
  await rewriteDeclarations();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildClient();
  console.log(`[client] built ${path.relative(root, clientDist)}`);
}
