import { readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { EmbeddedPostgresError } from './embedded-postgres-error.ts';

/** How long a Postgres server is given to stop on SIGINT before it is killed. */
export const STOP_TIMEOUT_MS = 30_000;

/**
 * Postgres itself removes a postmaster.pid whose process is gone, but not one whose pid was reused by an
 * unrelated process (common in containers), and a server orphaned by a SIGKILLed parent keeps the data
 * dir locked forever. Both are cleared here; a server still owned by a live process is reported instead.
 */
export async function clearStalePostmaster(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let content: string;
  try {
    content = await readFile(pidFile, 'utf8');
  } catch {
    return;
  }
  const pid = Number.parseInt(content.split('\n')[0] ?? '', 10);
  const owner = Number.isInteger(pid) && pid > 0 ? await inspectProcess(pid) : null;
  if (owner === 'unknown') return;
  if (owner === null || !owner.servesDataDir(dataDir)) {
    log(`removing stale ${pidFile} (pid ${Number.isNaN(pid) ? '?' : pid} is not a Postgres server for this data dir)`);
    await rm(pidFile, { force: true });
    return;
  }
  if (owner.ppid > 1 && (await inspectProcess(owner.ppid)) !== null) {
    throw new EmbeddedPostgresError(
      `Postgres (pid ${pid}) is already running on ${dataDir}, started by process ${owner.ppid}; ` +
        `another Portcullis is probably using this data folder: stop it first.`,
    );
  }
  log(`stopping orphaned Postgres server (pid ${pid}) left running on ${dataDir} by a previous crash`);
  // SIGINT is Postgres' fast shutdown: it aborts open transactions but leaves the cluster consistent.
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while ((await inspectProcess(pid)) !== null) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface ProcessInfo {
  ppid: number;
  servesDataDir(dataDir: string): boolean;
}

export async function inspectProcess(pid: number): Promise<ProcessInfo | null | 'unknown'> {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return null;
  }
  try {
    const [cmdline, stat] = await Promise.all([
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ]);
    // The command name in stat may contain spaces or parentheses, so fields are counted from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return null;
    const ppid = Number.parseInt(fields[1] ?? '', 10);
    const args = cmdline.split('\0');
    return {
      ppid,
      servesDataDir: (dataDir) => {
        const isPostgres = path.basename(args[0] ?? '') === 'postgres';
        const dIndex = args.indexOf('-D');
        const dir = dIndex >= 0 ? args[dIndex + 1] : undefined;
        return isPostgres && dir !== undefined && path.resolve(dir) === dataDir;
      },
    };
  } catch {
    // No procfs (or the process vanished mid-read): leave the decision to Postgres' own lock-file check.
    return 'unknown';
  }
}

export async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new EmbeddedPostgresError(
              `Port ${port} on 127.0.0.1 is already in use, so embedded Postgres cannot listen there; ` +
                `stop whatever holds it, or choose another port (npm start: PORTCULLIS_EMBEDDED_PG_PORT).`,
            )
          : err,
      );
    });
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve()));
  });
}

