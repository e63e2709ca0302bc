import type { OpsOverview } from '@portcullis/contracts/api/telemetry';

/** One minute of the overview as the charts draw it: every series side by side under the minute's label. */
export interface MinuteRow {
  readonly at: string;
  /** The minute as a clock reads it (local time), for the x axis. */
  readonly label: string;
  readonly signInSuccess: number;
  readonly signInFailure: number;
  readonly signInLocked: number;
  readonly signUps: number;
  readonly getSessions: number;
  /** null for a minute with no get-session: the line has a gap there rather than a fake zero. */
  readonly getSessionP99Ms: number | null;
  readonly rateLimited: number;
  readonly captchaRefused: number;
  readonly mailQueued: number;
  readonly mailSent: number;
  readonly mailDead: number;
}

function clockLabel(at: string): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return at;
  return date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/**
 * The answer's column-wise series (one array per figure) turned into the row per minute recharts reads;
 * a series shorter than the minutes (an older server) reads as zero, never as a shifted column.
 */
export function minuteRows(series: OpsOverview['series']): MinuteRow[] {
  const at = (values: readonly number[], i: number) => values[i] ?? 0;
  return series.minutes.map((minute, i) => ({
    at: minute,
    label: clockLabel(minute),
    signInSuccess: at(series.signIns.success, i),
    signInFailure: at(series.signIns.failure, i),
    signInLocked: at(series.signIns.locked, i),
    signUps: at(series.signUps, i),
    getSessions: at(series.getSession.requests, i),
    getSessionP99Ms: series.getSession.p99Ms[i] ?? null,
    rateLimited: at(series.rateLimited, i),
    captchaRefused: at(series.captchaRefused, i),
    mailQueued: at(series.mail.queued, i),
    mailSent: at(series.mail.sent, i),
    mailDead: at(series.mail.dead, i),
  }));
}

type Counted = Exclude<keyof MinuteRow, 'at' | 'label' | 'getSessionP99Ms'>;

/** A figure as the stats beside a chart say it: this minute, and the whole hour the chart covers. */
export interface Tally {
  readonly thisMinute: number;
  readonly lastHour: number;
}

export function tally(rows: readonly MinuteRow[], key: Counted): Tally {
  return { thisMinute: rows.at(-1)?.[key] ?? 0, lastHour: rows.reduce((sum, row) => sum + row[key], 0) };
}

/** The worst get-session p99 of the hour (null when nothing asked), for the stat beside its chart. */
export function worstP99(rows: readonly MinuteRow[]): number | null {
  const values = rows.map((row) => row.getSessionP99Ms).filter((value): value is number => value !== null);
  return values.length === 0 ? null : Math.max(...values);
}

/** How worrying a projection's lag is: caught up, trailing by a little, or stuck behind. */
export function lagTone(lag: number | null, lagSeconds: number | null): 'ok' | 'warn' | 'bad' | 'neutral' {
  if (lag === null) return 'neutral';
  if (lag === 0 || (lagSeconds !== null && lagSeconds < 5)) return 'ok';
  if (lagSeconds !== null && lagSeconds >= 60) return 'bad';
  return 'warn';
}

/** Seconds as an operator reads an age: 42 s, 3 min, 2 h. */
export function formatSeconds(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const span = Math.max(0, seconds);
  if (span < 60) return `${span < 10 ? span.toFixed(1) : Math.round(span)} s`;
  if (span < 3600) return `${Math.floor(span / 60)} min`;
  if (span < 86_400) return `${Math.floor(span / 3600)} h ${Math.floor((span % 3600) / 60)} min`;
  return `${Math.floor(span / 86_400)} d`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}
