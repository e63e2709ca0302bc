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
  /** Index builds, each on a connection of its own if need be: several may run at once, also on one table. */
  readonly indexes: ReturnType<typeof sqlFromCatalog>[];
  /** Then the constraints over them (`ADD CONSTRAINT … USING INDEX`, at once), one at a time. */
  readonly constraints: ReturnType<typeof sqlFromCatalog>[];
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
    SELECT conname, contype, pg_get_constraintdef(oid) AS definition, pg_get_indexdef(conindid) AS index FROM pg_constraint
    WHERE conrelid = ${qualified}::regclass AND contype IN ('p', 'u', 'x')`)) as readonly { conname: string; contype: string; definition: string; index: string }[];
  for (const { conname, contype, definition, index } of constraints) {
    const statement = sql.fragment`ALTER TABLE ${target} ADD CONSTRAINT ${sql.identifier([conname])} ${sqlFromCatalog(definition)}`;
    if (!later.has(conname)) await tx.query(sql.unsafe`${statement}`);
    else if (contype === 'x') deferred.constraints.push(statement);
    else {
      // Its index first, built beside the table's others; the constraint then takes it as it is.
      deferred.indexes.push(onCopy(index, schema, table));
      const kind = contype === 'p' ? sql.fragment`PRIMARY KEY` : sql.fragment`UNIQUE`;
      deferred.constraints.push(sql.fragment`ALTER TABLE ${target} ADD CONSTRAINT ${sql.identifier([conname])} ${kind} USING INDEX ${sql.identifier([conname])}`);
    }
  }
  const indexes = (await tx.any(sql.unsafe`
    SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = ${qualified}::regclass
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`)) as readonly { name: string; definition: string }[];
  for (const { name, definition } of indexes) {
    const statement = onCopy(definition, schema, table);
    if (later.has(name)) deferred.indexes.push(statement);
    else await tx.query(sql.unsafe`${statement}`);
  }
  return deferred;
}

/** `CREATE [UNIQUE] INDEX name ON [ONLY] public.table USING ...`: the same index on the copy. */
function onCopy(definition: string, schema: string, table: string): ReturnType<typeof sqlFromCatalog> {
  return sqlFromCatalog(definition.replace(/ ON (ONLY )?\S+ USING /, ` ON $1${quote(schema)}.${quote(table)} USING `));
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
