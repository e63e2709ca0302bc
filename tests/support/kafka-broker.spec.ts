import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkaToolsMissing, removeAbandonedBrokers } from './kafka-broker.ts';
import { repoRoot, waitFor } from './processes.ts';

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const missing = kafkaToolsMissing();
if (missing) console.warn(`[skip] the test Kafka broker: ${missing}`);

describe.skipIf(missing !== null)('the test Kafka broker', () => {
  it('is ended, with its directory, by the next run when the run that started it was killed', async () => {
    // A run killed outright: the process that started the broker dies without its teardown.
    const run = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', `
        const { startTestKafkaBroker } = await import(${JSON.stringify(path.join(repoRoot, 'tests/support/kafka-broker.ts'))});
        const broker = await startTestKafkaBroker({ log: () => {} });
        console.log('BROKER ' + broker.brokers);
        setInterval(() => {}, 1000);
      `],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => output.includes('BROKER '), { timeoutMs: 120_000, message: `the broker of the run to start:\n${output}` });
    const dirName = readdirSync(os.tmpdir()).find((name) => name.startsWith(`portcullis-kafka-${run.pid}-`));
    expect(dirName).toBeDefined();
    const dir = path.join(os.tmpdir(), dirName!);
    const brokerPid = Number(readFileSync(path.join(dir, 'broker.pid'), 'utf8'));
    const exited = new Promise((resolve) => run.once('exit', resolve));
    run.kill('SIGKILL');
    await exited;
    // The JVM outlives the process that started it.
    expect(processIsAlive(brokerPid)).toBe(true);

    await removeAbandonedBrokers();
    await waitFor(() => !processIsAlive(brokerPid), { timeoutMs: 10_000, message: `the abandoned broker (pid ${brokerPid}) to end` });
    expect(existsSync(dir)).toBe(false);
  });
});
