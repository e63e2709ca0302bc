import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configurationTable } from './index.ts';
import { withConfigurationTable } from './readme-table.ts';

describe("the README's configuration table", () => {
  it('is the one the settings document (npm run docs:config rewrites it)', () => {
    const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
    expect(withConfigurationTable(readme, configurationTable())).toBe(readme);
  });
});
