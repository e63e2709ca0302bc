import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventMetadata } from '@portcullis/contracts';
import {
  WrongExpectedVersionError,
  type AppendResult,
  type EventStore,
  type ExpectedVersion,
  type NewEvent,
  type RecordedEvent,
  type StreamWrite,
} from '@portcullis/platform';
import { waitFor } from '../support/processes.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';

export interface EventStoreFixture {
  store: EventStore;
  cleanup(): Promise<void>;
}

export interface EventStoreCapabilities {
  /**
   * Positions run 1, 2, 3… with no hole, even where an append rolled back. True of the Postgres adapter (it
   * draws positions under a lock held to commit); a log with commit positions, like EventStoreDB's, only
   * promises increasing ones.
   */
  readonly gapFreePositions?: boolean;
}

/**
 * The behaviour every EventStore adapter must show, run against each adapter whose engine is reachable.
 * Each test gets a store of its own from `factory`, empty, so global facts (head, readAll) are exact.
 */
export function eventStoreContract(
  name: string,
  factory: () => Promise<EventStoreFixture>,
  capabilities: EventStoreCapabilities = {},
): void {
  const gapFree = capabilities.gapFreePositions ?? true;

  describe(`EventStore contract: ${name}`, () => {
    let fixture: EventStoreFixture | undefined;
    let store: EventStore;

    beforeEach(async () => {
      fixture = await factory();
      store = fixture.store;
    });

    afterEach(async () => {
      const current = fixture;
      fixture = undefined;
      await current?.cleanup();
    });

    describe('streams', () => {
      it('reads back what was appended, in order, with versions counting from 1', async () => {
        const streamId = newStreamId('order');
        const events = [testEvent({ n: 1 }), testEvent({ n: 2 }), testEvent({ n: 3 }, 'test.other_thing_happened.v1')];

        const result = await store.append([{ streamId, expectedVersion: 'no_stream', events }]);
        const read = await store.readStream(streamId);

        expect(read.version).toBe(3);
        expect(result.versions).toEqual({ [streamId]: 3 });
        expect(read.events.map((e) => e.streamVersion)).toEqual([1, 2, 3]);
        expect(read.events.map(stored)).toEqual(events.map((e) => ({ ...e, streamId })));
        expect(read.events.at(-1)!.position).toBe(result.position);
        expectIncreasing(read.events.map((e) => e.position));
        for (const e of read.events) expect(Number.isNaN(e.recordedAt.getTime())).toBe(false);
      });

      it('reads a stream that was never written as version 0 with no events', async () => {
        expect(await store.readStream(newStreamId('missing'))).toEqual({ version: 0, events: [] });
      });

      it('reads only the first `limit` events of a stream when asked, its version then the last one read', async () => {
        const streamId = newStreamId('opening');
        const events = [testEvent({ n: 1 }), testEvent({ n: 2 }), testEvent({ n: 3 })];
        await store.append([{ streamId, expectedVersion: 'no_stream', events }]);

        const opening = await store.readStream(streamId, { limit: 1 });
        expect(opening.version).toBe(1);
        expect(opening.events.map(stored)).toEqual([{ ...events[0]!, streamId }]);
        expect((await store.readStream(streamId, { limit: 2 })).events.map((e) => e.streamVersion)).toEqual([1, 2]);
        expect(await store.readStream(streamId, { limit: 10 })).toEqual(await store.readStream(streamId));
        expect(await store.readStream(streamId, { limit: 0 })).toEqual({ version: 0, events: [] });
        expect(await store.readStream(newStreamId('missing'), { limit: 1 })).toEqual({ version: 0, events: [] });
      });

      it('reads several streams in one call, each as it reads alone', async () => {
        const [a, b, missing] = [newStreamId('many-a'), newStreamId('many-b'), newStreamId('many-missing')];
        await store.append([{ streamId: a, expectedVersion: 'no_stream', events: [testEvent({ n: 1 }), testEvent({ n: 2 })] }]);
        await store.append([{ streamId: b, expectedVersion: 'no_stream', events: [testEvent({ n: 3 })] }]);
        await store.append([{ streamId: a, expectedVersion: 2, events: [testEvent({ n: 4 })] }]);

        const reads = await store.readStreams([b, missing, a]);

        expect([...reads.keys()].sort()).toEqual([a, b, missing].sort());
        for (const streamId of [a, b, missing]) expect(reads.get(streamId)).toEqual(await store.readStream(streamId));
        expect(reads.get(a)!.version).toBe(3);
        expect(reads.get(missing)).toEqual({ version: 0, events: [] });
      });

      it('reads from a snapshot on at most `limit` events, and the rest after the next snapshot', async () => {
        const streamId = newStreamId('chunked');
        await store.append([{ streamId, expectedVersion: 'no_stream', events: Array.from({ length: 10 }, (_, n) => testEvent({ n })) }]);
        const ofKind = (limit?: number) => store.readStreamsFromSnapshots([{ streamId, model: 'spec-chunks@1', ...(limit ? { limit } : {}) }]);

        const first = (await ofKind(4)).get(streamId)!;
        expect(first.snapshot).toBeNull();
        expect(first.read.events.map((e) => (e.data as { n: number }).n)).toEqual([0, 1, 2, 3]);
        expect(first.read.version).toBe(4);

        await store.saveSnapshot(streamId, 'spec-chunks@1', 4, { upTo: 3 });
        const second = (await ofKind(4)).get(streamId)!;
        expect(second.snapshot).toEqual({ version: 4, state: { upTo: 3 } });
        expect(second.read.events.map((e) => e.streamVersion)).toEqual([5, 6, 7, 8]);
        expect(second.read.version).toBe(8);
        const rest = (await ofKind()).get(streamId)!;
        expect(rest.read.events.map((e) => e.streamVersion)).toEqual([5, 6, 7, 8, 9, 10]);
        expect(rest.read.version).toBe(10);
      });

      it('keeps streams apart when their appends interleave', async () => {
        const [a, b] = [newStreamId('a'), newStreamId('b')];
        const appended = { [a]: [] as string[], [b]: [] as string[] };
        for (let i = 0; i < 6; i += 1) {
          const streamId = i % 3 === 0 ? b : a;
          const event = testEvent({ i });
          await store.append([{ streamId, expectedVersion: 'any', events: [event] }]);
          appended[streamId]!.push(event.eventId);
        }
        for (const streamId of [a, b]) {
          const read = await store.readStream(streamId);
          expect(read.events.map((e) => e.eventId)).toEqual(appended[streamId]);
          expect(read.events.map((e) => e.streamVersion)).toEqual(appended[streamId]!.map((_, i) => i + 1));
          expect(read.version).toBe(appended[streamId]!.length);
        }
      });

      it('refuses an append with no events, or with the same stream twice, and writes nothing', async () => {
        const streamId = newStreamId('malformed');
        await expect(store.append([])).rejects.toThrow();
        await expect(store.append([{ streamId, expectedVersion: 'any', events: [] }])).rejects.toThrow();
        await expect(
          store.append([
            { streamId, expectedVersion: 'any', events: [testEvent()] },
            { streamId, expectedVersion: 'any', events: [testEvent()] },
          ]),
        ).rejects.toThrow();
        expect(await store.headPosition()).toBe(0);
        expect((await store.readStream(streamId)).version).toBe(0);
      });

      it('writes a retried event id once', async () => {
        // A caller that lost the answer to an append retries it with the same event ids; the event must not
        // be in the log twice, whether the retry is refused or accepted as already done.
        const streamId = newStreamId('retry');
        const event = testEvent();
        await store.append([{ streamId, expectedVersion: 'any', events: [event] }]);
        await store.append([{ streamId, expectedVersion: 'any', events: [event] }]).catch(() => {});
        const all = await readEverything(store);
        expect(all.filter((e) => e.eventId === event.eventId)).toHaveLength(1);
      });
    });

    describe('expected versions', () => {
      it("'no_stream' writes a new stream and refuses an existing one", async () => {
        const streamId = newStreamId('no-stream');
        await store.append([{ streamId, expectedVersion: 'no_stream', events: [testEvent()] }]);
        const head = await store.headPosition();

        await expectWrongVersion(store.append([{ streamId, expectedVersion: 'no_stream', events: [testEvent()] }]), {
          streamId,
          expected: 'no_stream',
          actual: 1,
        });
        expect((await store.readStream(streamId)).version).toBe(1);
        expect(await store.headPosition()).toBe(head);
      });

      it('a number is the exact event count the stream must have (0 meaning no stream)', async () => {
        const streamId = newStreamId('exact');
        expect((await store.append([{ streamId, expectedVersion: 0, events: [testEvent()] }])).versions[streamId]).toBe(1);
        expect((await store.append([{ streamId, expectedVersion: 1, events: [testEvent(), testEvent()] }])).versions[streamId]).toBe(3);
        const head = await store.headPosition();

        // A stale writer (it decided on version 1) and one from the future both lose.
        await expectWrongVersion(store.append([{ streamId, expectedVersion: 1, events: [testEvent()] }]), {
          streamId,
          expected: 1,
          actual: 3,
        });
        await expectWrongVersion(store.append([{ streamId, expectedVersion: 5, events: [testEvent()] }]), {
          streamId,
          expected: 5,
          actual: 3,
        });
        await expectWrongVersion(store.append([{ streamId, expectedVersion: 0, events: [testEvent()] }]), {
          streamId,
          expected: 0,
          actual: 3,
        });
        expect((await store.readStream(streamId)).version).toBe(3);
        expect(await store.headPosition()).toBe(head);

        expect((await store.append([{ streamId, expectedVersion: 3, events: [testEvent()] }])).versions[streamId]).toBe(4);
      });

      it("'stream_exists' refuses a new stream and writes to an existing one", async () => {
        const streamId = newStreamId('exists');
        await expectWrongVersion(store.append([{ streamId, expectedVersion: 'stream_exists', events: [testEvent()] }]), {
          streamId,
          expected: 'stream_exists',
          actual: 0,
        });
        expect(await store.readStream(streamId)).toEqual({ version: 0, events: [] });
        expect(await store.headPosition()).toBe(0);

        await store.append([{ streamId, expectedVersion: 'any', events: [testEvent()] }]);
        const result = await store.append([{ streamId, expectedVersion: 'stream_exists', events: [testEvent()] }]);
        expect(result.versions[streamId]).toBe(2);
      });

      it("'any' writes whatever the stream holds", async () => {
        const streamId = newStreamId('any');
        expect((await store.append([{ streamId, expectedVersion: 'any', events: [testEvent()] }])).versions[streamId]).toBe(1);
        expect((await store.append([{ streamId, expectedVersion: 'any', events: [testEvent()] }])).versions[streamId]).toBe(2);
      });
    });

    describe('atomic appends across streams', () => {
      it('writes every stream of one append and reports each new version', async () => {
        const [a, b, c] = [newStreamId('a'), newStreamId('b'), newStreamId('c')];
        await store.append([{ streamId: c, expectedVersion: 'no_stream', events: [testEvent()] }]);
        const writes: StreamWrite[] = [
          { streamId: a, expectedVersion: 'no_stream', events: [testEvent(), testEvent()] },
          { streamId: b, expectedVersion: 'any', events: [testEvent()] },
          { streamId: c, expectedVersion: 1, events: [testEvent()] },
        ];

        const result = await store.append(writes);

        expect(result.versions).toEqual({ [a]: 2, [b]: 1, [c]: 2 });
        expect(result.position).toBe(await store.headPosition());
        const written = writes.flatMap((w) => w.events.map((e) => e.eventId));
        const all = await readEverything(store);
        // One append is one block of the log, in the order it was given.
        expect(all.slice(-written.length).map((e) => e.eventId)).toEqual(written);
      });

      // Where the conflicting write sits must not matter: first, middle, last.
      for (const conflictAt of [0, 1, 2]) {
        it(`writes nothing when one write conflicts (conflict at write ${conflictAt + 1} of 3)`, async () => {
          const existing = newStreamId('existing');
          await store.append([{ streamId: existing, expectedVersion: 'no_stream', events: [testEvent()] }]);
          const headBefore = await store.headPosition();
          const fresh = [newStreamId('fresh'), newStreamId('fresh')];
          const writes: StreamWrite[] = [
            { streamId: fresh[0]!, expectedVersion: 'no_stream', events: [testEvent(), testEvent()] },
            { streamId: fresh[1]!, expectedVersion: 'any', events: [testEvent()] },
          ];
          writes.splice(conflictAt, 0, { streamId: existing, expectedVersion: 'no_stream', events: [testEvent()] });

          await expectWrongVersion(store.append(writes), { streamId: existing, expected: 'no_stream', actual: 1 });

          for (const streamId of fresh) expect(await store.readStream(streamId)).toEqual({ version: 0, events: [] });
          expect((await store.readStream(existing)).version).toBe(1);
          expect(await store.headPosition()).toBe(headBefore);
          expect(await store.readAll({ after: headBefore, limit: 100 })).toEqual([]);
          // No event of the failed append is anywhere in the log, not even past the head.
          const failedIds = new Set(writes.flatMap((w) => w.events.map((e) => e.eventId)));
          expect((await readEverything(store)).filter((e) => failedIds.has(e.eventId))).toEqual([]);
        });
      }

      it('checks a write without events against its stream, writing nothing to it, and lands or fails whole', async () => {
        const [checked, written] = [newStreamId('checked'), newStreamId('written')];
        await store.append([{ streamId: checked, expectedVersion: 'no_stream', events: [testEvent(), testEvent()] }]);

        const landed = await store.append([
          { streamId: written, expectedVersion: 'no_stream', events: [testEvent()] },
          { streamId: checked, expectedVersion: 2, events: [] },
        ]);
        expect(landed.versions).toEqual({ [written]: 1 });
        expect((await store.readStream(checked)).version).toBe(2);

        await store.append([{ streamId: checked, expectedVersion: 2, events: [testEvent()] }]);
        const headBefore = await store.headPosition();
        await expectWrongVersion(
          store.append([
            { streamId: written, expectedVersion: 1, events: [testEvent()] },
            { streamId: checked, expectedVersion: 2, events: [] },
          ]),
          { streamId: checked, expected: 2, actual: 3 },
        );
        expect((await store.readStream(written)).version).toBe(1);
        expect(await store.headPosition()).toBe(headBefore);
      });

      it('lets exactly one of many concurrent appends at the same expected version win', async () => {
        const streamId = newStreamId('race');
        await store.append([{ streamId, expectedVersion: 'no_stream', events: [testEvent()] }]);
        // Open the connections first, so the contenders really overlap rather than queue behind connecting.
        await Promise.all(Array.from({ length: 8 }, () => store.readStream(streamId)));

        for (let round = 1; round <= 5; round += 1) {
          const contenders = Array.from({ length: 8 }, () => testEvent({ round }));
          const outcomes = await Promise.allSettled(
            contenders.map((event) => store.append([{ streamId, expectedVersion: round, events: [event] }])),
          );

          const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [contenders[i]!] : []));
          expect(winners, `winners of round ${round}`).toHaveLength(1);
          for (const o of outcomes) {
            if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(WrongExpectedVersionError);
          }
          const read = await store.readStream(streamId);
          expect(read.version).toBe(round + 1);
          expect(read.events.at(-1)!.eventId).toBe(winners[0]!.eventId);
        }
      });

      it('lets exactly one of many concurrent reservations win, leaving no orphan stream behind', async () => {
        // The uniqueness pattern: each contender reserves the same name ('no_stream') and writes its own new
        // stream in the same append; losers must leave nothing of theirs in the log.
        await Promise.all(Array.from({ length: 8 }, () => store.headPosition()));
        for (let round = 1; round <= 5; round += 1) {
          const reservation = newStreamId('reservation');
          const owners = Array.from({ length: 8 }, () => newStreamId('owner'));
          const headBefore = await store.headPosition();

          const outcomes = await Promise.allSettled(
            owners.map((owner) =>
              store.append([
                { streamId: reservation, expectedVersion: 'no_stream', events: [testEvent({ owner })] },
                { streamId: owner, expectedVersion: 'no_stream', events: [testEvent({ owner })] },
              ]),
            ),
          );

          expect(outcomes.filter((o) => o.status === 'fulfilled'), `winners of round ${round}`).toHaveLength(1);
          for (const o of outcomes) {
            if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(WrongExpectedVersionError);
          }
          const winner = owners[outcomes.findIndex((o) => o.status === 'fulfilled')]!;
          for (const owner of owners) {
            expect((await store.readStream(owner)).version).toBe(owner === winner ? 1 : 0);
          }
          const read = await store.readStream(reservation);
          expect(read.events.map((e) => (e.data as { owner: string }).owner)).toEqual([winner]);
          expect(await store.headPosition()).toBe(headBefore + 2);
        }
      });
    });

    describe('the global log', () => {
      it('readAll returns events in append order and pages exactly with `after`', async () => {
        const streamIds = [newStreamId('p'), newStreamId('q'), newStreamId('r')];
        const appendedIds: string[] = [];
        for (let i = 0; i < 12; i += 1) {
          // Singles and multi-stream appends mixed, so blocks and streams interleave in the log.
          const writes: StreamWrite[] =
            i % 4 === 3
              ? [
                  { streamId: streamIds[0]!, expectedVersion: 'any', events: [testEvent({ i }), testEvent({ i })] },
                  { streamId: streamIds[2]!, expectedVersion: 'any', events: [testEvent({ i })] },
                ]
              : [{ streamId: streamIds[i % 3]!, expectedVersion: 'any', events: [testEvent({ i })] }];
          await store.append(writes);
          appendedIds.push(...writes.flatMap((w) => w.events.map((e) => e.eventId!)));
        }

        const all = await store.readAll({ after: 0, limit: 1000 });
        expect(all.map((e) => e.eventId)).toEqual(appendedIds);
        expectIncreasing(all.map((e) => e.position));

        const paged: RecordedEvent[] = [];
        for (let after = 0; ; ) {
          const page = await store.readAll({ after, limit: 7 });
          if (page.length === 0) break;
          expect(page.length).toBeLessThanOrEqual(7);
          expect(page[0]!.position).toBeGreaterThan(after);
          paged.push(...page);
          after = page.at(-1)!.position;
        }
        expect(paged.map(stored)).toEqual(all.map(stored));

        const middle = all[9]!.position;
        expect((await store.readAll({ after: middle, limit: 3 })).map((e) => e.eventId)).toEqual(appendedIds.slice(10, 13));
        expect(await store.readAll({ after: all.at(-1)!.position, limit: 10 })).toEqual([]);
      });

      it('readAll with `types` and `until` returns only those types, in order, up to that position', async () => {
        const kinds = ['test.a_happened.v1', 'test.b_happened.v1', 'test.c_happened.v1'];
        const events = Array.from({ length: 12 }, (_, i) => testEvent({ i }, kinds[i % 3]));
        await store.append([{ streamId: newStreamId('typed'), expectedVersion: 'any', events }]);
        const all = await store.readAll({ after: 0, limit: 1000 });
        const wanted = all.filter((e) => e.type !== kinds[1]);
        const until = all[8]!.position;

        const read = await store.readAll({ after: 0, limit: 1000, types: [kinds[0]!, kinds[2]!], until });
        expect(read.map((e) => e.eventId)).toEqual(wanted.filter((e) => e.position <= until).map((e) => e.eventId));
        const page = await store.readAll({ after: all[0]!.position, limit: 2, types: [kinds[0]!, kinds[2]!] });
        expect(page.map((e) => e.eventId)).toEqual(wanted.slice(1, 3).map((e) => e.eventId));
        expect(await store.readAll({ after: 0, limit: 10, types: [] })).toEqual([]);
        expect((await store.readAll({ after: 0, limit: 1000, until })).map((e) => e.position)).toEqual(all.slice(0, 9).map((e) => e.position));
      });

      it('headPosition is 0 on an empty log and the position of the last event after each append', async () => {
        expect(await store.headPosition()).toBe(0);
        for (const count of [1, 3, 2]) {
          const result = await store.append([
            { streamId: newStreamId('head'), expectedVersion: 'any', events: Array.from({ length: count }, () => testEvent()) },
          ]);
          expect(await store.headPosition()).toBe(result.position);
          expect((await readEverything(store)).at(-1)!.position).toBe(result.position);
        }
      });

      it('countEvents counts the events in a stretch of the log, "at least atMost" where it reads them to count', async () => {
        await store.append([{ streamId: newStreamId('count'), expectedVersion: 'any', events: Array.from({ length: 5 }, () => testEvent()) }]);
        await store.append([{ streamId: newStreamId('count'), expectedVersion: 'any', events: [testEvent()] }]);
        const all = await store.readAll({ after: 0, limit: 100 });
        const head = await store.headPosition();
        expect(await store.countEvents({ after: 0, until: head, atMost: 100 })).toBe(6);
        expect(await store.countEvents({ after: all[1]!.position, until: all[3]!.position, atMost: 100 })).toBe(2);
        expect(await store.countEvents({ after: all[4]!.position, until: head, atMost: 100 })).toBe(1);
        expect(await store.countEvents({ after: head, until: head, atMost: 100 })).toBe(0);
        const capped = await store.countEvents({ after: 0, until: head, atMost: 3 });
        expect(capped).toBeGreaterThanOrEqual(3);
        expect(capped).toBeLessThanOrEqual(6);
      });

      it('finds an event by its id, in any case, as the log reads it; null for an id it does not hold or no uuid', async () => {
        const streamId = newStreamId('by-id');
        const events = [testEvent({ n: 1 }), testEvent({ n: 2 }), testEvent({ n: 3 })];
        const ids = events.map((e) => e.eventId);
        await store.append([{ streamId, expectedVersion: 'no_stream', events }]);
        await store.append([{ streamId: newStreamId('later'), expectedVersion: 'no_stream', events: [testEvent()] }]);
        const all = await readEverything(store);

        for (const id of [ids[0]!, ids[1]!.toUpperCase()]) {
          expect(await store.eventById(id)).toEqual(all.find((e) => e.eventId === id.toLowerCase()));
        }
        expect(await store.eventById(randomUUID())).toBeNull();
        expect(await store.eventById('not-a-uuid')).toBeNull();
      });

      it('reads the events at a set of positions in position order, each once, leaving out positions that hold none', async () => {
        await store.append([{ streamId: newStreamId('at'), expectedVersion: 'no_stream', events: [testEvent({ n: 1 }), testEvent({ n: 2 }), testEvent({ n: 3 })] }]);
        await store.append([{ streamId: newStreamId('at-later'), expectedVersion: 'no_stream', events: [testEvent({ n: 4 })] }]);
        const all = await readEverything(store);
        const [first, second, , fourth] = all.slice(-4);
        const head = await store.headPosition();

        expect(await store.eventsAt([fourth!.position, first!.position, fourth!.position, second!.position])).toEqual([first, second, fourth]);
        expect(await store.eventsAt([head + 1_000_000, 0])).toEqual([]);
        expect(await store.eventsAt([])).toEqual([]);
      });

      it.runIf(gapFree)('leaves no gap in positions where appends rolled back', async () => {
        const streamId = newStreamId('gaps');
        await store.append([{ streamId, expectedVersion: 'no_stream', events: [testEvent()] }]);
        for (let i = 0; i < 3; i += 1) {
          // Each of these draws positions before its version check fails, then rolls back.
          await expect(
            store.append([
              { streamId: newStreamId('other'), expectedVersion: 'any', events: [testEvent(), testEvent()] },
              { streamId, expectedVersion: 'no_stream', events: [testEvent()] },
            ]),
          ).rejects.toBeInstanceOf(WrongExpectedVersionError);
        }
        const result = await store.append([{ streamId, expectedVersion: 1, events: [testEvent(), testEvent()] }]);

        const all = await readEverything(store);
        expect(all.map((e) => e.position)).toEqual([1, 2, 3]);
        expect(result.position).toBe(3);
        expect(await store.headPosition()).toBe(3);
      });
    });

    describe('following the log', () => {
      it('subscribe delivers the events after `after`, then each new append', async () => {
        const streamId = newStreamId('follow');
        const before = [testEvent(), testEvent(), testEvent()];
        await store.append([{ streamId, expectedVersion: 'no_stream', events: before }]);
        const firstPosition = (await store.readStream(streamId)).events[0]!.position;

        const received: RecordedEvent[] = [];
        const subscription = store.subscribe({ after: firstPosition, onEvents: async (events) => void received.push(...events) });
        try {
          await waitFor(() => received.length >= 2, { timeoutMs: 10_000, message: 'the existing events after `after`' });
          const later = [testEvent(), testEvent()];
          await store.append([{ streamId, expectedVersion: 3, events: [later[0]!] }]);
          await store.append([{ streamId: newStreamId('follow-other'), expectedVersion: 'no_stream', events: [later[1]!] }]);
          await waitFor(() => received.length >= 4, { timeoutMs: 10_000, message: 'the appended events' });

          expect(received.map((e) => e.eventId)).toEqual([...before.slice(1), ...later].map((e) => e.eventId));
        } finally {
          await subscription.stop();
        }
        await expect(subscription.done).resolves.toBeUndefined();
      });

      it('wakes a waiting follower when an append commits, not at its timeout', async () => {
        // A store may still be setting up its wake-up channel when created; wait until it hears appends.
        await waitFor(
          async () => {
            const seen = store.appendGeneration();
            await store.append([{ streamId: newStreamId('warm-up'), expectedVersion: 'any', events: [testEvent()] }]);
            await store.waitForAppend(seen, 250);
            return store.appendGeneration() !== seen;
          },
          { timeoutMs: 15_000, message: 'the store to hear of its appends' },
        );

        const seen = store.appendGeneration();
        // Far longer than the test's own timeout: if no wake-up comes, the test fails rather than passes late.
        const woken = store.waitForAppend(seen, 10 * 60_000);
        await store.append([{ streamId: newStreamId('wake'), expectedVersion: 'any', events: [testEvent()] }]);
        await woken;
        expect(store.appendGeneration()).not.toBe(seen);
        // Already past `seen`: returns at once rather than waiting for a later append.
        await store.waitForAppend(seen, 10 * 60_000);
      });

      it("settles `done` with the handler's error when the handler fails", async () => {
        await store.append([{ streamId: newStreamId('failing'), expectedVersion: 'any', events: [testEvent()] }]);
        const subscription = store.subscribe({
          after: 0,
          onEvents: async () => {
            throw new Error('handler broke');
          },
        });
        await expect(subscription.done).rejects.toThrow('handler broke');
        await subscription.stop();
      });

      it(
        'a subscriber from 0 sees every event concurrent writers commit, exactly once and in order',
        { timeout: 120_000 },
        async () => {
          const seed = testSeed();
          console.info(`[event-store contract ${name}] concurrent writers seed=${seed}`);
          const WRITERS = 8;
          const EVENTS_PER_WRITER = 500;
          const shared = [newStreamId('shared'), newStreamId('shared'), newStreamId('shared')];
          const sharedWritten = new Map<string, number>(shared.map((s) => [s, 0]));
          const appends: { result: AppendResult; eventIds: string[] }[] = [];

          const received: RecordedEvent[] = [];
          // Small batches, so the subscriber catches up and waits many times while writers are busy.
          const subscription = store.subscribe({ after: 0, batchSize: 50, onEvents: async (events) => void received.push(...events) });

          const writer = async (w: number): Promise<void> => {
            const random = seededRandom(seed + w);
            const own: { streamId: string; version: number }[] = [];
            let written = 0;
            while (written < EVENTS_PER_WRITER) {
              const budget = EVENTS_PER_WRITER - written;
              const batch = (max: number): NewEvent[] =>
                Array.from({ length: Math.min(budget, random.int(1, max)) }, () => testEvent({ w }));
              const roll = random.next();
              let writes: StreamWrite[];
              if (roll < 0.3 || own.length === 0) {
                writes = [{ streamId: newStreamId(`w${w}`), expectedVersion: 'no_stream', events: batch(1) }];
              } else if (roll < 0.6) {
                const target = random.pick(own);
                writes = [{ streamId: target.streamId, expectedVersion: target.version, events: batch(4) }];
              } else if (roll < 0.85 && budget >= 2) {
                const target = random.pick(own);
                const events = batch(3);
                writes = [
                  { streamId: target.streamId, expectedVersion: target.version, events: events.slice(0, Math.max(1, events.length - 1)) },
                  { streamId: random.pick(shared), expectedVersion: 'any', events: [testEvent({ w })] },
                ];
              } else {
                writes = [{ streamId: random.pick(shared), expectedVersion: 'any', events: batch(2) }];
              }
              // Every write here is to the writer's own streams at their true version, or 'any': under any
              // amount of contention, none may fail.
              const result = await store.append(writes);
              for (const write of writes) {
                const mine = own.find((o) => o.streamId === write.streamId);
                if (mine) mine.version = result.versions[write.streamId]!;
                else if (sharedWritten.has(write.streamId)) {
                  sharedWritten.set(write.streamId, sharedWritten.get(write.streamId)! + write.events.length);
                } else own.push({ streamId: write.streamId, version: result.versions[write.streamId]! });
              }
              const eventIds = writes.flatMap((wr) => wr.events.map((e) => e.eventId!));
              appends.push({ result, eventIds });
              written += eventIds.length;
            }
          };

          try {
            await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
            const head = await store.headPosition();
            await waitFor(() => (received.at(-1)?.position ?? 0) >= head, {
              timeoutMs: 30_000,
              message: `the subscriber to reach the head (${head}); it is at ${received.at(-1)?.position ?? 0}`,
            });
          } finally {
            await subscription.stop();
          }

          const all = await readEverything(store);
          const committedIds = appends.flatMap((a) => a.eventIds);
          expect(all).toHaveLength(WRITERS * EVENTS_PER_WRITER);
          expect(new Set(all.map((e) => e.eventId))).toEqual(new Set(committedIds));

          // The subscriber's sequence is the log's, element by element: nothing skipped, repeated or reordered.
          const difference = firstDifference(
            received.map((e) => `${e.position}:${e.eventId}`),
            all.map((e) => `${e.position}:${e.eventId}`),
          );
          expect(difference, 'first place where the subscriber and readAll disagree').toBeUndefined();
          expectIncreasing(received.map((e) => e.position));
          if (gapFree) {
            const firstGap = all.findIndex((e, i) => e.position !== i + 1);
            expect(firstGap, 'index of the first non-contiguous position').toBe(-1);
          }

          // Each append is one block of the log in its own order, ending at the position it reported.
          const indexById = new Map(all.map((e, i) => [e.eventId, i]));
          for (const { result, eventIds } of appends) {
            const indexes = eventIds.map((id) => indexById.get(id)!);
            expect(indexes).toEqual(indexes.map((_, i) => indexes[0]! + i));
            expect(all[indexes.at(-1)!]!.position).toBe(result.position);
          }

          for (const [streamId, count] of sharedWritten) {
            const read = await store.readStream(streamId);
            expect(read.version).toBe(count);
            expect(read.events.map((e) => e.streamVersion)).toEqual(read.events.map((_, i) => i + 1));
            expectIncreasing(read.events.map((e) => e.position));
          }
        },
      );
    });
  });
}

