import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError, OrganizationJoined, OrganizationLeft, snapshotKind, type StreamModel } from '@portcullis/contracts';
import { createEventLogDatabase, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { sql } from '../database/pool.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { SEALED_SNAPSHOT_SUFFIX } from '../personal-data/sealed-snapshots.ts';
import { CommandHandler } from './command-handler.ts';
import type { UnitOfWork } from './unit-of-work.ts';
import { systemRequest } from './request-metadata.ts';
import { SNAPSHOT_INTERVAL } from './stream-loader.ts';

/** A stream of joins and leaves, folded into the organizations held: enough to decide on. */
interface Memberships {
  readonly organizations: readonly string[];
}

const memberships: StreamModel<Memberships> = {
  name: 'spec-memberships',
  revision: 1,
  initial: () => ({ organizations: [] }),
  evolve(state, event) {
    if (event.type === 'organization_index.joined.v1') return { organizations: [...state.organizations, event.data.organizationId] };
    if (event.type === 'organization_index.left.v1') return { organizations: state.organizations.filter((id) => id !== event.data.organizationId) };
    return state;
  },
};

/** The store as the handler sees it, counting what it reads. */
function counting(store: EventStore): { store: EventStore; reads: { streams: number; events: number } } {
  const reads = { streams: 0, events: 0 };
  const seen: EventStore = Object.create(store) as EventStore;
  seen.readStreamsFromSnapshots = async (requests) => {
    const answer = await store.readStreamsFromSnapshots(requests);
    reads.streams += requests.length;
    for (const read of answer.values()) reads.events += read.read.events.length;
    return answer;
  };
  return { store: seen, reads };
}

/** Joins one more organization, refusing a second join of the same one (a rule decided on the state). */
function join(userId: string, organizationId: string) {
  return async (unit: UnitOfWork): Promise<number> => {
    const stream = await unit.load(`spec-${userId}`, memberships);
    if (stream.state.organizations.includes(organizationId)) throw new DomainError('ORGANIZATION_ALREADY_EXISTS');
    unit.append(stream.streamId, [OrganizationJoined({ userId, organizationId })]);
    return stream.state.organizations.length + 1;
  };
}

describe('CommandHandler (real Postgres)', () => {
  let db: EventLogDatabase;
  const handlerOn = (store: EventStore): CommandHandler =>
    new CommandHandler({ store, clock: () => new Date(), settle: async () => {}, backoff: { baseMs: 1, capMs: 5 } });

  beforeAll(async () => {
    db = await createEventLogDatabase('command_handler');
  });

  afterAll(async () => {
    await db?.close();
  });

  it('decides the next command on the state it kept, reading nothing', async () => {
    const { store, reads } = counting(db.store);
    const handler = handlerOn(store);
    const userId = randomUUID();
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'a'));
    expect(reads.streams).toBe(1);
    const { result } = await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'b'));
    expect(result).toBe(2);
    expect(reads.streams).toBe(1);
  });

  it('tells the store how many appends are coming with each one, but never with a revocation', async () => {
    const told: (number | undefined)[] = [];
    const store: EventStore = Object.create(db.store) as EventStore;
    store.append = (writes, options) => {
      told.push(options?.othersUnderWay);
      return db.store.append(writes, options);
    };
    const handler = new CommandHandler({ store, clock: () => new Date(), settle: async () => {}, othersUnderWay: () => 3 });
    const userId = randomUUID();
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'a'));
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null, settle: 'revocation' }, join(userId, 'b'));
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null, settle: 'none' }, join(userId, 'c'));
    expect(told).toEqual([3, 0, 3]);
  });

  it('decides again on a fresh read when another process moved the stream, and lands the right events', async () => {
    const userId = randomUUID();
    const mine = handlerOn(db.store);
    const theirs = handlerOn(db.store);
    await mine.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'a'));
    await theirs.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'b'));
    // Mine still keeps the state after 'a': its append finds the stream moved, reads it, and decides again.
    const { result } = await mine.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'c'));
    expect(result).toBe(3);
    // A refusal decided on a kept state is decided once more on what the log holds: 'b' is there now.
    await expect(mine.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'b'))).rejects.toMatchObject({ code: 'ORGANIZATION_ALREADY_EXISTS' });
    expect((await db.store.readStream(`spec-${userId}`)).events.map((e) => (e.data as { organizationId: string }).organizationId)).toEqual(['a', 'b', 'c']);
  });

  it('queues commands on one stream within a process: many at once, no conflict among them', async () => {
    const userId = randomUUID();
    let appends = 0;
    const store = Object.create(db.store) as EventStore;
    store.append = async (writes) => {
      appends += 1;
      return db.store.append(writes);
    };
    const handler = handlerOn(store);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => handler.handle({ name: 'spec', request: systemRequest, actorId: null, serialize: [`spec-${userId}`] }, join(userId, `o${i}`))),
    );
    expect(results.map((r) => r.result).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(appends).toBe(20);
  });

  it('answers a conflict that persists with 409 CONFLICT, never an unhandled error', async () => {
    const userId = randomUUID();
    const handler = handlerOn(db.store);
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'a'));
    const stubborn = (unit: UnitOfWork): Promise<void> => {
      // Always expects a version the stream has left behind.
      unit.append(`spec-${userId}`, [OrganizationLeft({ userId, organizationId: 'a' })], { expected: 0 });
      return Promise.resolve();
    };
    const refused = await handler.handle({ name: 'spec', request: systemRequest, actorId: null, attempts: 3 }, stubborn).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'CONFLICT', status: 409 });
  });

  it('loads a long stream from its latest snapshot: the fold is bounded however long the stream grows', async () => {
    const userId = randomUUID();
    const writer = handlerOn(db.store);
    const total = SNAPSHOT_INTERVAL * 3 + 5;
    for (let i = 0; i < total; i += 1) await writer.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, `o${i}`));
    const kept = await db.pool.oneFirst(sql.unsafe`SELECT version FROM snapshots WHERE stream_id = ${`spec-${userId}`} AND model = ${snapshotKind(memberships) + SEALED_SNAPSHOT_SUFFIX}`);
    expect(Number(kept)).toBeGreaterThan(total - SNAPSHOT_INTERVAL);

    // Another process, holding nothing: it reads the snapshot and the few events after it.
    const { store, reads } = counting(db.store);
    const { result } = await handlerOn(store).handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'last'));
    expect(result).toBe(total + 1);
    expect(reads.events).toBeLessThan(SNAPSHOT_INTERVAL);

    // A snapshot of another revision of the fold is not read as this one's.
    const revised = { ...memberships, revision: 2 };
    const { store: fresh, reads: freshReads } = counting(db.store);
    await handlerOn(fresh).handle({ name: 'spec', request: systemRequest, actorId: null }, async (unit) => {
      const stream = await unit.load(`spec-${userId}`, revised);
      expect(stream.state.organizations).toHaveLength(total + 1);
    });
    expect(freshReads.events).toBe(total + 1);
  });
});

