/**
 * `npm run events:publish`: records the schema of every event version not yet in
 * `contracts/src/events/published-schemas.json`. It never rewrites a recorded one: a published version
 * keeps its shape for ever, and the test that compares them says so when code changes one.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventSchemasByType } from '../contracts/src/events/published.ts';

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../contracts/src/events/published-schemas.json');
const recorded = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as Record<string, unknown>;
const added = Object.entries(eventSchemasByType()).filter(([type]) => !(type in recorded));
for (const [type, schema] of added) recorded[type] = schema;
const sorted = Object.fromEntries(Object.entries(recorded).sort(([a], [b]) => (a < b ? -1 : 1)));
await writeFile(file, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(added.length === 0 ? 'no new event versions' : `recorded ${added.map(([type]) => type).join(', ')}`);
