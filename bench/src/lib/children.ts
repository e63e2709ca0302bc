import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeArgumentsFor } from '../../../scripts/build.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const STOP_GRACE_MS = 5_000;
const OUTPUT_LIMIT = 256 * 1024;

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** The last OUTPUT_LIMIT characters of stdout and stderr, interleaved. */
  output(): string;
  /** Lines written so far; with LOG_LEVEL=warn every line is a warning or worse. */
  lineCount(): number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL once the grace period has passed. */
  stop(): Promise<void>;
}

// If the bench itself dies abruptly, children must not outlive it holding ports and database connections.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Runs an entry (relative to the repo root) as `nodeArgumentsFor` says. `profiled` entries (what is
 * measured: api, projector, better-auth, the audit group's rebuilds) get BENCH_NODE_FLAGS; the ceilings
 * never do, so a profiled run still compares against an unprofiled ceiling.
 */
export function spawnEntry(name: string, entry: string, env: NodeJS.ProcessEnv, options: { profiled?: boolean; args?: readonly string[] } = {}): Child {
  // Flags for profiling the servers under load (`--perf-basic-prof` for perf, `--cpu-prof` for DevTools),
  // which NODE_OPTIONS does not accept.
  const nodeFlags = options.profiled ? (process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []) : [];
  const child = spawn(process.execPath, [...nodeFlags, ...nodeArgumentsFor(entry), path.resolve(repoRoot, entry), ...(options.args ?? [])], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${name} (${entry})`);
  live.add(child);

  let captured = '';
  let lines = 0;
  const append = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    for (const ch of text) if (ch === '\n') lines += 1;
    captured += text;
    if (captured.length > OUTPUT_LIMIT) captured = captured.slice(-OUTPUT_LIMIT);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);

  let exitedFlag = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      exitedFlag = true;
      live.delete(child);
      resolve({ code, signal });
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (exitedFlag) return;
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const graceful = await Promise.race([
        exited.then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), STOP_GRACE_MS);
        }),
      ]);
      clearTimeout(timer);
      if (!graceful) {
        child.kill('SIGKILL');
        await exited;
      }
    })();
    return stopping;
  };

  return {
    name,
    pid: child.pid,
    output: () => captured,
    lineCount: () => lines,
    exited,
    hasExited: () => exitedFlag,
    stop,
  };
}

export function tail(text: string, count = 30): string {
  const kept = text.trimEnd().split('\n').slice(-count);
  return kept.length > 0 && kept[0] !== '' ? kept.map((line) => `  | ${line}`).join('\n') : '  (no output)';
}

/**
 * Polls until `condition` holds; a throwing condition counts as "not yet". Fails early when one of the
 * `children` exits, since then the condition can never come true.
 */
export async function waitUntil(
  condition: () => Promise<boolean>,
  options: { what: string; timeoutMs: number; intervalMs?: number; children?: readonly Child[] },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    const dead = options.children?.find((c) => c.hasExited());
    if (dead) throw new Error(`${dead.name} exited while waiting for ${options.what}\n${tail(dead.output())}`);
    try {
      if (await condition()) return;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      const outputs = (options.children ?? []).map((c) => `${c.name}:\n${tail(c.output())}`).join('\n');
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}${cause}\n${outputs}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}


/** True once GET `url` answers 2xx. */
export async function answersOk(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  await response.arrayBuffer();
  return response.ok;
}
