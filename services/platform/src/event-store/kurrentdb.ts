import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  KurrentDBClient,
  StreamNotFoundError,
  streamNameFilter,
  type AllStreamSubscription,
  type MultiAppendResult,
  type Position,
  type ReadRevision,
} from '@kurrent/kurrentdb-client';
import { AppendSignal, followBySignal } from './append-signal.ts';
import { SnapshotTable } from './snapshot-table.ts';
import type {
  AppendNotices,
  AppendOptions,
  AppendResult,
  EventRange,
  EventStore,
  ReadAllOptions,
  RecordedEvent,
  SnapshotRead,
  SnapshotReadRequest,
  StreamRead,
  StreamReadOptions,
  StreamWrite,
  SubscribeOptions,
  Subscription,
} from './event-store.ts';
import {
  KurrentNames,
  appendRequestOf,
  classifyFailure,
  eventIdKey,
  onePositionRead,
  placeInRange,
  positionsToRead,
  positionOf,
  readFrom,
  toRecordedEvent,
  versionOfRevision,
  type KurrentRecord,
} from './kurrentdb-mapping.ts';

export interface KurrentEventStoreOptions {
  /** EVENTSTORE_URL: `kurrentdb://…` (or `esdb://…`), credentials and TLS as the client's connection string takes them. */
  readonly connectionString: string;
  /** The Postgres database whose `snapshots` table keeps the streams' snapshots (see `SnapshotTable`). */
  readonly snapshotsDatabaseUrl: string;
  /** Whose streams these are on the server (see `KurrentNames`); one per log. */
  readonly namespace?: string;
  /**
   * Hear other processes' appends through a live subscription to `$all` (a follower: the projector, the
   * mailer). Without it (the api) waiting followers in this process wake on its own appends and poll.
   */
  readonly listen?: boolean;
  readonly log?: (message: string, error?: unknown) => void;
}

/** How many one-event reads `eventsAt` has under way at once. */
const EVENTS_AT_IN_FLIGHT = 32;

/** Our position → the commit position of its append, for the events a process has seen lately. */
const KNOWN_COMMITS = 8192;
/** Tries of a call the client answered with "not the leader" or "unreachable" (it finds the leader again itself). */
const TRIES = 3;

class StreamDeletedOutsideError extends Error {
  constructor(streamName: string) {
    super(`KurrentDB stream ${streamName} was deleted outside Portcullis; the log never deletes a stream, so nothing more is written to it`);
    this.name = 'StreamDeletedOutsideError';
  }
}

class AccessDeniedByServerError extends Error {
  constructor(cause: unknown) {
    super('KurrentDB refused the credentials of EVENTSTORE_URL for this operation', { cause });
    this.name = 'AccessDeniedByServerError';
  }
}

/**
 * The event log on KurrentDB 25.1 or later. Appends are one `multiStreamAppend` (an expected revision per
 * stream, all or nothing), or, when a write only checks a stream, one `appendRecords` with that check beside
 * the records. Reads of the whole log are `$all` filtered to this log's prefix; positions are prepare
 * positions (see `positionOf`). Snapshots stay in Postgres (`SnapshotTable`), with the keys and read models.
 * Every read asks for the leader: a follower may not have an append yet, which a command deciding on the
 * stream, or a settlement waiting for its own append, must see. How each of the port's guarantees maps is in docs/design-notes.md.
 */
export class KurrentEventStore implements EventStore {
  private readonly client: KurrentDBClient;
  private readonly names: KurrentNames;
  private readonly log: (message: string, error?: unknown) => void;
  private readonly signal = new AppendSignal();
  private notices: AppendNotices = { heard: 0, othersUnderWay: 0 };
  private readonly knownCommits = new Map<number, bigint>();
  private readonly snapshots: SnapshotTable;
  private live: AllStreamSubscription | null = null;
  private closed = false;
  private identity: Promise<string> | null = null;

