/**
 * `npm run docs:config`: writes docs/configuration.md's table from the settings' own documentation
 * (services/platform/src/config/), between its two markers. A unit spec fails while they differ.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configurationTable } from '../services/platform/src/config/index.ts';
import { withConfigurationTable } from '../services/platform/src/config/readme-table.ts';

const page = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/configuration.md');
const before = await readFile(page, 'utf8');
const after = withConfigurationTable(before, configurationTable());
await writeFile(page, after);
console.log(after === before ? 'configuration table already current' : 'configuration table rewritten');
