import { sql, sqlFromCatalog, type DatabaseTransactionConnection } from '../database/pool.ts';

/** The schema a projection's shadow tables live in while a rebuild fills them. */
export function shadowSchemaOf(projection: string): string {
  return `portcullis_shadow_${projection.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;
}

/**
 * An empty copy of `public.<table>` in `schema`: its columns, defaults and checks, and its constraints and
 * indexes under their own names (names are per schema), so that once moved into `public` the copy is the
 * table the migrations made, and later migrations that name its indexes still find them. Those named in
 * `later` are not made: their statements are answered, to be run once the copy is loaded.
 */
export interface DeferredIndexes {
  /** Constraints (primary keys, unique): each locks its table, so they go one at a time, first. */
  readonly constraints: ReturnType<typeof sqlFromCatalog>[];
  /** Plain indexes: several may be built at once on one table. */
  readonly indexes: ReturnType<typeof sqlFromCatalog>[];
}

export async function cloneTableInto(
  tx: DatabaseTransactionConnection,
  table: string,
  schema: string,
  later: ReadonlySet<string> = new Set(),
): Promise<DeferredIndexes> {
  const source = sql.identifier(['public', table]);
  const target = sql.identifier([schema, table]);
  await tx.query(sql.unsafe`
    CREATE TABLE ${target} (LIKE ${source}
      INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING IDENTITY INCLUDING STORAGE INCLUDING COMMENTS)`);
  const qualified = `public.${quote(table)}`;
  const deferred: DeferredIndexes = { constraints: [], indexes: [] };
  const constraints = (await tx.any(sql.unsafe`
    SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
    WHERE conrelid = ${qualified}::regclass AND contype IN ('p', 'u', 'x')`)) as readonly { conname: string; definition: string }[];
  for (const { conname, definition } of constraints) {
    const statement = sql.fragment`ALTER TABLE ${target} ADD CONSTRAINT ${sql.identifier([conname])} ${sqlFromCatalog(definition)}`;
    if (later.has(conname)) deferred.constraints.push(statement);
    else await tx.query(sql.unsafe`${statement}`);
  }
  const indexes = (await tx.any(sql.unsafe`
    SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = ${qualified}::regclass
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`)) as readonly { name: string; definition: string }[];
  for (const { name, definition } of indexes) {
    // `CREATE [UNIQUE] INDEX name ON [ONLY] public.table USING ...`: the same index on the copy.
    const statement = sqlFromCatalog(definition.replace(/ ON (ONLY )?\S+ USING /, ` ON $1${quote(schema)}.${quote(table)} USING `));
    if (later.has(name)) deferred.indexes.push(statement);
    else await tx.query(sql.unsafe`${statement}`);
  }
  return deferred;
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
