import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { auditFilterSchema, type AuditFilter } from '@portcullis/contracts';
import {
  createDatabasePool,
  poolSizesOf,
  exportChainHead,
  exitUnlessSchemaIsCurrent,
  loadConfigOrExit,
  openEventStore,
  openLogChain,
  exitUnlessEventStoreServes,
  PostgresProjectionTarget,
  protectPersonalData,
  rebuildAside,
  type ExportedHead,
} from '@portcullis/platform';
import { searchAudit } from '@portcullis/api/audit/audit-search';
import { startChainVerification } from '@portcullis/api/audit/chain-verification';
import { timeTravel } from '@portcullis/api/audit/time-travel';
import { adminUserModel } from '@portcullis/api/admin/user-admin.decider';
import { membershipIndexModel } from '@portcullis/api/organization/membership-index.decider';
import { organizationModel } from '@portcullis/api/organization/organization.state';
import { auditIndexProjection } from '@portcullis/projector/audit/audit-index.projection';
import { progressBar } from './progress.ts';
import { reportUsageError, UsageError } from './usage.ts';

/**
 * `npm run audit -- <command>` (built: `node services/audit/dist/cli.js`): the audit trail from a terminal,
 * on the database the configuration names, running the same code as the ops endpoints. Answers go to
 * standard output (or `--out`), progress to standard error as a bar while it is a terminal.
 */
const USAGE = `usage: npm run audit -- <command> [options]
  verify [--head <file>] [--public-key <file>]
      walk the log's hash chain and report the first position that does not hold (exit 1); with a head
      exported earlier, also check the log still reaches it
  head
      print the log's head (position, chain hash), signed with AUDIT_SIGNING_KEY when set
  export [--user <id,...>] [--organization <id,...>] [--actor <id,...>] [--actor-kind <kind,...>]
         [--ip <ip|cidr,...>] [--type <t,...>] [--type-prefix <p>] [--stream <id,...>] [--from <iso>]
         [--to <iso>] [--order newest|oldest] [--out <file>]
      the audit trail as NDJSON, as GET /ops/audit/export answers it (default order: oldest); a filter of
      several comma-separated values matches any of them
  replay user|organization <id> [--at <iso|position>] [--diff-from <iso|position>]
      the state as it was then, folded from the log, and what changed since --diff-from
  rebuild
      replay the log into a new audit index beside the served one and swap it in`;

const FILTER_OPTIONS = {
  user: { type: 'string' },
  organization: { type: 'string' },
  actor: { type: 'string' },
  'actor-kind': { type: 'string' },
  ip: { type: 'string' },
  type: { type: 'string' },
  'type-prefix': { type: 'string' },
  stream: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  order: { type: 'string' },
  out: { type: 'string' },
} as const;