  constructor(options: KurrentEventStoreOptions) {
    this.client = KurrentDBClient.connectionString(options.connectionString);
    this.names = new KurrentNames(options.namespace ?? 'portcullis');
    this.snapshots = new SnapshotTable(options.snapshotsDatabaseUrl);
    this.log = options.log ?? (() => {});
    if (options.listen) this.listen();
  }

  private get logFilter() {
    return streamNameFilter({ prefixes: [this.names.eventPrefix] });
  }

  /** Wakes followers on every event of this log any process appends; on losing it, wakes them and listens again. */
  private listen(): void {
    if (this.closed) return;
    const subscription = this.client.subscribeToAll({ fromPosition: END, filter: this.logFilter });
    this.live = subscription;
    subscription.on('data', () => {
      this.notices = { heard: this.notices.heard + 1, othersUnderWay: 0 };
      this.signal.notify();
    });
    subscription.on('error', (error) => {
      if (this.closed) return;
      this.log('KurrentDB subscription to $all lost; followers poll until it is back', error);
      this.signal.notify();
      setTimeout(() => this.listen(), 1000).unref();
    });
  }

  private remember(position: Position): void {
    this.knownCommits.set(positionOf(position), position.commit);
    if (this.knownCommits.size > KNOWN_COMMITS) {
      const oldest = this.knownCommits.keys().next().value!;
      this.knownCommits.delete(oldest);
    }
  }

