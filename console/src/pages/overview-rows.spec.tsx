// @vitest-environment happy-dom
import type { OpsOverview } from '@portcullis/contracts/api/telemetry';
import { describe, expect, it } from 'vitest';
import { formatSeconds, lagTone, minuteRows, tally, worstP99 } from './overview-rows.ts';

function series(overrides: Partial<OpsOverview['series']> = {}): OpsOverview['series'] {
  return {
    minutes: ['2026-11-28T10:00:00.000Z', '2026-11-28T10:01:00.000Z', '2026-11-28T10:02:00.000Z'],
    signIns: { success: [3, 0, 5], failure: [1, 2, 0], locked: [0, 0, 1] },
    signUps: [0, 1, 0],
    getSession: { requests: [10, 0, 7], p99Ms: [4.5, null, 12] },
    rateLimited: [0, 0, 2],
    captchaRefused: [1, 0, 0],
    mail: { queued: [1, 1, 0], sent: [0, 2, 0], dead: [0, 0, 1] },
    ...overrides,
  };
}

describe('the overview answer as chart rows', () => {
  it('turns the column per figure into one row per minute, in order', () => {
    const rows = minuteRows(series());
    expect(rows).toHaveLength(3);
    expect(rows.map((row) => row.at)).toEqual(series().minutes);
    expect(rows[0]).toMatchObject({ signInSuccess: 3, signInFailure: 1, signInLocked: 0, getSessions: 10, getSessionP99Ms: 4.5, captchaRefused: 1, mailQueued: 1 });
    expect(rows[2]).toMatchObject({ signInSuccess: 5, signInLocked: 1, rateLimited: 2, mailDead: 1, getSessionP99Ms: 12 });
    expect(rows[1]!.label).toMatch(/\d/);
  });

  it('keeps a minute without get-session as a gap, not a zero latency', () => {
    expect(minuteRows(series())[1]!.getSessionP99Ms).toBeNull();
  });

  it('reads a short series as zeros rather than shifting it', () => {
    const rows = minuteRows(series({ signUps: [4] }));
    expect(rows.map((row) => row.signUps)).toEqual([4, 0, 0]);
  });

  it('says each figure for this minute and the hour, and the worst p99', () => {
    const rows = minuteRows(series());
    expect(tally(rows, 'signInSuccess')).toEqual({ thisMinute: 5, lastHour: 8 });
    expect(tally(rows, 'signInFailure')).toEqual({ thisMinute: 0, lastHour: 3 });
    expect(tally([], 'signUps')).toEqual({ thisMinute: 0, lastHour: 0 });
    expect(worstP99(rows)).toBe(12);
    expect(worstP99(minuteRows(series({ getSession: { requests: [0, 0, 0], p99Ms: [null, null, null] } })))).toBeNull();
  });

  it('grades projection lag and words seconds', () => {
    expect(lagTone(null, null)).toBe('neutral');
    expect(lagTone(0, 0)).toBe('ok');
    expect(lagTone(40, 2)).toBe('ok');
    expect(lagTone(40, 20)).toBe('warn');
    expect(lagTone(40, 600)).toBe('bad');
    expect(formatSeconds(null)).toBe('—');
    expect(formatSeconds(3.25)).toBe('3.3 s');
    expect(formatSeconds(125)).toBe('2 min');
    expect(formatSeconds(7300)).toBe('2 h 1 min');
  });
});
