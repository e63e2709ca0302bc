import { sql, sqlFromCatalog, type DatabaseTransactionConnection } from '../database/pool.ts';

/** The schema a projection's shadow tables live in while a rebuild fills them. */
export function shadowSchemaOf(projection: string): string {
  return `portcullis_shadow_${projection.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;
}

/**
 * An empty copy of `public.<table>` in `schema`: its columns, defaults and checks, and its constraints and
 * indexes under their own names (names are per schema), so that once moved into `public` the copy is the
 * table the migrations made, and later migrations that name its indexes still find them.
 */
export async function cloneTableInto(tx: DatabaseTransactionConnection, table: string, schema: string): Promise<void> {
  const source = sql.identifier(['public', table]);
  const target = sql.identifier([schema, table]);
  await tx.query(sql.unsafe`
    CREATE TABLE ${target} (LIKE ${source}
      INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING IDENTITY INCLUDING STORAGE INCLUDING COMMENTS)`);
  const qualified = `public.${quote(table)}`;
  const constraints = (await tx.any(sql.unsafe`
    SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
    WHERE conrelid = ${qualified}::regclass AND contype IN ('p', 'u', 'x')`)) as readonly { conname: string; definition: string }[];
  for (const { conname, definition } of constraints) {
    await tx.query(sql.unsafe`ALTER TABLE ${target} ADD CONSTRAINT ${sql.identifier([conname])} ${sqlFromCatalog(definition)}`);
  }
  const indexes = (await tx.anyFirst(sql.unsafe`
    SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i
    WHERE i.indrelid = ${qualified}::regclass
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`)) as readonly string[];
  for (const definition of indexes) {
    // `CREATE [UNIQUE] INDEX name ON [ONLY] public.table USING ...`: the same index on the copy.
    const onCopy = definition.replace(/ ON (ONLY )?\S+ USING /, ` ON $1${quote(schema)}.${quote(table)} USING `);
    await tx.query(sql.unsafe`${sqlFromCatalog(onCopy)}`);
  }
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
