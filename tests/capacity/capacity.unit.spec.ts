import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  appendCeiling,
  capacityPage,
  coresFor,
  formatBytes,
  formatNumber,
  needsOf,
  partitionsFor,
  perDay,
  plan,
  shardsFor,
} from '../../bench/src/capacity/capacity.ts';
import { capacityPagePath, readCostsFile } from '../../bench/src/capacity/files.ts';
import type { AppendCeiling, OperationCost } from '../../bench/src/costs/costs-file.ts';

function operation(overrides: Partial<OperationCost> = {}): OperationCost {
  return {
    name: 'sign-in (email and password)',
    clients: 8,
    ops: 400,
    windowS: 5,
    opsPerSecond: 80,
    cpuMsPerOp: { api: 20, apiMainThread: 2, projector: 1.5, mailer: 0, postgres: 3, redis: 0.2, total: 24.7 },
    pgTransactionsPerOp: 4,
    walBytesPerOp: 5_000,
    serverWalBytesPerOp: 6_000,
    eventsPerOp: 2,
    appendsPerOp: 1,
    logBytesPerOp: 1_500,
    redisCommandsPerOp: 6,
    redisCommandsByName: { evalsha: 2, publish: 4 },
    mailsPerOp: 0,
    ...overrides,
  };
}

function ceiling(connections: number, eventsPerAppend: number, appendsPerSecond: number): AppendCeiling {
  return { connections, eventsPerAppend, appendsPerSecond, eventsPerSecond: appendsPerSecond * eventsPerAppend, p50Ms: 1, postgresCpuMsPerAppend: 0.5, walBytesPerAppend: 900 };
}

describe('capacity arithmetic', () => {
  it('needs a core per thousand milliseconds of CPU a second, divided by the planned utilisation', () => {
    expect(coresFor(0.05, 1_000_000, 1)).toBeCloseTo(50);
    expect(coresFor(0.05, 1_000_000, 0.5)).toBeCloseTo(100);
    expect(coresFor(20, 10_000, 0.8)).toBeCloseTo(250);
  });

  it('scales every per-operation figure of a load by its rate', () => {
    const needs = needsOf(operation(), 10_000, 0.5);
    expect(needs.apiCores).toBeCloseTo(400);
    expect(needs.projectorCores).toBeCloseTo(30);
    expect(needs.postgresCores).toBeCloseTo(60);
    expect(needs.redisCores).toBeCloseTo(4);
    expect(needs.transactionsPerSecond).toBe(40_000);
    expect(needs.walBytesPerSecond).toBe(50_000_000);
    expect(needs.logBytesPerDay).toBe(1_500 * 10_000 * 86_400);
    expect(needs.appendsPerSecond).toBe(10_000);
    expect(needs.redisCommandsPerSecond).toBe(60_000);
  });

  it('counts a day in seconds', () => {
    expect(perDay(1)).toBe(86_400);
  });

  it('rounds shards up and never answers none', () => {
    expect(shardsFor(0, 10)).toBe(1);
    expect(shardsFor(10, 10)).toBe(1);
    expect(shardsFor(11, 10)).toBe(2);
  });

  it('gives a partition per job in flight (rate × time a job), rounded up', () => {
    expect(partitionsFor(1_000, 0.1)).toBe(100);
    expect(partitionsFor(1_001, 0.1)).toBe(101);
    expect(partitionsFor(0.5, 0.1)).toBe(1);
  });

  it('takes the highest append rate of the asked batch size as the ceiling', () => {
    const measured = [ceiling(1, 1, 300), ceiling(4, 1, 900), ceiling(64, 1, 700), ceiling(16, 10, 400)];
    expect(appendCeiling(measured).connections).toBe(4);
    expect(appendCeiling(measured, 10).appendsPerSecond).toBe(400);
    expect(() => appendCeiling(measured, 100)).toThrow(/no append ceiling at 100/);
  });

  it('writes numbers with separators and three significant figures, and bytes in decimal units', () => {
    expect(formatNumber(1_234_567.8)).toBe('1,234,568');
    expect(formatNumber(0.012345)).toBe('0.0123');
    expect(formatNumber(4.5678)).toBe('4.57');
    expect(formatNumber(0)).toBe('0');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(227_000_000_000)).toBe('227 GB');
    expect(formatBytes(1_500_000)).toBe('1.5 MB');
  });
});

describe('docs/capacity.md', () => {
  it('is exactly what `npm run capacity` writes from the committed bench/results/costs.json', async () => {
    const expected = capacityPage(await readCostsFile(), plan);
    const committed = await readFile(capacityPagePath, 'utf8');
    expect(committed, 'run `npm run capacity` and commit docs/capacity.md').toBe(expected);
  });
});
