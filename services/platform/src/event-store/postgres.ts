import { randomUUID } from 'node:crypto';
import { eventMetadataSchema } from '@portcullis/contracts';
import { NotificationListener } from '../database/notification-listener.ts';
import { sql, type DatabasePool } from '../database/pool.ts';
import { AppendSignal } from './append-signal.ts';
import {
  WrongExpectedVersionError,
  type AppendResult,
  type EventStore,
  type RecordedEvent,
  type StreamRead,
  type StreamWrite,
  type SubscribeOptions,
  type Subscription,
} from './event-store.ts';

export const EVENT_LOG_CHANNEL = 'portcullis_event_log';

/** The stream and its actual version, when `portcullis_append` refused an expected version (SQLSTATE PC409). */
function wrongVersionOf(error: unknown): { streamId: string; actual: number } | null {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const { code, detail } = cause as { code?: unknown; detail?: unknown };
    if (code === 'PC409' && typeof detail === 'string') {
      const parsed = JSON.parse(detail) as { streamId: string; actual: number };
      return { streamId: parsed.streamId, actual: Number(parsed.actual) };
    }
  }
  return null;
}

interface EventRow {
  position: bigint | number;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: unknown;
  metadata: unknown;
  recorded_at: number;
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    position: Number(row.position),
    eventId: row.event_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    data: row.data,
    metadata: eventMetadataSchema.parse(row.metadata),
    recordedAt: new Date(row.recorded_at),
  };
}

const eventColumns = sql.fragment`position, event_id, stream_id, stream_version, type, data, metadata, recorded_at`;

export interface PostgresEventStoreOptions {
  readonly pool: DatabasePool;
  /**
   * Where followers hear of appends: the process's listener, started and closed by its owner. Without it
   * (a process that only appends, like the api) followers fall back to polling.
   */
  readonly notifications?: NotificationListener;
  readonly log?: (message: string, error?: unknown) => void;
}

/**
 * Event store on a Postgres table. Appends take the row lock on `event_log_head` to draw positions and hold
 * it until commit, so positions are visible strictly in order: no follower can read position n+1 while n is
 * still in flight. That serialises appends (one short transaction at a time), the price of a log whose
 * position order is its commit order, as a single-writer log like EventStoreDB's also has.
 */
export class PostgresEventStore implements EventStore {
  private readonly pool: DatabasePool;
  private readonly signal = new AppendSignal();

  constructor(options: PostgresEventStoreOptions) {
    this.pool = options.pool;
    const log = options.log ?? (() => {});
    void options.notifications?.listen(EVENT_LOG_CHANNEL, {
      onNotification: () => this.signal.notify(),
      onLost: (error) => {
        log('event log listener lost; polling until it reconnects', error);
        // Wake followers so they re-read rather than sleep through what was missed.
        this.signal.notify();
      },
    });
  }

  async append(writes: readonly StreamWrite[]): Promise<AppendResult> {
    const rows = writes.flatMap((w) => w.events.map((e) => ({ streamId: w.streamId, event: e })));
    if (rows.length === 0) throw new Error('append needs at least one event');
    const streamIds = [...new Set(writes.map((w) => w.streamId))];
    if (streamIds.length !== writes.length) throw new Error('append takes each stream once');

    const events = rows.map(({ streamId, event }) => ({
      event_id: event.eventId ?? randomUUID(),
      stream_id: streamId,
      type: event.type,
      data: event.data,
      metadata: event.metadata,
    }));
    const expected = writes.map((w) => ({ stream_id: w.streamId, expected: w.expectedVersion }));
    let result: AppendResult;
    try {
      // One statement, one round trip: positions, version checks, insert and notice (see the migration).
      const appended = (await this.pool.oneFirst(sql.unsafe`
        SELECT portcullis_append(${JSON.stringify(expected)}::jsonb, ${JSON.stringify(events)}::jsonb)`)) as {
        position: number;
        versions: Record<string, number>;
      };
      result = { position: Number(appended.position), versions: appended.versions };
    } catch (error) {
      const conflict = wrongVersionOf(error);
      if (!conflict) throw error;
      const write = writes.find((w) => w.streamId === conflict.streamId);
      throw new WrongExpectedVersionError(conflict.streamId, write?.expectedVersion ?? 'any', conflict.actual);
    }
    // Followers in this process need not wait for the notification's round trip (or for a listener at all).
    this.signal.notify();
    return result;
  }

  async readStream(streamId: string): Promise<StreamRead> {
    const rows = (await this.pool.any(sql.unsafe`
      SELECT ${eventColumns} FROM events WHERE stream_id = ${streamId} ORDER BY stream_version`)) as readonly EventRow[];
    const events = rows.map(toRecordedEvent);
    return { version: events.at(-1)?.streamVersion ?? 0, events };
  }

  async readStreams(streamIds: readonly string[]): Promise<ReadonlyMap<string, StreamRead>> {
    const rows = (await this.pool.any(sql.unsafe`
      SELECT ${eventColumns} FROM events WHERE stream_id = ANY(${sql.array([...streamIds], 'text')})
      ORDER BY stream_id, stream_version`)) as readonly EventRow[];
    const reads = new Map<string, StreamRead>(streamIds.map((id) => [id, { version: 0, events: [] }]));
    for (const row of rows) {
      const event = toRecordedEvent(row);
      const read = reads.get(event.streamId)!;
      reads.set(event.streamId, { version: event.streamVersion, events: [...read.events, event] });
    }
    return reads;
  }

  async readAll(options: { after: number; limit: number }): Promise<readonly RecordedEvent[]> {
    const rows = (await this.pool.any(sql.unsafe`
      SELECT ${eventColumns} FROM events WHERE position > ${options.after}
      ORDER BY position LIMIT ${options.limit}`)) as readonly EventRow[];
    return rows.map(toRecordedEvent);
  }

  async headPosition(): Promise<number> {
    return Number(await this.pool.oneFirst(sql.unsafe`SELECT position FROM event_log_head`));
  }

  appendGeneration(): number {
    return this.signal.current;
  }

  waitForAppend(generation: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.signal.wait(generation, timeoutMs, signal);
  }

  subscribe(options: SubscribeOptions): Subscription {
    const controller = new AbortController();
    const batchSize = options.batchSize ?? 500;
    const run = async (): Promise<void> => {
      let after = options.after;
      while (!controller.signal.aborted) {
        const generation = this.signal.current;
        const events = await this.readAll({ after, limit: batchSize });
        if (events.length > 0) {
          await options.onEvents(events);
          after = events[events.length - 1]!.position;
          continue;
        }
        await this.signal.wait(generation, 1000, controller.signal);
      }
    };
    const done = run();
    return {
      done,
      stop: async () => {
        controller.abort();
        await done.catch(() => {});
      },
    };
  }

  /** Nothing of its own to release: the pool and the listener belong to whoever passed them in. */
  async close(): Promise<void> {}
}
