import { sql, type ProjectionSql } from '@portcullis/platform';

type Value = string | number | boolean | null;

/**
 * Rows a batch creates, held in memory while later events of the same batch change them by their key, then
 * written in one multi-row INSERT: a replay's user registered, renamed and verified in one batch is one row
 * written once, not an INSERT and two UPDATEs, and a session opened and revoked in one batch is never
 * written at all. The owner writes them (`flush`) before any statement that is not by one of their keys,
 * so every statement finds the rows it would have found event by event.
 */
export class PendingRows<Row extends Record<string, Value>> {
  private readonly rows = new Map<string, Row>();
  private readonly names: readonly (keyof Row & string)[];

  /** `columns`: every column of `table` a row sets, with its Postgres type; the others take their defaults. */
  constructor(
    private readonly table: string,
    private readonly key: keyof Row & string,
    private readonly columns: { readonly [K in keyof Row & string]: string },
  ) {
    this.names = Object.keys(columns);
  }

  /**
   * Holds a new row; false when one with its key is already held, for the caller to write the two event by
   * event (the second INSERT then fails as it would have).
   */
  add(row: Row): boolean {
    const key = row[this.key] as string;
    if (this.rows.has(key)) return false;
    this.rows.set(key, row);
    return true;
  }

  /** The held row with this key, to change in place; undefined when the row is not one of this batch's. */
  get(key: string): Row | undefined {
    return this.rows.get(key);
  }

  delete(key: string): boolean {
    return this.rows.delete(key);
  }

  /** Held rows matching `match`; for changes by a column other than the key. */
  *where(match: (row: Row) => boolean): IterableIterator<Row> {
    for (const row of this.rows.values()) if (match(row)) yield row;
  }

  async flush(tx: ProjectionSql): Promise<void> {
    if (this.rows.size === 0) return;
    const tuples = [...this.rows.values()].map((row) => this.names.map((name) => row[name] ?? null));
    this.rows.clear();
    await tx.query(sql.unsafe`
      INSERT INTO ${sql.identifier([this.table])} (${sql.join(
        this.names.map((name) => sql.identifier([name])),
        sql.fragment`, `,
      )})
      SELECT * FROM ${sql.unnest(tuples, this.names.map((name) => this.columns[name]))}`);
  }
}

/** A time as the rows keep it: the instant of an ISO string, normalised (the events' times are ISO). */
export function instant(iso: string): string {
  return new Date(iso).toISOString();
}
