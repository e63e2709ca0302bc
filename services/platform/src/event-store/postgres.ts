import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { NotificationListener } from '../database/notification-listener.ts';
import { NoticedTail } from './append-notices.ts';
import { AppendSignal, followBySignal } from './append-signal.ts';
import { toRecordedEvent, type EventRow } from './postgres-rows.ts';
import {
  WrongExpectedVersionError,
  type AppendNotices,
  type AppendOptions,
  type AppendResult,
  type EventFields,
  type EventRange,
  type EventStore,
  type ReadAllOptions,
  type RecordedEvent,
  type SnapshotRead,
  type SnapshotReadRequest,
  type StreamRead,
  type StreamReadOptions,
  type StreamWrite,
  type SubscribeOptions,
  type Subscription,
} from './event-store.ts';

const EVENT_LOG_CHANNEL = 'portcullis_event_log';

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

/** What `event_id` holds: anything else names no event (and would fail the cast to uuid). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const EVENT_COLUMNS = 'position, event_id, stream_id, stream_version, type, data, metadata, recorded_at';

interface Statement {
  readonly name: string;
  readonly text: string;
}

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The columns a narrowed part is read as (see `EventFields`): each field a column of its own (`d0`, `d1`, …
 * for data, `m0`, … for metadata), which Postgres extracts at a fraction of the cost of building an object
 * of them; or the whole jsonb column.
 */
function partColumns(column: 'data' | 'metadata', fields: readonly string[] | undefined): string {
  if (!fields) return column;
  const bad = fields.find((field) => !FIELD_NAME.test(field));
  // Names are written into the statement: only plain identifiers, which need no quoting, get there.
  if (bad !== undefined) throw new Error(`not a field name: ${JSON.stringify(bad)}`);
  return fields.map((field, index) => `${column}->'${field}' AS ${column[0]}${index}`).join(', ');
}

/** A narrowed part as an object of the fields it was read with, a lacking or null one left out. */
function partOf(row: Record<string, unknown>, columns: ReadonlyArray<readonly [string, string]>): Record<string, unknown> {
  const part: Record<string, unknown> = {};
  for (const [column, field] of columns) {
    const value = row[column];
    if (value !== null && value !== undefined) part[field] = value;
  }
  return part;
}

/** Each field of a narrowed part with the column it is read as (see `partColumns`). */
function columnsOf(prefix: 'd' | 'm', fields: readonly string[]): ReadonlyArray<readonly [string, string]> {
  return fields.map((field, index) => [`${prefix}${index}`, field] as const);
}

interface ReadAllStatements {
  readonly all: Statement;
  readonly ofTypes: Statement;
  readonly toEvent: (row: EventRow) => RecordedEvent;
}

/** The statements reading the whole log, or the types asked for, with each event narrowed to `fields`. */
function readAllStatements(fields: EventFields | undefined): ReadAllStatements {
  const data = fields?.data;
  const metadata = fields?.metadata ? [...new Set(['occurredAt', ...fields.metadata])] : undefined;
  // A part narrowed to no field at all (a reader that needs none of its data) is not read.
  const columns = fields
    ? ['position, event_id, stream_id, stream_version, type', partColumns('data', data), partColumns('metadata', metadata), 'recorded_at'].filter((c) => c !== '').join(', ')
    : EVENT_COLUMNS;
  const dataColumns = data && columnsOf('d', data);
  const metadataColumns = metadata && columnsOf('m', metadata);
  // Prepared per connection under a name of their own: one per narrowing a process asks for (a replay's).
  const suffix = fields ? `_${createHash('sha256').update(columns).digest('hex').slice(0, 16)}` : '';
  return {
    all: { name: `portcullis_read_all${suffix}`, text: `SELECT ${columns} FROM events WHERE position > $1 ORDER BY position LIMIT $2` },
    ofTypes: {
      name: `portcullis_read_all_of_types${suffix}`,
      text: `SELECT ${columns} FROM events
             WHERE position > $1 AND position <= $3 AND ($4::text[] IS NULL OR type = ANY($4::text[])) ORDER BY position LIMIT $2`,
    },
    // Whole events (every follower's read) go straight through: no copy of each row.
    toEvent: fields
      ? (row) => {
          const raw = row as unknown as Record<string, unknown>;
          return toRecordedEvent(row, dataColumns ? partOf(raw, dataColumns) : row.data, metadataColumns ? partOf(raw, metadataColumns) : row.metadata);
        }
      : (row) => toRecordedEvent(row),
  };
}

