import { sql, type DatabasePool } from '../database/pool.ts';
import {
  CheckpointFencedError,
  type PostgresProjection,
  type ProjectedEvent,
  type ProjectionSql,
  type ProjectionTarget,
} from './projection.ts';

export const CHECKPOINT_CHANNEL = 'portcullis_checkpoints';

/** Announces a projection's progress to api processes waiting to read their own writes. */
export function checkpointNotice(name: string, position: number): string {
  return `${name}:${position}`;
}

export class PostgresProjectionTarget implements ProjectionTarget {
  readonly name: string;
  readonly handles: ReadonlySet<string> | undefined;

  constructor(
    private readonly pool: DatabasePool,
    private readonly projection: PostgresProjection,
  ) {
    this.name = projection.name;
    this.handles = projection.handles;
  }

  async readCheckpoint(): Promise<number> {
    await this.pool.query(sql.unsafe`
      INSERT INTO projection_checkpoints (name, position) VALUES (${this.name}, 0) ON CONFLICT (name) DO NOTHING`);
    return Number(
      await this.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${this.name}`),
    );
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number): Promise<void> {
    await this.pool.connect(async (connection) => {
      let open = false;
      // The transaction starts with the first statement a handler runs. The fence is the checkpoint's
      // compare-and-set at the end, in the same transaction: a holder that died with a COMMIT in flight, or a
      // rebuild, has moved the checkpoint, so the CAS finds nothing and every row written here rolls back with
      // it (or a row collides with what that holder wrote first, and the batch fails the same way).
      const begin = async (): Promise<void> => {
        if (open) return;
        await connection.query(sql.unsafe`BEGIN`);
        open = true;
      };
      const inTransaction: ProjectionSql = {
        query: async (query) => {
          await begin();
          return connection.query(query);
        },
        maybeOneFirst: async (query) => {
          await begin();
          return connection.maybeOneFirst(query);
        },
      } as ProjectionSql;
      try {
        if (this.projection.applyAll) await this.projection.applyAll(inTransaction, events);
        else for (const projected of events) await this.projection.apply(inTransaction, projected);
        // Moving the checkpoint is one compare-and-set statement, with the notice sent when it commits: on its
        // own for a batch nothing was written for, else as the transaction's last statement.
        const moved = await connection.maybeOne(sql.unsafe`
          WITH moved AS (
            UPDATE projection_checkpoints SET position = ${to}, updated_at = now()
            WHERE name = ${this.name} AND position = ${from}
            RETURNING position)
          SELECT position, pg_notify(${CHECKPOINT_CHANNEL}, ${checkpointNotice(this.name, to)}) FROM moved`);
        if (moved === null) throw new CheckpointFencedError(this.name, from);
        if (open) await connection.query(sql.unsafe`COMMIT`);
        open = false;
      } finally {
        if (open) await connection.query(sql.unsafe`ROLLBACK`).catch(() => {});
      }
    });
  }

  async reset(): Promise<void> {
    await this.pool.transaction(async (tx) => {
      // Truncating first takes the tables' locks before the checkpoint row, the same order a batch uses.
      for (const table of this.projection.tables) {
        await tx.query(sql.unsafe`TRUNCATE ${sql.identifier([table])}`);
      }
      await tx.query(sql.unsafe`
        INSERT INTO projection_checkpoints (name, position) VALUES (${this.name}, 0)
        ON CONFLICT (name) DO UPDATE SET position = 0, updated_at = now()`);
      await tx.query(sql.unsafe`SELECT pg_notify(${CHECKPOINT_CHANNEL}, ${checkpointNotice(this.name, 0)})`);
    });
  }
}
