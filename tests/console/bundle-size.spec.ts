import { describe, expect, it } from 'vitest';
import { buildConsole, firstPageGzipBytes } from '../../scripts/build-console.ts';

/** The budget for what the first page costs over the wire, gzipped. */
const FIRST_PAGE_BUDGET_BYTES = 300 * 1024;

describe('the console\'s first page', () => {
  it(`stays under ${FIRST_PAGE_BUDGET_BYTES / 1024} kB gzipped, pages (and the charts) loaded when visited`, async () => {
    // Built by the test setup already, unless the sources changed since: then this builds them.
    await buildConsole({ quiet: true });
    const firstPage = await firstPageGzipBytes();
    const figure = `first page: ${(firstPage.bytes / 1024).toFixed(1)} kB gzipped over ${firstPage.files.join(', ')}`;
    console.log(`[console] ${figure}`);
    expect(firstPage.bytes, figure).toBeLessThanOrEqual(FIRST_PAGE_BUDGET_BYTES);
    // The pages are lazy chunks: the overview's, which carries recharts, is not in what every visit loads.
    expect(firstPage.files.filter((file) => /(^|\/)(overview|users|audit|mail|projections)-/.test(file)), figure).toEqual([]);
  }, 180_000);
});
