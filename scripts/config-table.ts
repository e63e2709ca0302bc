/**
 * `npm run docs:config`: writes the README's configuration table from the settings' own documentation
 * (services/platform/src/config/), between its two markers. A unit spec fails while they differ.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configurationTable } from '../services/platform/src/config/index.ts';
import { withConfigurationTable } from '../services/platform/src/config/readme-table.ts';

const readme = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../README.md');
const before = await readFile(readme, 'utf8');
const after = withConfigurationTable(before, configurationTable());
await writeFile(readme, after);
console.log(after === before ? 'README configuration table already current' : 'README configuration table rewritten');
