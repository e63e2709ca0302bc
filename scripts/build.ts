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
import { build, type Plugin } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface ServiceEntry {
  readonly source: string;
  readonly built: string;
}

function entry(service: string, name: string): ServiceEntry {
  return { source: `services/${service}/src/${name}.ts`, built: `services/${service}/dist/${name}.js` };
}

/**
 * A long-running service is started by its `launch` entry, which sets up tracing (when asked) before it
 * imports the service's program: see services/platform/src/telemetry/launch.ts.
 */
function launched(service: string): ServiceEntry {
  return entry(service, 'launch');
}

export const serviceEntries = {
  api: launched('api'),
  projector: launched('projector'),
  rebuildProjection: entry('projector', 'rebuild'),
  mailer: launched('mailer'),
  audit: entry('audit', 'cli'),
  keys: entry('audit', 'keys'),
  // What the entries above import once tracing is set up (see services/platform/src/telemetry/launch.ts).
  apiProgram: entry('api', 'server'),
  projectorProgram: entry('projector', 'main'),
  mailerProgram: entry('mailer', 'main'),
} as const;

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

export async function buildServices(): Promise<void> {
  await Promise.all(
    Object.values(serviceEntries).map(async (service) => {
      const { outputFiles } = await build({
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
        write: false,
      });
      // Renamed into place, so a service starting while another build runs (a second `npm start`, a
      // supervisor's restart) loads a whole file, old or new, never a half-written one.
      for (const file of outputFiles) {
        await mkdir(path.dirname(file.path), { recursive: true });
        const partial = `${file.path}.${process.pid}.partial`;
        await writeFile(partial, file.contents);
        await rename(partial, file.path);
      }
    }),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildServices();
  console.log(`built ${Object.values(serviceEntries).map((service) => service.built).join(', ')}`);
}
