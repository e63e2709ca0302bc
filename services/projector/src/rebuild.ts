import { erasureProjectionName } from '@portcullis/contracts';
import { createDatabasePool, exitUnlessSchemaIsCurrent, loadConfigOrExit, exitUnlessEventStoreServes, openEventStore, poolSizesOf, protectPersonalData, rebuildAside } from '@portcullis/platform';
import { createProjectionTargets } from './projections.ts';

/**
 * `npm run rebuild-projection -- <name|all>`: replays the log into a fresh copy of a read model beside the
 * served one and swaps it in once it has reached the head. Readers keep the old state until the swap, so
 * the service stays up and never serves a half-replayed read model.
 */
const requested = process.argv[2];
const config = loadConfigOrExit();
// Before the database is asked anything: a log the process would misread is a configuration it refuses.
exitUnlessEventStoreServes(config, 'rebuild', (refusal) => console.error(refusal));
await exitUnlessSchemaIsCurrent(config.databaseUrl, (refusal) => console.error(refusal));
const pools = poolSizesOf(config, 'rebuild-projection');
const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: pools.readModels, asynchronousCommit: true });
const protectedLog = await protectPersonalData(openEventStore(config, 'rebuild', { maximumPoolSize: pools.eventStore }), {
  databaseUrl: config.databaseUrl,
  secrets: config.secrets,
  pool,
  keysPoolSize: pools.dataKeys,
});
const store = protectedLog.store;
const projections = await createProjectionTargets(config, pool, store, protectedLog.eraser);
// Erasure owns no read model to rebuild: replaying it would only erase again what is erased.
const rebuildable = projections.targets.filter((t) => t.createShadow !== undefined && t.name !== erasureProjectionName);
const names = rebuildable.map((t) => t.name);
const chosen = requested === 'all' ? rebuildable : rebuildable.filter((t) => t.name === requested);
if (!requested || chosen.length === 0) {
  console.error(`usage: npm run rebuild-projection -- <${[...names, 'all'].join('|')}>`);
  process.exitCode = 64;
} else {
  for (const target of chosen) {
    const startedAt = Date.now();
    const head = await rebuildAside(target, { databaseUrl: config.databaseUrl, store, batchSize: config.projector.rebuildBatchSize });
    console.log(`${target.name}: rebuilt to position ${head} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s and swapped in`);
  }
}
await projections.close();
await store.close();
await protectedLog.close();
await pool.end();
