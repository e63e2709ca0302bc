/**
 * `npm run capacity`: writes docs/capacity.md from bench/results/costs.json (`BENCH_ONLY=costs npm run bench`
 * measures it). A unit spec fails while the committed page is not what this writes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { capacityPage } from './capacity.ts';
import { capacityPagePath, readCostsFile } from './files.ts';

const before = await readFile(capacityPagePath, 'utf8').catch(() => '');
const after = capacityPage(await readCostsFile());
await writeFile(capacityPagePath, after);
console.log(after === before ? 'docs/capacity.md already current' : 'docs/capacity.md rewritten');
