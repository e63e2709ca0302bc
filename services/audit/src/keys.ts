import { parseArgs } from 'node:util';
import {
  createKeyWrapping,
  DataKeyRotation,
  derivedAddressNamingKey,
  loadConfigOrExit,
  exitUnlessSchemaIsCurrent,
  PostgresDataKeys,
  type KeyWrapping,
  type WrappingStatus,
} from '@portcullis/platform';
import { reportUsageError, UsageError } from './usage.ts';

/**
 * `npm run keys -- <command>` (built: `node services/audit/dist/keys.js`): the personal-data keys' wrapping
 * under the secret ring (`AUTH_SECRETS`, newest first), for rotating a secret without losing anyone's data.
 * Run it with the ring the services run with. See docs/operations.md, "Rotating secrets".
 */
const USAGE = `usage: npm run keys -- <command> [options]
  status [--json]
      how many data keys each secret of the ring wraps, and which older secrets can be removed
  rotate [--batch-size <n>]
      re-wrap every data key not under the newest secret, a batch per transaction, printing progress;
      safe while the services run (after each runs with the new ring), and a rerun takes up where one stopped`;

function describeStatus(status: WrappingStatus): string[] {
  const count = status.ring.length;
  const lines = status.ring.map(({ wrappedBy, keys }, index) => {
    const which = `secret ${index + 1} of ${count}${index === 0 ? ' (newest)' : ''}, key ${wrappedBy}: ${keys} data keys`;
    if (index === 0) return which;
    if (keys > 0 || status.unrecorded > 0) return `${which}; still needed: run \`keys rotate\` before removing it`;
    return `${which}; no data key needs it (cookies and mail links signed with it stop working once it is removed)`;
  });
  if (status.unrecorded > 0) lines.push(`${status.unrecorded} data keys stored before key ids were recorded: \`keys rotate\` re-wraps them under the newest`);
  if (status.outsideRing > 0) lines.push(`${status.outsideRing} data keys wrapped by a secret not in the ring: unreadable until it is put back`);
  return lines;
}

function removable(status: WrappingStatus): number[] {
  if (status.unrecorded > 0) return [];
  return status.ring.flatMap(({ keys }, index) => (index > 0 && keys === 0 ? [index + 1] : []));
}

async function rotate(rotation: DataKeyRotation, databaseUrl: string, secrets: readonly string[], wrapping: KeyWrapping, batchSize: number): Promise<boolean> {
  // The address-naming key is a row of data_key like the others; on a database no service has started on
  // with a ring yet, it is stored first, so this rotation re-wraps it too.
  const keys = new PostgresDataKeys({ databaseUrl, cipher: wrapping });
  try {
    await keys.addressNamingKey(derivedAddressNamingKey(secrets));
  } finally {
    await keys.close();
  }
  const result = await rotation.rewrap({
    batchSize,
    onBatch: ({ done, total, rewrapped, keysPerSecond }) =>
      console.log(`rotate: ${done}/${total} data keys (${total > 0 ? Math.floor((done / total) * 100) : 100}%), ${rewrapped} re-wrapped, ${Math.round(keysPerSecond)} keys/s`),
  });
  console.log(`rotate: done: ${result.rewrapped} data keys re-wrapped under the newest secret (key ${wrapping.wrappingKeyIds[0]}) in this run`);
  if (result.unreadable > 0) {
    console.error(
      `rotate: ${result.unreadable} data keys open under no secret of the ring (e.g. ${result.unreadableSubjects.join(', ')}): the secret that wraps them was removed; put it back in AUTH_SECRETS and rotate again`,
    );
    return false;
  }
  return true;
}

const [command, ...rest] = process.argv.slice(2);
const config = loadConfigOrExit();
await exitUnlessSchemaIsCurrent(config.databaseUrl, (refusal) => console.error(refusal));
const wrapping = createKeyWrapping(config.secrets);
const rotation = new DataKeyRotation(config.databaseUrl, wrapping);
try {
  switch (command) {
    case 'status': {
      const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean' } } });
      const status = await rotation.status();
      if (values.json) console.log(JSON.stringify({ ...status, removable: removable(status) }));
      else for (const line of describeStatus(status)) console.log(line);
      break;
    }
    case 'rotate': {
      const { values } = parseArgs({ args: rest, options: { 'batch-size': { type: 'string' } } });
      const batchSize = Number(values['batch-size'] ?? 500);
      if (!Number.isInteger(batchSize) || batchSize < 1) throw new UsageError('--batch-size must be a positive integer');
      if (!(await rotate(rotation, config.databaseUrl, config.secrets, wrapping, batchSize))) process.exitCode = 1;
      for (const line of describeStatus(await rotation.status())) console.log(line);
      break;
    }
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'no command');
  }
} catch (error) {
  reportUsageError(error, USAGE);
} finally {
  await rotation.close();
}
