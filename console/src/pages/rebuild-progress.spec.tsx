// @vitest-environment happy-dom
import type { ProjectionRebuild } from '@portcullis/contracts/api/projection-ops';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { RebuildProgress } from './projections.tsx';
import { rebuildEnded, rebuildPercent } from './rebuild-progress.ts';

function rebuild(overrides: Partial<ProjectionRebuild>): ProjectionRebuild {
  return {
    id: '6f1c1f8e-4f4e-4a51-9d52-0c2b8f1e7a10',
    projection: 'identity',
    status: 'running',
    requestedAt: '2026-11-28T10:00:00.000Z',
    requestedBy: null,
    startedAt: '2026-11-28T10:00:01.000Z',
    finishedAt: null,
    position: 0,
    head: null,
    percent: null,
    worker: 'host/123',
    error: null,
    ...overrides,
  };
}

afterEach(cleanup);

describe('a rebuild\'s progress', () => {
  it('takes the server\'s percent when it gives one, clamped', () => {
    expect(rebuildPercent(rebuild({ percent: 42.5, position: 1, head: 1000 }))).toBe(42.5);
    expect(rebuildPercent(rebuild({ percent: 140 }))).toBe(100);
  });

  it('works the percent out from position over head otherwise', () => {
    expect(rebuildPercent(rebuild({ position: 250, head: 1000 }))).toBe(25);
    expect(rebuildPercent(rebuild({ position: 1200, head: 1000 }))).toBe(100);
  });

  it('has none before a projector claimed it, and is whole once it succeeded', () => {
    expect(rebuildPercent(rebuild({ status: 'requested', startedAt: null, worker: null }))).toBeNull();
    expect(rebuildPercent(rebuild({ status: 'succeeded', position: 10, head: 90 }))).toBe(100);
    expect(rebuildPercent(rebuild({ status: 'running', position: 0, head: 0 }))).toBe(100);
  });

  it('ends when it succeeded or failed', () => {
    expect(rebuildEnded('requested')).toBe(false);
    expect(rebuildEnded('running')).toBe(false);
    expect(rebuildEnded('succeeded')).toBe(true);
    expect(rebuildEnded('failed')).toBe(true);
  });

  it('shows position, head and percent as a progress bar, and the error of a failed one', () => {
    render(<RebuildProgress rebuild={rebuild({ position: 300, head: 1200 })} />);
    const bar = screen.getByRole('progressbar', { name: 'Rebuild of identity' });
    expect(bar.getAttribute('value')).toBe('25');
    expect(screen.getByText('25.0 %')).toBeTruthy();
    expect(screen.getByText('position 300 / head 1,200')).toBeTruthy();
    cleanup();
    render(<RebuildProgress rebuild={rebuild({ status: 'failed', error: 'the projector died', position: 3, head: 9 })} />);
    expect(screen.getByRole('alert').textContent).toBe('the projector died');
    expect(screen.getByText('failed')).toBeTruthy();
  });
});