  /** A call, tried again while the client says the leader moved or was out of reach, each failure as ours. */
  private async call<T>(operation: () => Promise<T>, options: { writes?: readonly StreamWrite[]; isAppend?: boolean } = {}): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await operation();
      } catch (error) {
        const failure = classifyFailure(this.names, error, options.writes);
        switch (failure.kind) {
          case 'conflict':
            throw failure.error;
          case 'retry':
            // An append the node may have written is not sent again: the caller's event ids make its own retry safe.
            if (attempt < TRIES && !(options.isAppend && failure.appendMayHaveLanded)) continue;
            throw error;
          case 'denied':
            throw new AccessDeniedByServerError(error);
          case 'deleted':
            throw new StreamDeletedOutsideError(failure.streamName);
          default:
            throw error;
        }
      }
    }
  }

  async append(writes: readonly StreamWrite[], options: AppendOptions = {}): Promise<AppendResult> {
    void options.othersUnderWay; // KurrentDB carries no such count to followers (see appendNotices).
    if (!writes.some((w) => w.events.length > 0)) throw new Error('append needs at least one event');
    if (new Set(writes.map((w) => w.streamId)).size !== writes.length) throw new Error('append takes each stream once');

    const request = appendRequestOf(this.names, writes, randomUUID);
    const appended: MultiAppendResult = await this.call(
      () => (request.kind === 'streams' ? this.client.multiStreamAppend(request.streams) : this.client.appendRecords(request.records, request.checks)),
      { writes, isAppend: true },
    );

    const written = writes.filter((w) => w.events.length > 0);
    const versions: Record<string, number> = {};
    const revisions = new Map(appended.responses.map((r) => [r.streamName, r.revision]));
    for (const write of written) {
      const revision = revisions.get(this.names.streamName(write.streamId));
      if (revision === undefined) throw new Error(`KurrentDB answered the append without a revision for ${write.streamId}`);
      versions[write.streamId] = versionOfRevision(revision);
    }
    // The answer's position is the append's, not its last event's; that event, read back by its revision, has it.
    const last = written.at(-1)!;
    const [lastEvent] = await this.readRecords(this.names.streamName(last.streamId), revisions.get(this.names.streamName(last.streamId))!, 'backwards', 1);
    if (!lastEvent?.position) throw new Error(`the append's last event is not readable in ${last.streamId}`);
    this.remember(lastEvent.position);
    this.signal.notify();
    return { position: positionOf(lastEvent.position), versions };
  }

  /** The events of a KurrentDB stream from a revision, in a direction; none when the stream does not exist. */
  private readRecords(streamName: string, fromRevision: ReadRevision, direction: 'forwards' | 'backwards', maxCount?: number): Promise<KurrentRecord[]> {
    return this.call(async () => {
      const records: KurrentRecord[] = [];
      try {
        for await (const resolved of this.client.readStream(streamName, { fromRevision, direction, requiresLeader: true, ...(maxCount ? { maxCount } : {}) })) {
          if (resolved.event) records.push(resolved.event);
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return [];
        throw error;
      }
      return records;
    });
  }

  private async readFromVersion(streamId: string, version: number, limit?: number): Promise<StreamRead> {
    // Our version v is the stream's first v events, so the next one is revision v.
    const records = await this.readRecords(this.names.streamName(streamId), version === 0 ? 'start' : BigInt(version), 'forwards', limit);
    const events = records.map((record) => this.toEvent(record));
    return { version: events.at(-1)?.streamVersion ?? version, events };
  }

  private toEvent(record: KurrentRecord): RecordedEvent {
    const event = toRecordedEvent(this.names, record);
    if (!event) throw new Error(`read ${record.streamId} as a stream of this log`);
    this.remember(record.position!);
    return event;
  }

  async readStream(streamId: string, options: StreamReadOptions = {}): Promise<StreamRead> {
    // A limit of 0 is no events (the client takes a missing count as all of them).
    if (options.limit !== undefined && options.limit < 1) return { version: 0, events: [] };
    const read = await this.readFromVersion(streamId, 0, options.limit === undefined ? undefined : Math.floor(options.limit));
    return read.events.length === 0 ? { version: 0, events: [] } : read;
  }

  async readStreams(streamIds: readonly string[]): Promise<ReadonlyMap<string, StreamRead>> {
    const reads = await Promise.all(streamIds.map((id) => this.readStream(id)));
    return new Map(streamIds.map((id, index) => [id, reads[index]!]));
  }

  async readStreamsFromSnapshots(
    requests: ReadonlyArray<SnapshotReadRequest>,
  ): Promise<ReadonlyMap<string, SnapshotRead>> {
    const kept = await this.snapshots.latest(requests);
    const reads = await Promise.all(
      requests.map(async ({ streamId, limit }): Promise<SnapshotRead> => {
        const snapshot = kept.get(streamId) ?? null;
        return { snapshot, read: await this.readFromVersion(streamId, snapshot?.version ?? 0, limit) };
      }),
    );
    return new Map(requests.map(({ streamId }, index) => [streamId, reads[index]!]));
  }

  saveSnapshot(streamId: string, model: string, version: number, state: unknown): Promise<void> {
    return this.snapshots.save(streamId, model, version, state);
  }

  async readAll(options: ReadAllOptions): Promise<readonly RecordedEvent[]> {
    const types = options.types && new Set(options.types);
    if (types?.size === 0 || options.limit <= 0) return [];
    const until = options.until ?? Number.MAX_SAFE_INTEGER;
    // KurrentDB sends whole events: `fields` is a narrowing a store may skip (see EventFields).
    return this.call(async () => {
      const events: RecordedEvent[] = [];
      const fromPosition = readFrom(options.after, this.knownCommits.get(options.after));
      for await (const resolved of this.client.readAll({ fromPosition, filter: this.logFilter, requiresLeader: true })) {
        const record = resolved.event as KurrentRecord | undefined;
        if (!record?.position) continue;
        const place = placeInRange(record.position, { after: options.after, until });
        if (place === 'before') continue;
        if (place === 'past') break;
        const event = toRecordedEvent(this.names, record);
        if (!event) continue;
        this.remember(record.position);
        if (types && !types.has(event.type)) continue;
        events.push(event);
        if (events.length >= options.limit) break;
      }
      return events;
    });
  }

  async headPosition(): Promise<number> {
    return this.call(async () => {
      for await (const resolved of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1, filter: this.logFilter, requiresLeader: true })) {
        if (resolved.event?.position) return positionOf(resolved.event.position);
      }
      return 0;
    });
  }

  /**
   * Positions here are bytes, not counts: the events are read to be counted, and no further than `atMost`
   * (a lag of millions is not read on every look at it). Nothing of them is decoded.
   */
  async countEvents(range: EventRange): Promise<number> {
    if (range.until <= range.after || range.atMost <= 0) return 0;
    return this.call(async () => {
      let count = 0;
      const fromPosition = readFrom(range.after, this.knownCommits.get(range.after));
      for await (const resolved of this.client.readAll({ fromPosition, filter: this.logFilter, requiresLeader: true })) {
        const record = resolved.event as KurrentRecord | undefined;
        if (!record?.position || this.names.streamIdOf(record.streamId) === null) continue;
        const place = placeInRange(record.position, range);
        if (place === 'before') continue;
        if (place === 'past') break;
        count += 1;
        if (count >= range.atMost) break;
      }
      return count;
    });
  }

  logId(): Promise<string> {
    this.identity ??= (async () => {
      const stream = this.names.identityStream;
      for (let attempt = 1; attempt <= TRIES; attempt += 1) {
        const [first] = await this.readRecords(stream, 'start', 'forwards', 1);
        if (first) return (first.data as { id: string }).id;
        try {
          await this.client.multiStreamAppend([
            { streamName: stream, expectedState: 'no_stream', events: [{ id: randomUUID(), contentType: 'application/json', type: 'portcullis.log_created', data: { id: randomUUID() }, metadata: {} }] },
          ]);
        } catch (error) {
          // Another process named the log first: its id is the log's.
          if (classifyFailure(this.names, error).kind !== 'conflict') throw error;
        }
      }
      throw new Error('the KurrentDB log identity could not be read or written');
    })();
    this.identity.catch(() => (this.identity = null));
    return this.identity;
  }

  async eventIdAt(position: number): Promise<string | null> {
    if (position <= 0) return null;
    const [event] = await this.readAll({ after: position - 1, limit: 1 });
    return event?.position === position ? event.eventId : null;
  }

  /**
   * No read of a set of positions in `$all`: one read of one event per position, a few at a time (an audit
   * page is tens of them), each from the commit of its append when this process has seen it.
   */
  async eventsAt(positions: readonly number[]): Promise<readonly RecordedEvent[]> {
    const wanted = positionsToRead(positions);
    const found: RecordedEvent[] = [];
    for (let start = 0; start < wanted.length; start += EVENTS_AT_IN_FLIGHT) {
      const reads = await Promise.all(
        wanted.slice(start, start + EVENTS_AT_IN_FLIGHT).map(async (position) => {
          const [event] = await this.readAll(onePositionRead(position));
          return event?.position === position ? event : null;
        }),
      );
      for (const event of reads) if (event) found.push(event);
    }
    return found;
  }

  /** KurrentDB keeps no index by event id: `$all` read backwards, newest first, until the id comes. */
  async eventById(eventId: string): Promise<RecordedEvent | null> {
    const wanted = eventIdKey(eventId);
    if (wanted === null) return null;
    return this.call(async () => {
      for await (const resolved of this.client.readAll({ fromPosition: END, direction: BACKWARDS, filter: this.logFilter, requiresLeader: true })) {
        const record = resolved.event as KurrentRecord | undefined;
        if (!record || eventIdKey(record.id) !== wanted) continue;
        return toRecordedEvent(this.names, record);
      }
      return null;
    });
  }

  appendGeneration(): number {
    return this.signal.current;
  }

  /** Events heard through the live subscription; KurrentDB carries no count of what a writer had under way. */
  appendNotices(): AppendNotices {
    return this.notices;
  }

  waitForAppend(generation: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.signal.wait(generation, timeoutMs, signal);
  }

  subscribe(options: SubscribeOptions): Subscription {
    return followBySignal(this.signal, (read) => this.readAll(read), options);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.live?.unsubscribe().catch(() => {});
    await this.client.dispose();
    await this.snapshots.close();
  }
}
