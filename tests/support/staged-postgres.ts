import { readFile, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { STAGING_ROOT } from '../../services/platform/src/embedded-postgres.ts';

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
