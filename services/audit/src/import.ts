import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
  CommandHandler,
  createDatabasePool,
  exitUnlessSchemaIsCurrent,
  loadConfigOrExit,
  openEventStore,
  poolSizesOf,
  protectPersonalData,
} from '@portcullis/platform';
import { BetterAuthSource, describeSummary, importFromBetterAuth, importPortsOf, SourceSchemaError } from '@portcullis/api/import/better-auth-import';
import { reportUsageError, UsageError } from './usage.ts';

/**
 * `npm run import -- better-auth <postgres url>` (the image: `portcullis import …`): a better-auth 1.x database
 * read into the Portcullis database DATABASE_URL names, as the events the api would have appended, whether
 * the services run or not (the projectors build the read models when they get to them). A rerun continues
 * where a run stopped and writes nothing twice. See docs/operations.md, "Importing from better-auth".
 */
const USAGE = `usage: npm run import -- better-auth <postgres url> [options]
  --keep-sessions     carry live sessions over, so nobody is signed out (add better-auth's secret to
                      AUTH_SECRETS, after Portcullis' own, for its cookies to verify)
  --batch-size <n>    rows read at a time (default 500)
  --concurrency <n>   rows imported at once (default 4)`;

const [kind, ...rest] = process.argv.slice(2);
try {
  if (kind !== 'better-auth') throw new UsageError(kind ? `unknown source ${kind}: only better-auth is known` : 'no source');
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { 'keep-sessions': { type: 'boolean' }, 'batch-size': { type: 'string' }, concurrency: { type: 'string' } },
  });
  if (positionals.length !== 1) throw new UsageError('one postgres url, of the better-auth database');
  const sourceUrl = positionals[0]!;
  if (!/^postgres(ql)?:\/\//.test(sourceUrl)) throw new UsageError('the better-auth database must be a postgres:// url');
  const batchSize = Number(values['batch-size'] ?? 500);
  const concurrency = Number(values.concurrency ?? 4);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new UsageError('--batch-size must be a positive integer');
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UsageError('--concurrency must be a positive integer');
  await run(sourceUrl, { keepSessions: values['keep-sessions'] === true, batchSize, concurrency });
} catch (error) {
  reportUsageError(error, USAGE);
}

async function run(sourceUrl: string, settings: { keepSessions: boolean; batchSize: number; concurrency: number }): Promise<void> {
  const config = loadConfigOrExit();
  await exitUnlessSchemaIsCurrent(config.databaseUrl, (refusal) => console.error(`[import] ${refusal}`));
  let source: BetterAuthSource;
  try {
    source = await BetterAuthSource.open(sourceUrl);
  } catch (error) {
    if (!(error instanceof SourceSchemaError)) throw error;
    console.error(`[import] ${error.message}`);
    process.exitCode = 65; // EX_DATAERR
    return;
  }
  const pools = poolSizesOf(config, 'audit');
  const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: pools.readModels });
  const protectedLog = await protectPersonalData(openEventStore(config, 'audit', { maximumPoolSize: Math.max(pools.eventStore, settings.concurrency) }), {
    databaseUrl: config.databaseUrl,
    secrets: config.secrets,
    pool,
    keysPoolSize: pools.dataKeys,
  });
  const runId = `import-${randomUUID()}`;
  try {
    // No waiting for read models: the services may not be running, and the projectors catch up when they are.
    const commands = new CommandHandler({ store: protectedLog.store, clock: () => new Date(), settle: async () => {} });
    console.log(`[import] run ${runId}: better-auth database ${new URL(sourceUrl).pathname.slice(1)} into Portcullis${settings.keepSessions ? ', keeping live sessions' : ''}`);
    const summary = await importFromBetterAuth(importPortsOf(commands, config), source, {
      ...settings,
      now: () => new Date(),
      runId,
      report: (line) => console.log(`[import] ${line}`),
    });
    console.log('[import] done:');
    for (const line of describeSummary(summary)) console.log(`[import]   ${line}`);
  } finally {
    await source.close();
    await protectedLog.store.close();
    await protectedLog.close();
    await pool.end();
  }
}
