import { useId, type ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, ComposedChart, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { MinuteRow } from './overview-rows.ts';

/** A series of the overview: which figure of the row, its name in the legend, and its theme colour. */
export interface SeriesSpec {
  readonly key: keyof MinuteRow;
  readonly name: string;
  readonly color: string;
}

const HEIGHT = 190;
// The theme's variables, so a chart reads in the light and the dark theme alike.
const axis = { stroke: 'var(--muted)', tick: { fill: 'var(--muted)', fontSize: 11 }, tickLine: false } as const;
const tooltipStyle = {
  contentStyle: { background: 'var(--surface)', border: '1px solid var(--border)', borderRadius: 6, color: 'var(--text)' },
  labelStyle: { color: 'var(--muted)' },
  cursor: { fill: 'var(--surface-2)', stroke: 'var(--border)' },
} as const;

/**
 * A chart card: the heading names the chart (and the figure it draws, for a screen reader), the stats
 * under it say the same numbers in words, so nothing is only in the picture.
 */
export function ChartCard({ title, description, stats, children }: { readonly title: string; readonly description: string; readonly stats: ReactNode; readonly children: ReactNode }) {
  const headingId = useId();
  const descriptionId = useId();
  return (
    <div className="card overview-chart">
      <h2 className="card-title" id={headingId}>
        {title}
      </h2>
      <figure className="overview-figure" aria-labelledby={headingId} aria-describedby={descriptionId}>
        <span className="visually-hidden" id={descriptionId}>
          {description}
        </span>
        {children}
      </figure>
      <div className="overview-chart-stats">{stats}</div>
    </div>
  );
}

/** Counts per minute, stacked when they are parts of one whole (sign-in outcomes), side by side otherwise. */
export function CountsChart({ rows, series, stacked = false }: { readonly rows: readonly MinuteRow[]; readonly series: readonly SeriesSpec[]; readonly stacked?: boolean }) {
  return (
    <ResponsiveContainer width="100%" height={HEIGHT}>
      <BarChart data={rows} margin={{ top: 6, right: 8, bottom: 0, left: -18 }}>
        <CartesianGrid stroke="var(--border)" vertical={false} />
        <XAxis dataKey="label" {...axis} minTickGap={24} />
        <YAxis allowDecimals={false} {...axis} width={48} />
        <Tooltip {...tooltipStyle} />
        <Legend wrapperStyle={{ fontSize: 12, color: 'var(--muted)' }} />
        {series.map((spec) => (
          <Bar key={spec.key} dataKey={spec.key} name={spec.name} fill={spec.color} isAnimationActive={false} {...(stacked ? { stackId: 'one' } : {})} />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}

/** Lines for figures that are better read as trends than as bars (refusals, mail outcomes). */
export function TrendChart({ rows, series }: { readonly rows: readonly MinuteRow[]; readonly series: readonly SeriesSpec[] }) {
  return (
    <ResponsiveContainer width="100%" height={HEIGHT}>
      <LineChart data={rows} margin={{ top: 6, right: 8, bottom: 0, left: -18 }}>
        <CartesianGrid stroke="var(--border)" vertical={false} />
        <XAxis dataKey="label" {...axis} minTickGap={24} />
        <YAxis allowDecimals={false} {...axis} width={48} />
        <Tooltip {...tooltipStyle} />
        <Legend wrapperStyle={{ fontSize: 12, color: 'var(--muted)' }} />
        {series.map((spec) => (
          <Line key={spec.key} type="monotone" dataKey={spec.key} name={spec.name} stroke={spec.color} strokeWidth={2} dot={false} isAnimationActive={false} />
        ))}
      </LineChart>
    </ResponsiveContainer>
  );
}

/**
 * get-session: requests per minute as bars on the left axis, the p99 in milliseconds as a line on the right,
 * dotted so a lone busy minute between idle ones still shows its latency.
 */
export function GetSessionChart({ rows }: { readonly rows: readonly MinuteRow[] }) {
  return (
    <ResponsiveContainer width="100%" height={HEIGHT}>
      <ComposedChart data={rows} margin={{ top: 6, right: 0, bottom: 0, left: -18 }}>
        <CartesianGrid stroke="var(--border)" vertical={false} />
        <XAxis dataKey="label" {...axis} minTickGap={24} />
        <YAxis yAxisId="requests" allowDecimals={false} {...axis} width={48} />
        <YAxis yAxisId="latency" orientation="right" unit=" ms" {...axis} width={64} />
        <Tooltip {...tooltipStyle} />
        <Legend wrapperStyle={{ fontSize: 12, color: 'var(--muted)' }} />
        <Bar yAxisId="requests" dataKey="getSessions" name="requests / min" fill="var(--chart-1)" isAnimationActive={false} />
        <Line yAxisId="latency" type="monotone" dataKey="getSessionP99Ms" name="p99 (ms)" stroke="var(--chart-3)" strokeWidth={2} dot={{ r: 2.5, fill: 'var(--chart-3)' }} connectNulls={false} isAnimationActive={false} />
      </ComposedChart>
    </ResponsiveContainer>
  );
}
