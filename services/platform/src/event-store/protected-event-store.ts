import type { PersonalData, PersonalValueNote } from '../personal-data/personal-data.ts';
import { notePersonalValue, SEALED_SNAPSHOT_SUFFIX, SnapshotSealing } from '../personal-data/sealed-snapshots.ts';
import {
  WrongExpectedVersionError,
  type AppendNotices,
  type AppendOptions,
  type AppendResult,
  type ReadAllOptions,
  type EventRange,
  type EventStore,
  type RecordedEvent,
  type SnapshotRead,
  type SnapshotReadRequest,
  type StreamRead,
  type StreamReadOptions,
  type StreamWrite,
  type SubscribeOptions,
  type Subscription,
} from './event-store.ts';

/**
 * Any event store with personal data protected at its boundary (see `PersonalData`): appends encrypt,
 * every read decrypts (deciders' loads, projections, time travel, replays), and address-spelling stream
 * ids are stored under their keyed names while callers keep the names they know. After appending a
 * user's deletion it runs `erase` (the `Eraser`), so the deletion's command answers with the keys gone.
 * Snapshots are kept with their personal values sealed under the same keys (`SnapshotSealing`).
 */
export class ProtectedEventStore implements EventStore {
  private readonly sealing: SnapshotSealing;

  constructor(
    private readonly inner: EventStore,
    readonly personalData: PersonalData,
    private readonly erase?: (event: { type: string; data: unknown }) => Promise<void>,
  ) {
    this.sealing = new SnapshotSealing(personalData);
  }

  private stored(streamId: string): string {
    return this.personalData.storedStreamId(streamId);
  }

  /**
   * Streams' events decrypted in one go (one read of the keys not kept, however many streams a command
   * loads), each under the id the caller asked for.
   */
  private async asAsked(reads: ReadonlyArray<readonly [string, StreamRead]>, note?: PersonalValueNote): Promise<StreamRead[]> {
    const decoded = await this.personalData.decode(
      reads.flatMap(([, read]) => read.events),
      note,
    );
    let next = 0;
    return reads.map(([streamId, read]) => {
      const events = decoded.slice(next, (next += read.events.length));
      return { version: read.version, events: events.map((e) => (e.streamId === streamId ? e : { ...e, streamId })) };
    });
  }

