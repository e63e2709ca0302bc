/**
 * Builds each service into one ES module (`services/<service>/dist/<entry>.js`, with a source map) that plain
 * `node` runs. `npm start`, the bench and the system tests run these.
 *
 * Why not tsx in production: its esbuild transform keeps function names (`keepNames`), which wraps every
 * named closure created at run time in an `Object.defineProperty`, on every request; and it transforms
 * every module again at each start.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, stop, type BuildOptions, type Metafile, type OutputFile, type Plugin } from 'esbuild';
import { serviceEntries, type ServiceEntry } from './service-entries.ts';

export { portcullisCommands, serviceEntries, type ServiceEntry } from './service-entries.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The `node` flags that run an entry: a built service (`.js`, with its source map) as `npm start` runs it in
 * production; a TypeScript script (a bench ceiling, a test helper) through tsx.
 */
export function nodeArgumentsFor(entry: string): string[] {
  return entry.endsWith('.js') ? ['--enable-source-maps'] : ['--import', 'tsx'];
}

/**
 * The workspace packages are compiled into each bundle; every other package stays an import resolved from
 * node_modules at run time, as installed (native addons such as argon2 cannot be bundled anyway).
 */
const dependenciesStayExternal: Plugin = {
  name: 'dependencies-stay-external',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@portcullis/') ? undefined : { path: args.path, external: true }));
  },
};

/** What a build left external: the packages its bundles import at run time (`pg`, `@opentelemetry/api`, …). */
export interface BuiltServices {
  readonly externalImports: readonly string[];
}

/** Every import the bundles leave to node_modules, as written (`pino`, `@fastify/otel/…`); `node:` builtins aside. */
function externalImportsOf(metafile: Metafile): string[] {
  return Object.values(metafile.outputs).flatMap((output) =>
    output.imports.filter((i) => i.external && !i.path.startsWith('node:')).map((i) => i.path),
  );
}

/** Renamed into place, so a process starting while another build runs loads a whole file, old or new, never a half-written one. */
async function writeWhole(files: readonly OutputFile[]): Promise<void> {
  for (const file of files) {
    await mkdir(path.dirname(file.path), { recursive: true });
    const partial = `${file.path}.${process.pid}.partial`;
    await writeFile(partial, file.contents);
    await rename(partial, file.path);
  }
}

/**
 * `npm start`'s own script, run as built JavaScript too: under tsx, the process that supervises the system for
 * as long as it runs would keep tsx's esbuild service alive beside it (started whenever a source changed since
 * tsx cached its transforms), which nothing there can stop.
 */
export const startScript: ServiceEntry = { source: 'scripts/start.ts', built: 'scripts/dist/start.js' };

/**
 * The scripts find the repository from where they are (`import.meta.url`): bundled, each keeps its source's
 * address, so the built start script finds the checkout, the console's sources and `.data/` as its sources do.
 */
const scriptsKeepTheirPlace: Plugin = {
  name: 'scripts-keep-their-place',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]scripts[\\/][^\\/]+\.ts$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
      loader: 'ts',
    }));
  },
};

/** One entry bundled, its imports of other packages left external; answers those imports. */
async function bundle(entry: ServiceEntry, options: Pick<BuildOptions, 'plugins'>): Promise<string[]> {
  const { outputFiles, metafile } = await build({
    absWorkingDir: root,
    entryPoints: [entry.source],
    outfile: entry.built,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    metafile: true,
    write: false,
    ...options,
  });
  // A supervisor may restart a service while another build runs (a second `npm start`).
  await writeWhole(outputFiles);
  return externalImportsOf(metafile);
}

/**
 * Builds every service, then stops esbuild's service process: started by the first build, it would otherwise
 * stay beside whoever built (the start script, for as long as the system runs). A later build starts another.
 * Not to be run twice at once in one process, since the stop would end the other's builds.
 */
export async function buildServices(): Promise<BuiltServices> {
  try {
    const built = await Promise.all(Object.values(serviceEntries).map((service) => bundle(service, { plugins: [dependenciesStayExternal] })));
    return { externalImports: [...new Set(built.flat())].sort() };
  } finally {
    await stop();
  }
}

/** Builds `npm start`'s script (see `startScript`), then stops esbuild's service as `buildServices` does. */
export async function buildStartScript(): Promise<void> {
  try {
    await bundle(startScript, { plugins: [scriptsKeepTheirPlace, dependenciesStayExternal] });
  } finally {
    await stop();
  }
}

/**
 * The image's `portcullis` command (scripts/portcullis.ts) as one file at `outfile`: node's builtins only,
 * so it runs wherever the built entries it starts are.
 */
export async function buildDispatcher(outfile: string): Promise<void> {
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: ['scripts/portcullis.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    plugins: [dependenciesStayExternal],
    metafile: true,
  });
  const external = externalImportsOf(metafile);
  if (external.length > 0) throw new Error(`the portcullis dispatcher must import node's builtins only, not ${external.join(', ')}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv[2] === 'start-script') {
    await buildStartScript();
  } else {
    await buildServices();
    console.log(`built ${Object.values(serviceEntries).map((service) => service.built).join(', ')}`);
  }
}
