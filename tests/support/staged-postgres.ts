import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { STAGING_ROOT } from '../../services/platform/src/embedded-postgres.ts';
import { waitFor } from './processes.ts';

/**
 * The folder that holds the embedded Postgres data of the data folder `dataFolder` (PORTCULLIS_DATA_DIR) when
 * a root `npm start` could not keep it there, as its `postgres-location` note says; null when it stayed put.
 */
export async function stagedPostgresData(dataFolder: string): Promise<string | null> {
  const note = await readFile(path.join(dataFolder, 'postgres-location'), 'utf8').catch(() => null);
  if (note === null) return null;
  const standIn = note.split('\n')[0]!.trim();
  if (!standIn.startsWith(`${STAGING_ROOT}/`)) throw new Error(`unexpected postgres-location note in ${dataFolder}: ${standIn}`);
  return standIn;
}

/**
 * Removes that stand-in (the server must be stopped), and its checkout's staging folder once nothing else is
 * in it. STAGING_ROOT itself stays: another test may be placing files in it at the same moment.
 */
export async function removeStagedPostgresData(dataFolder: string): Promise<void> {
  const standIn = await stagedPostgresData(dataFolder);
  if (standIn === null) return;
  await rm(standIn, { recursive: true, force: true });
  await rmdir(path.dirname(standIn)).catch(() => {});
}

/**
 * Stops any Postgres server still running on a data folder under `folder` (one whose start failed the test
 * may still be up, and one whose start was killed outright runs on until its watcher notices, a second
 * later), so the folder can be removed.
 */
export async function stopPostgresServersIn(folder: string): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const dataDir = path.join(folder, entry.name);
    const pidFile = await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch(() => null);
    const pid = Number.parseInt(pidFile?.split('\n')[0] ?? '', 10);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    // Only the server on this data folder: a stale file's pid may belong to anything by now.
    const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!command.split('\0').includes(dataDir)) continue;
    // SIGQUIT is Postgres' immediate shutdown: the data is thrown away next anyway.
    process.kill(pid, 'SIGQUIT');
    await waitFor(() => !isRunning(pid), { timeoutMs: 10_000, message: `Postgres (pid ${pid}) to stop` }).catch(() => process.kill(pid, 'SIGKILL'));
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
