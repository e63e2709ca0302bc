import pg from 'pg';

export interface KeptSnapshot {
  readonly version: number;
  readonly state: unknown;
}

/**
 * The `snapshots` table on its own, for a log kept elsewhere (KurrentDB): a snapshot is a cache of the log,
 * not part of it, and in Postgres the eraser's sweep of snapshots naming a deleted user reaches it as it
 * reaches the Postgres log's (see docs/erasure.md). Stream ids are the stored ones, as the log's.
 */
export class SnapshotTable {
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string, maximumPoolSize = 2) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: maximumPoolSize, connectionTimeoutMillis: 10_000, statement_timeout: 30_000 });
    // An idle connection that dies is dropped by the pool; the next call opens another.
    this.pool.on('error', () => {});
  }

  /** Each stream's kept snapshot of the kind asked, by stream id; a stream with none is absent. */
  async latest(requests: ReadonlyArray<{ readonly streamId: string; readonly model: string }>): Promise<ReadonlyMap<string, KeptSnapshot>> {
    if (requests.length === 0) return new Map();
    const { rows } = await this.pool.query<{ stream_id: string; version: number; state: unknown }>({
      name: 'portcullis_kept_snapshots',
      text: `SELECT s.stream_id, s.version, s.state FROM unnest($1::text[], $2::text[]) AS r(stream_id, model)
             JOIN snapshots s ON s.stream_id = r.stream_id AND s.model = r.model`,
      values: [requests.map((r) => r.streamId), requests.map((r) => r.model)],
    });
    return new Map(rows.map((row) => [row.stream_id, { version: row.version, state: row.state }]));
  }

  /** Keeps the state at `version`, unless a newer one is kept already. */
  async save(streamId: string, model: string, version: number, state: unknown): Promise<void> {
    await this.pool.query({
      name: 'portcullis_keep_snapshot',
      text: `INSERT INTO snapshots (stream_id, model, version, state) VALUES ($1, $2, $3, $4::jsonb)
             ON CONFLICT (stream_id, model) DO UPDATE SET version = excluded.version, state = excluded.state, taken_at = now()
             WHERE snapshots.version < excluded.version`,
      values: [streamId, model, version, JSON.stringify(state)],
    });
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
