import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createDatabasePool, exportLogHead, loadConfigOrExit, migrate, verifyChain, type ExportedHead } from '@portcullis/platform';
import { progressBar } from './progress.ts';

/**
 * `npm run audit -- <command>` (built: `node services/projector/dist/audit/cli.js`): the audit trail from
 * a terminal. Reads the database the configuration names; writes answers on standard output and progress
 * on standard error (a bar while it is a terminal).
 */
const USAGE = `usage: npm run audit -- <command>
  verify [--head <file>] [--public-key <file>]   walk the log's hash chain; with a head exported earlier,
                                                  also check the log still reaches it (exit 1 on a failure)
  head                                            print the log's head (position, hash), signed with AUDIT_SIGNING_KEY`;

const [command, ...rest] = process.argv.slice(2);
const config = loadConfigOrExit();
await migrate(config.databaseUrl);
const pool = await createDatabasePool(config.databaseUrl, { maximumPoolSize: 2 });
try {
  switch (command) {
    case 'verify': {
      const { values } = parseArgs({ args: rest, options: { head: { type: 'string' }, 'public-key': { type: 'string' } } });
      const signedHead = values.head ? (JSON.parse(await readFile(values.head, 'utf8')) as ExportedHead) : undefined;
      const trustedPublicKey = values['public-key'] ? await readFile(values['public-key'], 'utf8') : undefined;
      const bar = progressBar('verify');
      const verdict = await verifyChain(pool, {
        ...(signedHead ? { signedHead } : {}),
        ...(trustedPublicKey ? { trustedPublicKey } : {}),
        onProgress: (done, total) => bar.update(done, total),
      });
      bar.finish();
      console.log(JSON.stringify(verdict));
      if (!verdict.ok) process.exitCode = 1;
      break;
    }
    case 'head':
      console.log(JSON.stringify(await exportLogHead(pool, config.audit.signingKey)));
      break;
    default:
      console.error(USAGE);
      process.exitCode = 64;
  }
} finally {
  await pool.end();
}
