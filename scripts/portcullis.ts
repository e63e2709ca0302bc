/**
 * `portcullis <command> [arguments]`: the image's one entry point (bundled into bin/portcullis.js by
 * scripts/runtime-files.ts). It runs the command's built entry in this same process, so the container's
 * signals reach the service itself and nothing stands between them.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { portcullisCommands } from './service-entries.ts';

/** The installation's root: this file is `bin/portcullis.js` there (or `scripts/portcullis.ts` in a checkout). */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const usage = [
  'usage: portcullis <command> [arguments]',
  ...Object.entries(portcullisCommands).map(([name, { does }]) => `  ${name.padEnd(20)}${does}`),
].join('\n');

const [command, ...rest] = process.argv.slice(2);
if (command === undefined || command === 'help' || command === '--help') {
  (command === undefined ? console.error : console.log)(usage);
  process.exit(command === undefined ? 64 : 0);
}
const known = Object.hasOwn(portcullisCommands, command) ? portcullisCommands[command] : undefined;
if (!known) {
  console.error(`portcullis: no command ${JSON.stringify(command)}\n${usage}`);
  process.exit(64); // EX_USAGE
}
const entry = path.join(root, known.entry);
if (!existsSync(entry)) {
  console.error(`portcullis: ${command} is not in this build (${known.entry} is missing)`);
  process.exit(69); // EX_UNAVAILABLE
}
// The entry reads its arguments where it would, run on its own: process.argv[2] onwards.
process.argv = [process.argv[0]!, entry, ...rest];
await import(pathToFileURL(entry).href);
