import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeArgumentsFor } from '../../scripts/build.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  /** Everything the process wrote to stdout and stderr so far, interleaved in arrival order. */
  output(): string;
  /** Resolves with the first match; rejects on timeout or if the process exits without printing it. */
  waitForOutput(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  kill(signal?: NodeJS.Signals): boolean;
  readonly exited: Promise<ServiceExit>;
  /** SIGTERM, then SIGKILL if the process has not exited after 5 s. */
  stop(): Promise<ServiceExit>;
}

export interface SpawnServiceOptions {
  name: string;
  /** Path of the entry, relative to the repo root: a built service (`serviceEntries`) or a .ts script. */
  entry: string;
  env: Record<string, string>;
  args?: string[];
}

const STOP_GRACE_MS = 5_000;

/**
 * The test runner's environment minus what Vite injects into it (BASE_URL='/', MODE, DEV, PROD, SSR): a
 * service reads BASE_URL as its public URL and must not inherit the test runner's meaning of it.
 */
export function inheritedEnv(): NodeJS.ProcessEnv {
  const { BASE_URL: _base, MODE: _mode, DEV: _dev, PROD: _prod, SSR: _ssr, ...rest } = process.env;
  return rest;
}
const OUTPUT_LIMIT = 8 * 1024 * 1024;

// A worker that dies between spawn and stop() must not leave services holding ports for the next run.
const live = new Map<ChildProcess, () => void>();
process.once('exit', () => {
  for (const kill of live.values()) kill();
});

/**
 * Runs a service as a real OS process, the way production runs it, so system tests exercise
 * signal handling, crashes and restarts rather than an in-process imitation.
 */
export function spawnService(opts: SpawnServiceOptions): ServiceProcess {
  const entry = path.resolve(repoRoot, opts.entry);
  return watchProcess(
    opts.name,
    entry,
    spawn(process.execPath, [...nodeArgumentsFor(entry), entry, ...(opts.args ?? [])], {
      cwd: repoRoot,
      env: { ...inheritedEnv(), ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
    false,
  );
}

export interface SpawnShellCommandOptions {
  name: string;
  /** A command line, as a person types it (`npm install && npm start`). */
  command: string;
  cwd: string;
  /** The whole environment: nothing of the test runner's is passed on that is not in it. */
  env: NodeJS.ProcessEnv;
}

/**
 * Runs a command line through `sh` in a process group of its own, as a terminal runs it: `kill` signals
 * the whole group, so SIGINT is the Ctrl-C a person would press.
 */
export function spawnShellCommand(opts: SpawnShellCommandOptions): ServiceProcess {
  const child = spawn('/bin/sh', ['-c', opts.command], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  return watchProcess(opts.name, opts.command, child, true);
}

/** Output capture, waiting and stopping for a spawned child; `wholeGroup`: signals go to its process group. */
function watchProcess(name: string, what: string, child: ChildProcess, wholeGroup: boolean): ServiceProcess {
  const sendSignal = (sent: NodeJS.Signals): boolean => {
    if (!wholeGroup || child.pid === undefined) return child.kill(sent);
    try {
      process.kill(-child.pid, sent);
      return true;
    } catch {
      return false;
    }
  };

  let captured = '';
  let spawnError: Error | undefined;
  const events = new EventEmitter();
  const echo = process.env.PORTCULLIS_TEST_ECHO_SERVICES === '1';

  const append = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    captured += text;
    if (captured.length > OUTPUT_LIMIT) captured = captured.slice(captured.length - OUTPUT_LIMIT);
    if (echo) process.stderr.write(text.replace(/^(?=.)/gm, `[${name}] `));
    events.emit('output');
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);

  const exited = new Promise<ServiceExit>((resolve) => {
    child.once('error', (err) => {
      spawnError = err;
      // 'close' does not follow when the process never started.
      if (child.pid === undefined) {
        live.delete(child);
        events.emit('exit');
        resolve({ code: null, signal: null });
      }
    });
    // 'close' (not 'exit') so output() is complete once this resolves.
    child.once('close', (code, signal) => {
      live.delete(child);
      events.emit('exit');
      resolve({ code, signal });
    });
  });

  if (child.pid === undefined) {
    throw new Error(`failed to spawn ${name} (${what})${spawnError ? `: ${spawnError.message}` : ''}`);
  }
  live.set(child, () => sendSignal('SIGKILL'));
  const pid = child.pid;
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });

  const waitForOutput = (re: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> => {
    // A global or sticky regex would carry lastIndex between checks and could skip a match.
    const matcher = new RegExp(re.source, re.flags.replace(/[gy]/g, ''));
    return new Promise((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        events.off('output', check);
        events.off('exit', onExit);
      };
      const check = (): boolean => {
        const match = captured.match(matcher);
        if (!match) return false;
        cleanup();
        resolve(match);
        return true;
      };
      const onExit = (): void => {
        if (check()) return;
        cleanup();
        reject(new Error(`${name} exited before printing ${re}\n${tail(captured)}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${name} did not print ${re} within ${timeoutMs} ms\n${tail(captured)}`));
      }, timeoutMs);
      events.on('output', check);
      events.on('exit', onExit);
      if (!check() && hasExited) onExit();
    });
  };

  let stopping: Promise<ServiceExit> | undefined;
  const stop = (): Promise<ServiceExit> => {
    stopping ??= (async () => {
      if (hasExited) return exited;
      sendSignal('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const graceful = await Promise.race([
        exited,
        new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), STOP_GRACE_MS);
        }),
      ]);
      clearTimeout(timer);
      if (graceful) return graceful;
      sendSignal('SIGKILL');
      return exited;
    })();
    return stopping;
  };

  return {
    name,
    pid,
    output: () => captured,
    waitForOutput,
    kill: (sent = 'SIGTERM') => sendSignal(sent),
    exited,
    stop,
  };
}

export interface WaitForOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Describes what was awaited, for the timeout error. */
  message: string;
}

/**
 * Polls until `condition` holds. Tests wait on observable conditions, never on fixed sleeps, so they are
 * neither flaky on slow machines nor slow on fast ones. A throwing condition counts as "not yet".
 */
export async function waitFor(condition: () => Promise<boolean> | boolean, opts: WaitForOptions): Promise<void> {
  const interval = opts.intervalMs ?? 50;
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await condition()) return;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.message}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(interval, Math.max(0, deadline - Date.now()))));
  }
}


function tail(text: string, lines = 40): string {
  const kept = text.trimEnd().split('\n').slice(-lines);
  return kept.length > 0 && kept[0] !== '' ? kept.map((line) => `  | ${line}`).join('\n') : '  (no output)';
}

/** Whether a process of this machine still runs (one of another user's counts: it answers EPERM). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The messages a service logged at pino's fatal level (60), from its JSON log lines. */
export function fatalLinesOf(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === 60)
    .map((line) => line.msg);
}
