import { it } from 'vitest';
import pg from 'pg';
import { createBetterAuthSource } from './better-auth-source.ts';
it('probe', async () => {
  const s = await createBetterAuthSource();
  const c = new pg.Client({ connectionString: s.database.url }); await c.connect();
  const cols = await c.query(`select table_name, column_name, data_type from information_schema.columns where table_schema='public' order by table_name, ordinal_position`);
  for (const r of cols.rows) console.log(r.table_name, r.column_name, r.data_type);
  for (const t of ['user','session','account','member','invitation','team','teamMember','organization','verification']) console.log(t, JSON.stringify((await c.query(`select * from "${t}" limit 3`)).rows));
  await c.end(); await s.close(); await s.database.drop();
});