describe('UnitOfWork, what a decision rests on (real Postgres)', () => {
  let db: EventLogDatabase;
  const handlerOn = (store: EventStore): CommandHandler =>
    new CommandHandler({ store, clock: () => new Date(), settle: async () => {}, backoff: { baseMs: 1, capMs: 5 } });

  /** The same stream as a count of its events: a second model of it. */
  const eventCount: StreamModel<number> = { name: 'spec-count', revision: 1, initial: () => 0, evolve: (count) => count + 1 };

  beforeAll(async () => {
    db = await createEventLogDatabase('unit_of_work');
  });

  afterAll(async () => {
    await db?.close();
  });

  it('folds one stream by two models in one decision, and appends at the one version both read', async () => {
    const userId = randomUUID();
    const handler = handlerOn(db.store);
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, join(userId, 'a'));
    const { result } = await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, async (unit) => {
      const [joined, counted] = [await unit.load(`spec-${userId}`, memberships), await unit.load(`spec-${userId}`, eventCount)];
      unit.append(`spec-${userId}`, [OrganizationJoined({ userId, organizationId: `o${counted.state}` })]);
      return [joined.state.organizations.length, counted.state, counted.version];
    });
    expect(result).toEqual([1, 1, 1]);
    expect((await db.store.readStream(`spec-${userId}`)).version).toBe(2);
  });

  it("requires a stream loaded with check 'if-kept' unchanged only when its state was kept, not when read now", async () => {
    const userId = randomUUID();
    const guarded = `spec-guard-${userId}`;
    const mine = handlerOn(db.store);
    const theirs = handlerOn(db.store);
    await mine.handle({ name: 'spec', request: systemRequest, actorId: null }, async (unit) => {
      unit.append(guarded, [OrganizationJoined({ userId, organizationId: 'seed' })], { expected: 'no_stream' });
    });
    let decisions = 0;
    const decideOnGuard = async (unit: UnitOfWork): Promise<void> => {
      decisions += 1;
      await unit.load(guarded, eventCount, { check: 'if-kept' });
      unit.append(`spec-${userId}-${decisions}`, [OrganizationJoined({ userId, organizationId: 'x' })], { expected: 'no_stream' });
    };
    // Read now: another writer moving the guarded stream meanwhile does not refuse the append.
    await mine.handle({ name: 'spec', request: systemRequest, actorId: null }, async (unit) => {
      await decideOnGuard(unit);
      await theirs.handle({ name: 'spec', request: systemRequest, actorId: null }, async (other) => {
        const stream = await other.load(guarded, eventCount);
        other.append(guarded, [OrganizationJoined({ userId, organizationId: 'meanwhile' })], { expected: stream.version });
      });
    });
    expect(decisions).toBe(1);
    // Kept from that decision (at the version before theirs): required unchanged, so decided again on a read.
    await mine.handle({ name: 'spec', request: systemRequest, actorId: null }, decideOnGuard);
    expect(decisions).toBe(3);
  });

  it('keeps no state its model calls too large to keep', async () => {
    const userId = randomUUID();
    const small: StreamModel<number> = { ...eventCount, name: 'spec-small', keepable: (count) => count < 2 };
    const { store, reads } = counting(db.store);
    const handler = handlerOn(store);
    const grow = async (unit: UnitOfWork): Promise<void> => {
      const stream = await unit.load(`spec-${userId}`, small);
      unit.append(stream.streamId, [OrganizationJoined({ userId, organizationId: `o${stream.state}` })]);
    };
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, grow);
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, grow);
    expect(reads.streams).toBe(1);
    // Two events now: not kept, so the next command reads it.
    await handler.handle({ name: 'spec', request: systemRequest, actorId: null }, grow);
    expect(reads.streams).toBe(2);
  });
});
