import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { eventMetadataSchema } from '@portcullis/contracts';
import { sql, type DatabasePool } from '../database/pool.ts';
import { AppendSignal } from './append-signal.ts';
import {
  matchesExpectedVersion,
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
  /** Used for a dedicated LISTEN connection; without it followers fall back to polling. */
  readonly databaseUrl?: string;
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
  private listener: pg.Client | null = null;
  private listenerWanted: boolean;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly databaseUrl: string | undefined;
  private readonly log: (message: string, error?: unknown) => void;

  constructor(options: PostgresEventStoreOptions) {
    this.pool = options.pool;
    this.databaseUrl = options.databaseUrl;
    this.listenerWanted = options.databaseUrl !== undefined;
    this.log = options.log ?? (() => {});
    if (this.listenerWanted) void this.connectListener();
  }

  async append(writes: readonly StreamWrite[]): Promise<AppendResult> {
    const rows = writes.flatMap((w) => w.events.map((e) => ({ streamId: w.streamId, event: e })));
    if (rows.length === 0) throw new Error('append needs at least one event');
    const streamIds = [...new Set(writes.map((w) => w.streamId))];
    if (streamIds.length !== writes.length) throw new Error('append takes each stream once');

    const result = await this.pool.transaction(async (tx) => {
      // Drawing positions first takes the log's lock; the version checks below then run serialised.
      const head = Number(
        await tx.oneFirst(
          sql.unsafe`UPDATE event_log_head SET position = position + ${rows.length} RETURNING position`,
        ),
      );
      const firstPosition = head - rows.length + 1;

      const current = await tx.any(sql.unsafe`
        SELECT stream_id, max(stream_version) AS version FROM events
        WHERE stream_id = ANY(${sql.array(streamIds, 'text')}) GROUP BY stream_id`);
      const versions: Record<string, number> = Object.fromEntries(streamIds.map((id) => [id, 0]));
      for (const row of current as readonly { stream_id: string; version: number }[]) {
        versions[row.stream_id] = Number(row.version);
      }
      for (const write of writes) {
        const actual = versions[write.streamId] ?? 0;
        if (!matchesExpectedVersion(write.expectedVersion, actual)) {
          throw new WrongExpectedVersionError(write.streamId, write.expectedVersion, actual);
        }
      }

      const records = rows.map(({ streamId, event }, index) => {
        versions[streamId] = (versions[streamId] ?? 0) + 1;
        return {
          position: firstPosition + index,
          event_id: event.eventId ?? randomUUID(),
          stream_id: streamId,
          stream_version: versions[streamId],
          type: event.type,
          data: event.data,
          metadata: event.metadata,
        };
      });
      await tx.query(sql.unsafe`
        INSERT INTO events (position, event_id, stream_id, stream_version, type, data, metadata)
        SELECT position, event_id, stream_id, stream_version, type, data, metadata
        FROM jsonb_to_recordset(${JSON.stringify(records)}::jsonb) AS r(
          position bigint, event_id uuid, stream_id text, stream_version integer,
          type text, data jsonb, metadata jsonb)`);
      // Delivered at commit only, so a follower woken by it will find the events.
      await tx.query(sql.unsafe`SELECT pg_notify(${EVENT_LOG_CHANNEL}, ${String(head)})`);
      return { position: head, versions };
    });
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

  async close(): Promise<void> {
    this.listenerWanted = false;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => {});
  }

  private async connectListener(): Promise<void> {
    if (!this.listenerWanted || !this.databaseUrl) return;
    const client = new pg.Client({ connectionString: this.databaseUrl });
    const retry = (error: unknown): void => {
      client.removeAllListeners();
      void client.end().catch(() => {});
      if (this.listener === client) this.listener = null;
      if (!this.listenerWanted) return;
      this.log('event log listener lost; polling until it reconnects', error);
      // Wake followers so they re-read rather than sleep through what was missed.
      this.signal.notify();
      this.reconnectTimer = setTimeout(() => void this.connectListener(), 1000);
    };
    client.on('error', retry);
    client.on('notification', () => this.signal.notify());
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENT_LOG_CHANNEL}`);
      if (!this.listenerWanted) {
        await client.end();
        return;
      }
      this.listener = client;
      client.on('end', () => {
        if (this.listener === client) retry(new Error('connection ended'));
      });
    } catch (error) {
      retry(error);
    }
  }
}