function filterOf(values: Record<string, string | boolean | undefined>): AuditFilter {
  const parsed = auditFilterSchema.safeParse({
    user: values.user,
    organization: values.organization,
    actor: values.actor,
    actorKind: values['actor-kind'],
    ip: values.ip,
    type: values.type,
    typePrefix: values['type-prefix'],
    stream: values.stream,
    from: values.from,
    to: values.to,
    order: values.order ?? 'oldest',
  });
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n'));
  return parsed.data;
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

const [command, ...rest] = process.argv.slice(2);
const config = loadConfigOrExit();
// Before the database is asked anything: a log the process would misread is a configuration it refuses.
// export and replay run the api's audit trail, which still reads the Postgres log by SQL; the rest go through the port.
const logProcess = command === 'export' || command === 'replay' ? 'audit-trail' : 'audit';
exitUnlessEventStoreServes(config, logProcess, (refusal) => console.error(refusal));
await exitUnlessSchemaIsCurrent(config.databaseUrl, (refusal) => console.error(refusal));
const pools = poolSizesOf(config, 'audit');
const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: pools.readModels });
// Every read opens personal data with its subject's key (an erased user's reads as erased); verify walks
// the stored bytes themselves: the chain is over the log as stored.
const storedLog = openEventStore(config, logProcess, { maximumPoolSize: pools.eventStore });
const chain = openLogChain(config, pool, storedLog);
const protectedLog = await protectPersonalData(storedLog, {
  databaseUrl: config.databaseUrl,
  secrets: config.secrets,
  pool,
  keysPoolSize: pools.dataKeys,
});
const store = protectedLog.store;
try {
  switch (command) {
    case 'verify': {
      const { values } = parseArgs({ args: rest, options: { head: { type: 'string' }, 'public-key': { type: 'string' } } });
      const signedHead = values.head ? (JSON.parse(await readFile(values.head, 'utf8')) as ExportedHead) : undefined;
      const trustedPublicKey = values['public-key'] ? await readFile(values['public-key'], 'utf8') : undefined;
      const bar = progressBar('verify');
      const options = {
        ...(signedHead ? { signedHead } : {}),
        ...(trustedPublicKey ? { trustedPublicKey } : {}),
        onProgress: (done: number, total: number) => bar.update(done, total),
      };
      // Recorded, as a check started over HTTP is (GET /ops/audit/verification); while another runs, this
      // one runs unrecorded rather than wait for it.
      const check = await startChainVerification(pool, chain, 'cli', options);
      if (!check.started) console.error(`a check started ${check.verification.startedAt} (${check.verification.source}) is under way; this one is not recorded`);
      const verdict = (await check.done) ?? (await chain.verify(options));
      bar.finish();
      console.log(JSON.stringify(verdict));
      if (!verdict.ok) process.exitCode = 1;
      break;
    }
    case 'head':
      console.log(JSON.stringify(await exportChainHead(chain, config.audit.signingKey)));
      break;
    case 'export': {
      const { values } = parseArgs({ args: rest, options: FILTER_OPTIONS });
      const filter = filterOf(values);
      const out = values.out ? createWriteStream(values.out) : process.stdout;
      const head = await store.headPosition();
      const bar = progressBar('export');
      let cursor: number | undefined;
      let written = 0;
      // A page at a time, waiting for the output to drain: memory stays one page, whatever the export's size.
      for (;;) {
        const page = await searchAudit({ db: pool, store, chain, personalData: protectedLog.personalData }, { ...filter, ...(cursor !== undefined ? { cursor } : {}) }, 500);
        for (const event of page.events) await write(out, `${JSON.stringify(event)}\n`);
        written += page.events.length;
        const last = page.events.at(-1)?.position ?? head;
        bar.update(filter.order === 'oldest' ? last : head - last, head);
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      bar.update(head, head);
      bar.finish();
      if (out !== process.stdout) {
        out.end();
        await once(out, 'finish');
      }
      console.error(`exported ${written} events`);
      break;
    }
    case 'replay': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { at: { type: 'string' }, 'diff-from': { type: 'string' } } });
      const [kind, id] = positionals;
      if ((kind !== 'user' && kind !== 'organization') || !id) throw new UsageError('replay needs: user|organization <id>');
      const travel = timeTravel({ store, db: pool, personalData: protectedLog.personalData, clock: () => new Date(), models: { organization: organizationModel, userOrganizations: membershipIndexModel, adminUser: adminUserModel } });
      const query = { at: values.at, diffFrom: values['diff-from'] };
      console.log(JSON.stringify(kind === 'user' ? await travel.userAt(id, query) : await travel.organizationAt(id, query), null, 2));
      break;
    }
    case 'rebuild': {
      const head = await store.headPosition();
      const bar = progressBar('rebuild');
      const startedAt = performance.now();
      const target = new PostgresProjectionTarget(pool, auditIndexProjection);
      // A database no projector has indexed yet has no live checkpoint for the copy to take over.
      await target.readCheckpoint();
      const position = await rebuildAside(target, {
        databaseUrl: config.databaseUrl,
        store,
        batchSize: config.projector.rebuildBatchSize,
        onProgress: (at) => bar.update(at, head),
      });
      bar.finish();
      const seconds = (performance.now() - startedAt) / 1000;
      console.log(`audit index rebuilt to position ${position} in ${seconds.toFixed(1)} s (${Math.round(position / Math.max(seconds, 0.001))} events/s) and swapped in`);
      break;
    }
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'no command');
  }
} catch (error) {
  reportUsageError(error, USAGE);
} finally {
  await store.close();
  await protectedLog.close();
  await pool.end();
}