const occurredAt = '2026-01-02T03:04:05.678Z';

function testEvent(data: Record<string, unknown> = {}, type = 'test.something_happened.v1'): NewEvent & { eventId: string } {
  const eventId = randomUUID();
  const metadata: EventMetadata = { occurredAt, correlationId: eventId, actorId: null };
  return { type, data: { ...data, eventId }, metadata, eventId };
}

function newStreamId(kind: string): string {
  return `test-${kind}-${randomUUID()}`;
}

/** The caller-visible content of a recorded event, for comparison with what was appended. */
function stored(e: RecordedEvent): { streamId: string; eventId: string; type: string; data: unknown; metadata: EventMetadata } {
  return { streamId: e.streamId, eventId: e.eventId, type: e.type, data: e.data, metadata: e.metadata };
}

async function readEverything(store: EventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (;;) {
    const page = await store.readAll({ after: all.at(-1)?.position ?? 0, limit: 1000 });
    if (page.length === 0) return all;
    all.push(...page);
  }
}

async function expectWrongVersion(
  append: Promise<unknown>,
  expected: { streamId: string; expected: ExpectedVersion; actual: number },
): Promise<void> {
  const error = await append.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WrongExpectedVersionError);
  expect(error).toMatchObject(expected);
}

function expectIncreasing(positions: readonly number[]): void {
  const firstBad = positions.findIndex((p, i) => i > 0 && p <= positions[i - 1]!);
  expect(firstBad, `positions must strictly increase; first offender at index ${firstBad}`).toBe(-1);
}

function firstDifference(actual: readonly string[], expected: readonly string[]): string | undefined {
  for (let i = 0; i < Math.max(actual.length, expected.length); i += 1) {
    if (actual[i] !== expected[i]) return `index ${i}: got ${actual[i] ?? '(nothing)'}, expected ${expected[i] ?? '(nothing)'}`;
  }
  return undefined;
}
