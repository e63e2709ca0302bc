import { createDatabasePool, loadConfigOrExit, migrate, resetProjection } from '@portcullis/platform';
import { createProjectionTargets } from './projections.ts';

/**
 * `npm run rebuild-projection -- <name|all>`: empties a projection and replays it from position 0. Running
 * projectors step aside for the reset and then replay it themselves, so the service stays up.
 */
const requested = process.argv[2];
const config = loadConfigOrExit();
await migrate(config.databaseUrl);
const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: 2 });
const projections = createProjectionTargets(config, pool);
const names = projections.targets.map((t) => t.name);
const chosen = requested === 'all' ? projections.targets : projections.targets.filter((t) => t.name === requested);
if (!requested || chosen.length === 0) {
  console.error(`usage: npm run rebuild-projection -- <${[...names, 'all'].join('|')}>`);
  process.exitCode = 64;
} else {
  for (const target of chosen) {
    await resetProjection(config.databaseUrl, target);
    console.log(`${target.name}: reset to position 0; projectors are replaying it`);
  }
}
await projections.close();
await pool.end();
