import { sql, type DatabasePool, type sqlFromCatalog } from '../database/pool.ts';
import type { EventFields } from '../event-store/event-store.ts';
import {
  CheckpointFencedError,
  type HoldBack,
  type PostgresProjection,
  type ProjectedEvent,
  type ProjectionSql,
  type ProjectionTarget,
  type ShadowTarget,
} from './projection.ts';
import { cloneTableInto, shadowSchemaOf, type DeferredIndexes } from './shadow-schema.ts';

export const CHECKPOINT_CHANNEL = 'portcullis_checkpoints';

/** Announces a projection's progress to api processes waiting to read their own writes. */
export function checkpointNotice(name: string, position: number): string {
  return `${name}:${position}`;
}

type WriteQuery = Parameters<ProjectionSql['query']>[0];

/**
 * Whether a statement may share one statement with the checkpoint's move, inside a WITH: a plain INSERT,
 * UPDATE or DELETE. Not one with a WITH of its own (a data-modifying WITH must be at the top level), and
 * not the rest (TRUNCATE, LOCK, SET and the like are not allowed in a WITH at all).
 */
function combinesWithMove(query: WriteQuery): boolean {
  return /^\s*(INSERT|UPDATE|DELETE)\s/i.test(query.sql);
}

/** A checkpoint kept in `projection_checkpoints`, created at 0 the first time it is asked for. */
export async function readStoredCheckpoint(pool: DatabasePool, name: string): Promise<number> {
  await pool.query(sql.unsafe`
    INSERT INTO projection_checkpoints (name, position) VALUES (${name}, 0) ON CONFLICT (name) DO NOTHING`);
  return Number(await pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${name}`));
}

/**
 * The statement that moves a stored checkpoint from `from` to `to` and, with a channel, announces it by
 * NOTIFY at commit. Refused (PC412, see `fencedOr`) when the checkpoint is no longer at `from`.
 */
export function moveStoredCheckpoint(name: string, from: number, to: number, channel: string | null) {
  return sql.unsafe`SELECT portcullis_move_checkpoint(${name}, ${from}, ${to}, ${channel}, ${checkpointNotice(name, to)})`;
}

/** `error` as a CheckpointFencedError when it is `portcullis_move_checkpoint`'s refusal, else unchanged. */
export function fencedOr(error: unknown, name: string, from: number): unknown {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if ((cause as { code?: unknown }).code === 'PC412') return new CheckpointFencedError(name, from);
  }
  return error;
}

/**
 * Publishes a checkpoint notice somewhere other than Postgres (Redis pub/sub), once the move has committed.
 * Without one, the notice is a NOTIFY on CHECKPOINT_CHANNEL sent by the commit itself.
 */
export type CheckpointAnnouncer = (notice: string) => Promise<unknown>;

/** A shadow's checkpoint row, beside the live one's. */
function shadowCheckpointName(name: string): string {
  return `${name}~shadow`;
}

export class PostgresProjectionTarget implements ProjectionTarget {
  readonly name: string;
  readonly handles: ReadonlySet<string> | undefined;
  readonly gatherMs: number | undefined;
  readonly holdsBack: HoldBack | undefined;
  readonly reads: EventFields | undefined;
  readonly replayBatch?: ProjectionTarget['replayBatch'];
  private readonly announce: CheckpointAnnouncer | null;
  /** Where the commit itself NOTIFYs a checkpoint's move: nowhere when it is announced after the commit. */
  private readonly notifyChannel: string | null;
  /** The checkpoint row this target moves: the projection's, or its shadow's. */
  private readonly checkpointName: string;
  /** For a shadow: the schema its tables are in, put first on the search path of every batch. */
  private readonly schema: string | null;

  constructor(
    private readonly pool: DatabasePool,
    private readonly projection: PostgresProjection,
    options: { announce?: CheckpointAnnouncer; shadowSchema?: string; holdsBack?: HoldBack } = {},
  ) {
    this.name = projection.name;
    this.handles = projection.handles;
    this.gatherMs = projection.gatherMs;
    this.holdsBack = options.holdsBack;
    this.reads = projection.replay?.reads ?? projection.reads;
    const replay = projection.replay;
    if (replay) {
      this.replayBatch = (events, from, to) => this.write(from, to, (batch) => replay.applyAll(batch, events, { after: from, until: to }));
    }
    this.schema = options.shadowSchema ?? null;
    this.checkpointName = this.schema ? shadowCheckpointName(projection.name) : projection.name;
    // A shadow is read by nobody: its progress is announced to no one.
    this.announce = this.schema ? null : (options.announce ?? null);
    this.notifyChannel = this.schema || this.announce ? null : CHECKPOINT_CHANNEL;
  }

  /** After a committed move: a lost notice costs waiting api processes their re-read interval, nothing more. */
  private async announced(position: number): Promise<void> {
    await this.announce?.(checkpointNotice(this.name, position)).catch(() => {});
  }

  readCheckpoint(): Promise<number> {
    return readStoredCheckpoint(this.pool, this.checkpointName);
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number): Promise<void> {
    await this.write(from, to, async (batch) => {
      if (this.projection.applyAll) await this.projection.applyAll(batch, events);
      else for (const projected of events) await this.projection.apply(batch, projected);
    });
  }

  /** Writes `work`'s statements and moves the checkpoint from `from` to `to`, atomically. */
  private async write(from: number, to: number, work: (batch: ProjectionSql) => Promise<void>): Promise<void> {
    const moveCheckpoint = moveStoredCheckpoint(this.checkpointName, from, to, this.notifyChannel);
    await this.pool.connect(async (connection) => {
      // The first write is held back: if it stays the only one, it goes out with the checkpoint's move as one
      // statement (no BEGIN, no COMMIT); a second statement opens a transaction and sends it first.
      let held: WriteQuery | null = null;
      let open = false;
      const openTransaction = async (): Promise<void> => {
        if (open) return;
        await connection.query(sql.unsafe`BEGIN`);
        open = true;
        // The shadow's tables have the live ones' names: the search path makes the projection's SQL write them.
        if (this.schema) await connection.query(sql.unsafe`SELECT set_config('search_path', ${`${quoteIdentifier(this.schema)}, public`}, true)`);
        if (held) {
          const first = held;
          held = null;
          await connection.query(first);
        }
      };
      const batch: ProjectionSql = {
        query: async (query) => {
          if (!open && held === null && this.schema === null && combinesWithMove(query)) {
            held = query;
            return;
          }
          await openTransaction();
          await connection.query(query);
        },
        maybeOneFirst: async (query) => {
          await openTransaction();
          return connection.maybeOneFirst(query);
        },
      };
      try {
        await work(batch);
        // The move comes last, so every batch, like reset, locks the projection's tables before the
        // checkpoint's row (a statement takes its tables' locks as it starts), and the two cannot deadlock.
        // It fences the batch: a refused move aborts the statement, and the transaction, with every write.
        if (open) {
          await connection.query(moveCheckpoint);
          await connection.query(sql.unsafe`COMMIT`);
          open = false;
        } else {
          await connection.query(held ? sql.unsafe`WITH written AS (${held}) ${moveCheckpoint}` : moveCheckpoint);
        }
      } catch (error) {
        throw fencedOr(error, this.checkpointName, from);
      } finally {
        if (open) await connection.query(sql.unsafe`ROLLBACK`).catch(() => {});
      }
    });
    await this.announced(to);
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
      if (this.notifyChannel) await tx.query(sql.unsafe`SELECT pg_notify(${this.notifyChannel}, ${checkpointNotice(this.name, 0)})`);
    });
    await this.announced(0);
  }

  /**
   * Empty copies of the projection's tables, same columns, constraints and index names, in a schema of
   * their own, with a checkpoint row of their own at 0. Readers keep reading the live tables meanwhile.
   */
  async createShadow(): Promise<ShadowTarget> {
    if (this.schema) throw new Error('a shadow has no shadow of its own');
    const schema = shadowSchemaOf(this.name);
    const shadowCheckpoint = shadowCheckpointName(this.name);
    const later = new Set(this.projection.indexesAfterLoad ?? []);
    const tables = this.projection.tables;
    const deferred: DeferredIndexes = { constraints: [], indexes: [] };
    const tableOf = new Map<ReturnType<typeof sqlFromCatalog>, string>();
    await this.pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`DROP SCHEMA IF EXISTS ${sql.identifier([schema])} CASCADE`);
      await tx.query(sql.unsafe`CREATE SCHEMA ${sql.identifier([schema])}`);
      for (const table of tables) {
        const { constraints, indexes } = await cloneTableInto(tx, table, schema, later);
        deferred.constraints.push(...constraints);
        deferred.indexes.push(...indexes);
        for (const index of indexes) tableOf.set(index, table);
      }
      await tx.query(sql.unsafe`
        INSERT INTO projection_checkpoints (name, position) VALUES (${shadowCheckpoint}, 0)
        ON CONFLICT (name) DO UPDATE SET position = 0, updated_at = now()`);
    });
    const shadow = new PostgresProjectionTarget(this.pool, this.projection, { shadowSchema: schema });
    const live = this.name;
    let promotedTo = 0;
    // Sorting a long table's keys in memory rather than in temporary files.
    const build = (statements: readonly ReturnType<typeof sqlFromCatalog>[]) =>
      this.pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`SET LOCAL maintenance_work_mem = '256MB'`);
        for (const statement of statements) await tx.query(sql.unsafe`${statement}`);
      });
    const loaded = async (): Promise<void> => {
      // The slow kinds (GiST, GIN) first, then those of the table with more rows (more keys to sort): the
      // other connection meanwhile builds the rest, and the last to start is a short one, not a long one
      // begun when everything else is done.
      const sizes = new Map<string, number>();
      for (const table of tables) sizes.set(table, Number(await this.pool.oneFirst(sql.unsafe`SELECT count(*) FROM ${sql.identifier([schema, table])}`)));
      const sizeOf = (index: ReturnType<typeof sqlFromCatalog>) => sizes.get(tableOf.get(index) ?? '') ?? 0;
      const queue = deferred.indexes.splice(0).sort((a, b) => Number(isBtree(a)) - Number(isBtree(b)) || sizeOf(b) - sizeOf(a));
      const constraints = deferred.constraints.splice(0);
      // Two at a time, on connections of their own: one long build does not keep a core idle.
      const worker = async (): Promise<void> => {
        for (let next = queue.shift(); next; next = queue.shift()) await build([next]);
      };
      await Promise.all([worker(), worker()]);
      await build(constraints);
      // Statistics before the first reader: the swapped-in tables are planned for what they hold.
      for (const table of tables) await this.pool.query(sql.unsafe`ANALYZE ${sql.identifier([schema, table])}`);
    };
    let analyzed = false;
    return Object.assign(shadow, {
      loaded: async () => {
        await loaded();
        analyzed = true;
      },
      promote: async () => {
        if (!analyzed) await loaded();
        await this.pool.transaction(async (tx) => {
          // Readers of the live tables wait for this commit (milliseconds), then read the rebuilt ones.
          for (const table of tables) {
            await tx.query(sql.unsafe`LOCK TABLE ${sql.identifier(['public', table])} IN ACCESS EXCLUSIVE MODE`);
          }
          for (const table of tables) {
            await tx.query(sql.unsafe`DROP TABLE ${sql.identifier(['public', table])}`);
            await tx.query(sql.unsafe`ALTER TABLE ${sql.identifier([schema, table])} SET SCHEMA public`);
          }
          // The live row may not exist yet: a rebuild run before any projector has followed this log.
          promotedTo = Number(
            await tx.oneFirst(sql.unsafe`
              INSERT INTO projection_checkpoints (name, position)
              SELECT ${live}, position FROM projection_checkpoints WHERE name = ${shadowCheckpoint}
              ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()
              RETURNING position`),
          );
          await tx.query(sql.unsafe`DELETE FROM projection_checkpoints WHERE name = ${shadowCheckpoint}`);
          await tx.query(sql.unsafe`DROP SCHEMA ${sql.identifier([schema])}`);
          if (this.notifyChannel) await tx.query(sql.unsafe`SELECT pg_notify(${this.notifyChannel}, ${checkpointNotice(live, promotedTo)})`);
        });
        await this.announced(promotedTo);
      },
      discard: async () => {
        await this.pool.query(sql.unsafe`DROP SCHEMA IF EXISTS ${sql.identifier([schema])} CASCADE`);
        await this.pool.query(sql.unsafe`DELETE FROM projection_checkpoints WHERE name = ${shadowCheckpoint}`);
      },
    });
  }
}

function isBtree(statement: ReturnType<typeof sqlFromCatalog>): boolean {
  return / USING btree /i.test(statement.sql);
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
