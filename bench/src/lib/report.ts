export interface Row {
  readonly scenario: string;
  readonly connections?: number;
  /** Successful requests (or argon2 operations) per second. */
  readonly rate: number;
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  /** The rate as a fraction of the row's reference. */
  readonly ratio?: number;
  readonly ratioOf?: string;
  readonly goal?: { readonly passed: boolean; readonly text: string };
  readonly failed?: number;
  readonly cpuMsPerOp?: number | null;
  readonly pgTransactionsPerOp?: number | null;
}

const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
/** Operations per second: two significant digits below 1, one decimal below 100. */
export const formatRate = (n: number): string =>
  Number.isNaN(n) ? '' : n === 0 ? '0' : n < 1 ? n.toPrecision(2) : n < 100 ? n.toFixed(1) : fmtInt(n);
/** An exact latency: one decimal below 10 ms. */
export const formatMs = (n: number): string => (Number.isNaN(n) ? '' : n < 10 ? n.toFixed(1) : fmtInt(n));
const fmtRate = formatRate;
// autocannon's histogram keeps whole milliseconds (truncated), so 0 means "under 1 ms".
const fmtMs = (n: number | undefined): string => (n === undefined ? '' : n === 0 ? '<1' : fmtInt(n));
const fmtPct = (n: number | undefined): string => (n === undefined ? '' : `${(n * 100).toFixed(1)}%`);
const fmtCost = (n: number | null | undefined): string => (n === undefined || n === null ? '' : n < 10 ? n.toFixed(2) : n.toFixed(1));

export function renderTable(rows: readonly Row[]): string {
  const header = ['scenario', 'conns', 'ops/s', 'p50 ms', 'p99 ms', 'ratio', 'of', 'goal', 'failed', 'cpu ms/op', 'pg tx/op'];
  const cells = rows.map((r) => [
    r.scenario,
    r.connections === undefined ? '' : String(r.connections),
    fmtRate(r.rate),
    fmtMs(r.p50Ms),
    fmtMs(r.p99Ms),
    fmtPct(r.ratio),
    r.ratioOf ?? '',
    r.goal ? `${r.goal.passed ? 'PASS' : 'MISS'} (${r.goal.text})` : '',
    r.failed === undefined ? '' : String(r.failed),
    fmtCost(r.cpuMsPerOp),
    fmtCost(r.pgTransactionsPerOp),
  ]);
  return markdownTable(header, cells, new Set([1, 2, 3, 4, 5, 8, 9, 10]));
}

/** A Markdown table padded to line up in a terminal too; `numeric` columns are right-aligned. */
export function markdownTable(header: readonly string[], cells: readonly (readonly string[])[], numeric: ReadonlySet<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (values: readonly string[]): string =>
    `| ${header.map((_, i) => (numeric.has(i) ? (values[i] ?? '').padStart(widths[i]!) : (values[i] ?? '').padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (numeric.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(header), rule, ...cells.map(line)].join('\n');
}
