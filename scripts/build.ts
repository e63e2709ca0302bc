/**
 * Builds each service into one ES module (`services/<service>/dist/<entry>.js`, with a source map) that plain
 * `node` runs. `npm start`, the bench and the system tests run these.
 *
 * Why not tsx in production: its esbuild transform keeps function names (`keepNames`), which wraps every
 * named closure created at run time in an `Object.defineProperty`, on every request; and it transforms
 * every module again at each start.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Metafile, type OutputFile, type Plugin } from 'esbuild';
import { serviceEntries } from './service-entries.ts';

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

export async function buildServices(): Promise<BuiltServices> {
  const built = await Promise.all(
    Object.values(serviceEntries).map(async (service) => {
      const { outputFiles, metafile } = await build({
        absWorkingDir: root,
        entryPoints: [service.source],
        outfile: service.built,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        sourcemap: true,
        logLevel: 'warning',
        plugins: [dependenciesStayExternal],
        metafile: true,
        write: false,
      });
      // A supervisor may restart a service while another build runs (a second `npm start`).
      await writeWhole(outputFiles);
      return externalImportsOf(metafile);
    }),
  );
  return { externalImports: [...new Set(built.flat())].sort() };
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
  await buildServices();
  console.log(`built ${Object.values(serviceEntries).map((service) => service.built).join(', ')}`);
}
