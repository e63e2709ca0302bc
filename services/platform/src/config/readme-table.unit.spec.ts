import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configurationTable } from './index.ts';
import { withConfigurationTable } from './readme-table.ts';

describe('the configuration table of docs/configuration.md', () => {
  it('is the one the settings document (npm run docs:config rewrites it)', () => {
    const page = readFileSync(new URL('../../../../docs/configuration.md', import.meta.url), 'utf8');
    expect(withConfigurationTable(page, configurationTable())).toBe(page);
  });
});
