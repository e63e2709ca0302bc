import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserRegistered } from '@portcullis/contracts';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { SharedLogReader } from './shared-log-reader.ts';

/** Counts the reads that reach the real store, to see which ones the shared reader answered itself. */
function countingStore(store: EventStore): { store: EventStore; reads: () => number } {
  let reads = 0;
  return {
    reads: () => reads,
    store: new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'readAll') {
          return (options: { after: number; limit: number }) => {
            reads += 1;
            return target.readAll(options);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }),
  };
}

const register = (n: number) =>
  domainWrite(`user-u${n}`, 'no_stream', [UserRegistered({ userId: `u${n}`, email: `u${n}@example.com`, name: 'U', image: null, emailVerified: false })], metadataAt(new Date()));

describe('SharedLogReader', () => {
  let db: EventLogDatabase;

  beforeAll(async () => {
    db = await createEventLogDatabase('shared_reader');
  });
  afterAll(async () => {
    await db?.close();
  });

  it('answers projections asking for the same range in one wake-up with one read of the log', async () => {
    await db.store.append([register(1), register(2)]);
    const counting = countingStore(db.store);
    const reader = new SharedLogReader(counting.store);
    const [a, b, c] = await Promise.all([
      reader.readAll({ after: 0, limit: 100 }),
      reader.readAll({ after: 0, limit: 100 }),
      reader.readAll({ after: 0, limit: 100 }),
    ]);
    expect(counting.reads()).toBe(1);
    expect(a.map((e) => e.position)).toEqual([1, 2]);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    await reader.readAll({ after: 1, limit: 100 });
    expect(counting.reads()).toBe(2);
  });

  it('reads the log again once an append has moved the wake-up generation', async () => {
    const counting = countingStore(db.store);
    const reader = new SharedLogReader(counting.store);
    const before = await reader.readAll({ after: 0, limit: 100 });
    const generation = reader.appendGeneration();
    await db.store.append([register(3)]);
    await reader.waitForAppend(generation, 5_000);
    const after = await reader.readAll({ after: 0, limit: 100 });
    expect(counting.reads()).toBe(2);
    expect(after.length).toBe(before.length + 1);
  });
});