/**
 * The adapter's statements, each prepared once per connection under its name: every append and read is one
 * of these, so Postgres parses and plans each once instead of on every call.
 */
const STATEMENTS = {
  append: { name: 'portcullis_append', text: 'SELECT portcullis_append($1::jsonb, $2::jsonb, $3::integer) AS appended' },
  readStream: {
    name: 'portcullis_read_stream',
    text: `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY stream_version`,
  },
  readStreamOpening: {
    name: 'portcullis_read_stream_opening',
    text: `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY stream_version LIMIT $2`,
  },
  readStreams: {
    name: 'portcullis_read_streams',
    text: `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ANY($1::text[]) ORDER BY stream_id, stream_version`,
  },
  headPosition: { name: 'portcullis_head_position', text: 'SELECT position FROM event_log_head' },
  // Each stream's snapshot of the kind asked for (kind 's'), then its events after that snapshot (kind 'e'):
  // the snapshot travels once, however many events follow it. A limit is an upper bound on the version, so
  // the index reads only the chunk asked for (bigint: a snapshot's version plus "no limit" passes int4's).
  readFromSnapshots: {
    name: 'portcullis_read_from_snapshots',
    text: `WITH wanted AS (
             SELECT r.stream_id, r.model, s.version AS snapshot_version, s.state,
                    coalesce(s.version, 0)::bigint + coalesce(r.lim, 2147483647) AS last_version
             FROM unnest($1::text[], $2::text[], $3::integer[]) AS r(stream_id, model, lim)
             LEFT JOIN snapshots s ON s.stream_id = r.stream_id AND s.model = r.model)
           SELECT 's' AS kind, w.stream_id, w.snapshot_version AS stream_version, w.state AS data,
                  NULL::bigint AS position, NULL::uuid AS event_id, NULL::text AS type, NULL::jsonb AS metadata, NULL::timestamptz AS recorded_at
           FROM wanted w WHERE w.snapshot_version IS NOT NULL
           UNION ALL
           SELECT 'e', e.stream_id, e.stream_version, e.data, e.position, e.event_id, e.type, e.metadata, e.recorded_at
           FROM wanted w JOIN events e
             ON e.stream_id = w.stream_id AND e.stream_version > coalesce(w.snapshot_version, 0) AND e.stream_version <= w.last_version
           ORDER BY stream_id, stream_version`,
  },
  saveSnapshot: {
    name: 'portcullis_save_snapshot',
    text: `INSERT INTO snapshots (stream_id, model, version, state) VALUES ($1, $2, $3, $4::jsonb)
           ON CONFLICT (stream_id, model) DO UPDATE SET version = excluded.version, state = excluded.state, taken_at = now()
           WHERE snapshots.version <= excluded.version`,
  },
  eventIdAt: { name: 'portcullis_event_id_at', text: 'SELECT event_id FROM events WHERE position = $1' },
  eventsAt: { name: 'portcullis_events_at', text: `SELECT ${EVENT_COLUMNS} FROM events WHERE position = ANY($1::int8[]) ORDER BY position` },
  eventById: { name: 'portcullis_event_by_id', text: `SELECT ${EVENT_COLUMNS} FROM events WHERE event_id = $1::uuid` },
} as const;

export interface PostgresEventStoreOptions {
  readonly databaseUrl: string;
  /** Connections the store may hold at once; its statements are short, so a few serve many callers. */
  readonly maximumPoolSize?: number;
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
 *
 * The store holds a pool of its own, on `pg` without slonik: its few statements are fixed text, prepared
 * once per connection, and slonik's composition and result handling cost more CPU per call than pg's own
 * round trip (the bench README has the figures). Being its own, the pool also never inherits a setting
 * meant for read models, such as the projector's asynchronous commit: the log's commits stay durable.
 */
export class PostgresEventStore implements EventStore {
  private readonly pool: pg.Pool;
  private readonly signal = new AppendSignal();
  /** The latest appends as their notices carried them: what a caught-up follower reads next. */
  private readonly tail = new NoticedTail();
  private notices: AppendNotices = { heard: 0, othersUnderWay: 0 };
  /** The read statements by the narrowing they were made for ('' for whole events). */
  private readonly readAllStatements = new Map<string, ReadAllStatements>();

