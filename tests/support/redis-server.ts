import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from './processes.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

/**
 * A Redis server of the test's own (Debian's redis-server, on a free port, keeping nothing on disk), for
 * what no test may do to the shared one: flush it, restart it, configure it, or make it a cluster node.
 */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** Kills the server (SIGKILL: a crash, nothing saved) and starts a new, empty one on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Whether Debian's redis-server and redis-cli are installed, to start private servers with. */
export function redisServerAvailable(): boolean {
  const dirs = (process.env.PATH ?? '').split(':').filter((dir) => dir !== '');
  return ['redis-server', 'redis-cli'].every((command) => dirs.some((dir) => existsSync(path.join(dir, command))));
}

const STARTED_LINE = /Ready to accept connections/;

async function launch(port: number, dir: string, extra: readonly string[]): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'no', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (STARTED_LINE.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited (${code}) before it was ready:\n${output}`)));
    child.once('error', reject);
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export async function startPrivateRedis(options: { args?: readonly string[] } = {}): Promise<PrivateRedis> {
  const port = await pickFreePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'portcullis-redis-'));
  let child = await launch(port, dir, options.args ?? []);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    restart: async () => {
      await kill(child);
      child = await launch(port, dir, options.args ?? []);
    },
    stop: async () => {
      await kill(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedisCluster {
  /** `redis+cluster://` URL naming every master (what REDIS_URL takes for a cluster). */
  readonly url: string;
  readonly ports: readonly number[];
  stop(): Promise<void>;
}

/**
 * Three masters in cluster mode on free ports, joined with `redis-cli --cluster create` (no replicas): a
 * real cluster, whose hash slots are spread over the three.
 */
export async function startPrivateRedisCluster(masters = 3): Promise<PrivateRedisCluster> {
  const nodes: { port: number; dir: string; child: ChildProcess }[] = [];
  const stop = async (): Promise<void> => {
    for (const node of nodes) {
      await kill(node.child);
      await rm(node.dir, { recursive: true, force: true });
    }
  };
  try {
    for (let i = 0; i < masters; i += 1) {
      const port = await pickFreePort();
      const dir = await mkdtemp(path.join(os.tmpdir(), 'portcullis-redis-cluster-'));
      const child = await launch(port, dir, [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, 'nodes.conf'),
        '--cluster-node-timeout',
        '2000',
        // What the api and the projector require of any Redis they cache sessions in (Debian's default too).
        '--maxmemory-policy',
        'noeviction',
      ]);
      nodes.push({ port, dir, child });
    }
    await new Promise<void>((resolve, reject) => {
      execFile(
        'redis-cli',
        ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'],
        (error, stdout, stderr) => (error ? reject(new Error(`redis-cli --cluster create failed: ${stderr || stdout}`)) : resolve()),
      );
    });
    for (const node of nodes) {
      const client = new Redis(node.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 });
      await client.connect();
      try {
        await waitFor(async () => /cluster_state:ok/.test(String(await client.call('CLUSTER', 'INFO'))), {
          timeoutMs: 20_000,
          message: `node ${node.port} to see the cluster ok`,
        });
      } finally {
        client.disconnect();
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`, ports: nodes.map((n) => n.port), stop };
}
