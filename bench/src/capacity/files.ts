import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { costsFileSchema, type CostsFile } from '../costs/costs-file.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export const costsFilePath = path.join(repoRoot, 'bench', 'results', 'costs.json');
export const capacityPagePath = path.join(repoRoot, 'docs', 'capacity.md');

export async function readCostsFile(): Promise<CostsFile> {
  return costsFileSchema.parse(JSON.parse(await readFile(costsFilePath, 'utf8')));
}