  constructor(options: PostgresEventStoreOptions) {
    const log = options.log ?? (() => {});
    this.pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.maximumPoolSize ?? 10,
      connectionTimeoutMillis: 10_000,
      // As the slonik pools: a stuck statement is a bug to surface, not to wait out.
      statement_timeout: 30_000,
      idle_in_transaction_session_timeout: 30_000,
    });
    // An idle connection that dies (a restarted Postgres) is dropped by the pool; the next call opens another.
    this.pool.on('error', (error) => log('event store connection lost', error));
    void options.notifications?.listen(EVENT_LOG_CHANNEL, {
      onNotification: (payload) => {
        this.notices = { heard: this.notices.heard + 1, othersUnderWay: this.tail.heard(payload) };
        this.signal.notify();
      },
      onLost: (error) => {
        log('event log listener lost; polling until it reconnects', error);
        // What was missed is not in the tail: it must not be vouched for as complete.
        this.tail.clear();
        this.notices = { heard: this.notices.heard, othersUnderWay: 0 };
        // Wake followers so they re-read rather than sleep through what was missed.
        this.signal.notify();
      },
    });
  }

  private async rows<Row extends pg.QueryResultRow>(statement: Statement, values: unknown[]): Promise<Row[]> {
    return (await this.pool.query<Row>({ ...statement, values })).rows;
  }

  async append(writes: readonly StreamWrite[], options: AppendOptions = {}): Promise<AppendResult> {
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
      const [row] = await this.rows<{ appended: { position: number; versions: Record<string, number> } }>(STATEMENTS.append, [
        JSON.stringify(expected),
        JSON.stringify(events),
        // An integer parameter; below 0 the function itself counts it as none.
        Math.floor(options.othersUnderWay ?? 0),
      ]);
      const { appended } = row!;
      result = { position: Number(appended.position), versions: appended.versions };
    } catch (error) {
      const conflict = wrongVersionOf(error);
      if (!conflict) throw error;
      const write = writes.find((w) => w.streamId === conflict.streamId);
      throw new WrongExpectedVersionError(conflict.streamId, write?.expectedVersion ?? 'any', conflict.actual);
    }
    this.tail.appended(result.position);
    // Followers in this process need not wait for the notification's round trip (or for a listener at all).
    this.signal.notify();
    return result;
  }

  async readStream(streamId: string, options: StreamReadOptions = {}): Promise<StreamRead> {
    // A statement of its own for a limited read, so the whole read's plan is never made for a limit.
    const rows = options.limit === undefined
      ? await this.rows<EventRow>(STATEMENTS.readStream, [streamId])
      : await this.rows<EventRow>(STATEMENTS.readStreamOpening, [streamId, Math.max(0, Math.floor(options.limit))]);
    const events = rows.map((row) => toRecordedEvent(row));
    return { version: events.at(-1)?.streamVersion ?? 0, events };
  }

  async readStreams(streamIds: readonly string[]): Promise<ReadonlyMap<string, StreamRead>> {
    const rows = await this.rows<EventRow>(STATEMENTS.readStreams, [streamIds]);
    const reads = new Map<string, StreamRead>(streamIds.map((id) => [id, { version: 0, events: [] }]));
    for (const row of rows) {
      const event = toRecordedEvent(row);
      const read = reads.get(event.streamId)!;
      reads.set(event.streamId, { version: event.streamVersion, events: [...read.events, event] });
    }
    return reads;
  }

  async readStreamsFromSnapshots(
    requests: ReadonlyArray<SnapshotReadRequest>,
  ): Promise<ReadonlyMap<string, SnapshotRead>> {
    const rows = await this.rows<EventRow & { kind: 's' | 'e' }>(STATEMENTS.readFromSnapshots, [
      requests.map((r) => r.streamId),
      requests.map((r) => r.model),
      requests.map((r) => r.limit ?? null),
    ]);
    const snapshots = new Map<string, { version: number; state: unknown }>();
    const events = new Map<string, RecordedEvent[]>();
    for (const row of rows) {
      if (row.kind === 's') snapshots.set(row.stream_id, { version: row.stream_version, state: row.data });
      else {
        let list = events.get(row.stream_id);
        if (!list) events.set(row.stream_id, (list = []));
        list.push(toRecordedEvent(row));
      }
    }
    return new Map(
      requests.map(({ streamId }) => {
        const snapshot = snapshots.get(streamId) ?? null;
        const tail = events.get(streamId) ?? [];
        return [streamId, { snapshot, read: { version: tail.at(-1)?.streamVersion ?? snapshot?.version ?? 0, events: tail } }];
      }),
    );
  }

  async saveSnapshot(streamId: string, model: string, version: number, state: unknown): Promise<void> {
    await this.rows(STATEMENTS.saveSnapshot, [streamId, model, version, JSON.stringify(state)]);
  }

  async readAll(options: ReadAllOptions): Promise<readonly RecordedEvent[]> {
    const { fields } = options;
    const selective = options.types !== undefined || options.until !== undefined;
    // A follower reading everything: what the notices brought may be all it needs (a replay reads the table).
    const noticed = selective || fields ? null : this.tail.after(options.after, options.limit);
    if (noticed) return noticed;
    const key = fields ? JSON.stringify([fields.data ?? null, fields.metadata ?? null]) : '';
    let statements = this.readAllStatements.get(key);
    if (!statements) this.readAllStatements.set(key, (statements = readAllStatements(fields)));
    const rows = selective
      ? await this.rows<EventRow>(statements.ofTypes, [options.after, options.limit, options.until ?? Number.MAX_SAFE_INTEGER, options.types ?? null])
      : await this.rows<EventRow>(statements.all, [options.after, options.limit]);
    return rows.map(statements.toEvent);
  }

  async headPosition(): Promise<number> {
    const [row] = await this.rows<{ position: string }>(STATEMENTS.headPosition, []);
    return Number(row!.position);
  }

  /** Positions here run 1, 2, 3 with no hole (drawn under the head's lock, rolled back with their append): no read. */
  countEvents(range: EventRange): Promise<number> {
    return Promise.resolve(Math.max(0, range.until - range.after));
  }

  private logIdentity: Promise<string> | null = null;

  logId(): Promise<string> {
    this.logIdentity ??= this.pool.query<{ id: string }>('SELECT id FROM event_log_identity').then((result) => {
      const id = result.rows[0]?.id;
      if (!id) throw new Error('the event log has no identity row (migrations not run?)');
      return id;
    });
    this.logIdentity.catch(() => (this.logIdentity = null));
    return this.logIdentity;
  }

  async eventIdAt(position: number): Promise<string | null> {
    const [row] = await this.rows<{ event_id: string }>(STATEMENTS.eventIdAt, [position]);
    return row?.event_id ?? null;
  }

  async eventsAt(positions: readonly number[]): Promise<readonly RecordedEvent[]> {
    if (positions.length === 0) return [];
    const rows = await this.rows<EventRow>(STATEMENTS.eventsAt, [positions.map(String)]);
    return rows.map((row) => toRecordedEvent(row));
  }

  async eventById(eventId: string): Promise<RecordedEvent | null> {
    if (!UUID.test(eventId)) return null;
    const [row] = await this.rows<EventRow>(STATEMENTS.eventById, [eventId]);
    return row ? toRecordedEvent(row) : null;
  }

  appendGeneration(): number {
    return this.signal.current;
  }

  appendNotices(): AppendNotices {
    return this.notices;
  }

  waitForAppend(generation: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.signal.wait(generation, timeoutMs, signal);
  }

  subscribe(options: SubscribeOptions): Subscription {
    return followBySignal(this.signal, (read) => this.readAll(read), options);
  }

  /** Ends the store's own pool; the listener belongs to whoever passed it in. */
  async close(): Promise<void> {
    await this.pool.end();
  }
}
