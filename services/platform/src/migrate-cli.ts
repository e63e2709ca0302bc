import { checkSchema, schemaRefusal } from './database/schema-version.ts';
import { migrate } from './database/migrate.ts';
import { loadConfigOrExit } from './config/index.ts';

/**
 * The migrate step (`portcullis migrate` in the image, `npm run migrate` in a checkout): brings the database
 * named by the configuration to the schema this build ships, then exits 0. Run once per deployment before
 * the services start (a Job, an init container); they only check the schema (database/schema-version.ts).
 * A database ahead of this build is left alone and refused, as the services refuse it.
 */
const config = loadConfigOrExit();
const say = (message: string): void => console.log(`[migrate] ${message}`);

const before = await checkSchema(config.databaseUrl);
if (before.state === 'ahead') {
  console.error(`[migrate] ${schemaRefusal(before)}`);
  process.exit(78);
}
if (before.state === 'current') {
  say(`the schema is current (${before.newest}); nothing to apply`);
} else {
  say(before.state === 'empty' ? 'the database has no schema: applying every migration' : `applying ${before.pending.length} migration(s)`);
  const startedAt = Date.now();
  await migrate(config.databaseUrl, (line) => {
    // node-pg-migrate announces each step as "### MIGRATION <name> (UP) ###"; its other lines add nothing here.
    const step = /### MIGRATION (\S+) \(UP\) ###/.exec(line);
    if (step) say(`applying ${step[1]}`);
  });
  const after = await checkSchema(config.databaseUrl);
  const refusal = schemaRefusal(after);
  if (refusal !== null) {
    console.error(`[migrate] after migrating, ${refusal}`);
    process.exit(1);
  }
  say(`done in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: the schema is current (${after.state === 'current' ? after.newest : ''})`);
}
