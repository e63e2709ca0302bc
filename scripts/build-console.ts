/**
 * Builds the ops console (`console/` → `console/dist/`, served by the api at /console) when its sources
 * changed since the last build: `npm start` and the tests call it, and a start with nothing changed pays
 * nothing. The console compiles the contracts and @portcullis/client in, so they count as its sources.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const consoleRoot = path.join(root, 'console');
export const consoleDist = path.join(consoleRoot, 'dist');
const stamp = path.join(consoleDist, '.sources');

const SOURCES = ['console/src', 'console/index.html', 'console/vite.config.ts', 'console/package.json', 'contracts/src', 'client/src', 'client/package.json', 'package-lock.json'];

async function filesUnder(entry: string): Promise<string[]> {
  const full = path.join(root, entry);
  const listed = await readdir(full, { recursive: true, withFileTypes: true }).catch(() => null);
  if (listed === null) return [entry];
  return listed.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

/** One hash over every source file's path and content. */
async function sourcesHash(): Promise<string> {
  const files = (await Promise.all(SOURCES.map(filesUnder))).flat().sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update('\0').update(await readFile(path.join(root, file))).update('\0');
  return hash.digest('hex');
}

interface ViteManifestChunk {
  readonly file: string;
  readonly isEntry?: boolean;
  readonly imports?: readonly string[];
  readonly css?: readonly string[];
}

/**
 * What the first page costs over the wire: the HTML, the entry's script and what it imports statically,
 * and their styles, each gzipped (the pages themselves are chunks loaded when visited).
 */
export async function firstPageGzipBytes(): Promise<{ readonly bytes: number; readonly files: readonly string[] }> {
  const manifest = JSON.parse(await readFile(path.join(consoleDist, '.vite', 'manifest.json'), 'utf8')) as Record<string, ViteManifestChunk>;
  const files = new Set<string>(['index.html']);
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || files.has(chunk.file)) return;
    files.add(chunk.file);
    for (const css of chunk.css ?? []) files.add(css);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry) visit(key);
  let bytes = 0;
  for (const file of files) bytes += gzipSync(await readFile(path.join(consoleDist, file))).length;
  return { bytes, files: [...files] };
}

/** Builds unless the last build was of these very sources; says which it did. */
export async function buildConsole(options: { readonly quiet?: boolean } = {}): Promise<'built' | 'unchanged'> {
  const hash = await sourcesHash();
  const built = await readFile(stamp, 'utf8').catch(() => null);
  if (built === hash) return 'unchanged';
  // Built beside and swapped in, so an api reading the console while another build runs (a second
  // `npm start`, a test run) finds a whole build, old or new.
  const partial = `${consoleDist}.${process.pid}.partial`;
  await build({
    root: consoleRoot,
    configFile: path.join(consoleRoot, 'vite.config.ts'),
    logLevel: options.quiet ? 'warn' : 'info',
    build: { outDir: partial, emptyOutDir: true },
  });
  await writeFile(path.join(partial, '.sources'), hash);
  const previous = `${consoleDist}.${process.pid}.previous`;
  await rename(consoleDist, previous).catch(() => {});
  await rename(partial, consoleDist);
  await rm(previous, { recursive: true, force: true });
  const firstPage = await firstPageGzipBytes();
  if (!options.quiet) console.log(`[console] first page: ${(firstPage.bytes / 1024).toFixed(1)} kB gzipped (${firstPage.files.length} files)`);
  return 'built';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildConsole();
}