  async append(writes: readonly StreamWrite[], options?: AppendOptions): Promise<AppendResult> {
    const names = new Map(writes.map((w) => [this.stored(w.streamId), w.streamId]));
    const writeOf = writes.flatMap((w, index) => w.events.map(() => index));
    const sealedByWrite = writes.map(() => new Map<string, Set<string>>());
    const events = await this.personalData.encodeAll(
      writes.flatMap((w) => w.events),
      (eventIndex, plaintext, subjectId) => notePersonalValue(sealedByWrite[writeOf[eventIndex]!]!, plaintext, subjectId),
    );
    let next = 0;
    const encoded = writes.map((w) => ({ streamId: this.stored(w.streamId), expectedVersion: w.expectedVersion, events: events.slice(next, (next += w.events.length)) }));
    let result: AppendResult;
    try {
      result = await this.inner.append(encoded, options);
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw new WrongExpectedVersionError(names.get(error.streamId) ?? error.streamId, error.expected, error.actual);
      }
      throw error;
    }
    for (const [index, write] of encoded.entries()) {
      const version = result.versions[write.streamId];
      if (version !== undefined) this.sealing.noteAppend(write.streamId, write.events.length, version, sealedByWrite[index]!);
    }
    if (this.erase) {
      for (const write of writes) for (const event of write.events) await this.erase(event);
    }
    return { position: result.position, versions: Object.fromEntries(Object.entries(result.versions).map(([id, v]) => [names.get(id) ?? id, v])) };
  }

  async readStream(streamId: string, options?: StreamReadOptions): Promise<StreamRead> {
    const [read] = await this.asAsked([[streamId, await this.inner.readStream(this.stored(streamId), options)]]);
    return read!;
  }

  async readStreams(streamIds: readonly string[]): Promise<ReadonlyMap<string, StreamRead>> {
    const reads = await this.inner.readStreams(streamIds.map((id) => this.stored(id)));
    const asked = await this.asAsked(streamIds.map((id) => [id, reads.get(this.stored(id)) ?? { version: 0, events: [] }] as const));
    return new Map(streamIds.map((id, index) => [id, asked[index]!]));
  }

  /**
   * Snapshots of the sealed kind, opened; one whose key is gone (an erased user's value in it) is passed
   * over for the whole stream, read from its start. Each fold's values are noted for its snapshot's save.
   */
  async readStreamsFromSnapshots(
    requests: ReadonlyArray<SnapshotReadRequest>,
  ): Promise<ReadonlyMap<string, SnapshotRead>> {
    const storedIds = requests.map(({ streamId }) => this.stored(streamId));
    const reads = await this.inner.readStreamsFromSnapshots(
      requests.map((r, index) => ({ streamId: storedIds[index]!, model: r.model + SEALED_SNAPSHOT_SUFFIX, ...(r.limit !== undefined ? { limit: r.limit } : {}) })),
    );
    const found = storedIds.map((id) => reads.get(id) ?? { snapshot: null, read: { version: 0, events: [] } });
    const opened = await Promise.all(found.map(({ snapshot }) => (snapshot ? this.sealing.open(snapshot.state) : Promise.resolve(null))));
    const unreadable = found.flatMap(({ snapshot }, index) => (snapshot && !opened[index] ? [storedIds[index]!] : []));
    if (unreadable.length > 0) {
      const whole = await this.inner.readStreams(unreadable);
      for (const [index, id] of storedIds.entries()) {
        if (!found[index]!.snapshot || opened[index]) continue;
        const read = whole.get(id) ?? { version: 0, events: [] };
        const limit = requests[index]!.limit;
        // Rare (a snapshot naming an erased user), so read whole, but answered as the limit asks.
        const events = limit !== undefined && read.events.length > limit ? read.events.slice(0, limit) : read.events;
        found[index] = { snapshot: null, read: { version: events.at(-1)?.streamVersion ?? 0, events } };
      }
    }
    const valuesOf = found.map((_, index) => opened[index]?.values ?? new Map<string, Set<string>>());
    const streamOfEvent = found.flatMap(({ read }, index) => read.events.map(() => index));
    const asked = await this.asAsked(
      requests.map(({ streamId }, index) => [streamId, found[index]!.read] as const),
      (eventIndex, plaintext, subjectId) => notePersonalValue(valuesOf[streamOfEvent[eventIndex]!]!, plaintext, subjectId),
    );
    return new Map(
      requests.map(({ streamId, model }, index) => {
        const { snapshot } = found[index]!;
        this.sealing.noteRead(storedIds[index]!, model, snapshot?.version ?? 0, asked[index]!.version, valuesOf[index]!);
        const state = snapshot ? { version: snapshot.version, state: opened[index]!.state } : null;
        return [streamId, { snapshot: state, read: asked[index]! }];
      }),
    );
  }

  /** Keeps the snapshot sealed, or nothing where this process did not see the fold it comes from (see `SnapshotSealing`). */
  async saveSnapshot(streamId: string, model: string, version: number, state: unknown): Promise<void> {
    const stored = this.stored(streamId);
    const sealed = await this.sealing.seal(stored, model, version, state);
    if (sealed === null) return;
    await this.inner.saveSnapshot(stored, model + SEALED_SNAPSHOT_SUFFIX, version, sealed);
  }

  /**
   * What followers of the log read: decrypted, and a deletion read makes this process forget the keys it
   * erased, so a follower that was behind reads everything after it as erased, not from a kept key.
   */
  async readAll(options: ReadAllOptions): Promise<readonly RecordedEvent[]> {
    const events = await this.personalData.decode(await this.inner.readAll(options));
    for (const event of events) this.personalData.keys.forget(this.personalData.erasedBy(event));
    return events;
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  countEvents(range: EventRange): Promise<number> {
    return this.inner.countEvents(range);
  }

  logId(): Promise<string> {
    return this.inner.logId();
  }

  eventIdAt(position: number): Promise<string | null> {
    return this.inner.eventIdAt(position);
  }

  /** Decrypted as any read (no key is forgotten: a lookup, not a follower); stream ids as stored, as `readAll` gives them. */
  async eventsAt(positions: readonly number[]): Promise<readonly RecordedEvent[]> {
    return this.personalData.decode(await this.inner.eventsAt(positions));
  }

  /** Decrypted as any read; its stream id is the stored one, as `readAll` gives it. */
  async eventById(eventId: string): Promise<RecordedEvent | null> {
    const event = await this.inner.eventById(eventId);
    if (!event) return null;
    const [decoded] = await this.personalData.decode([event]);
    return decoded!;
  }

  appendGeneration(): number {
    return this.inner.appendGeneration();
  }

  appendNotices(): AppendNotices {
    return this.inner.appendNotices();
  }

  waitForAppend(generation: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.inner.waitForAppend(generation, timeoutMs, signal);
  }

  subscribe(options: SubscribeOptions): Subscription {
    return this.inner.subscribe({
      ...options,
      onEvents: async (stored) => {
        const events = await this.personalData.decode(stored);
        for (const event of events) this.personalData.keys.forget(this.personalData.erasedBy(event));
        await options.onEvents(events);
      },
    });
  }

  /** Closes the store it protects (the keys belong to whoever made them). */
  close(): Promise<void> {
    return this.inner.close();
  }
}
