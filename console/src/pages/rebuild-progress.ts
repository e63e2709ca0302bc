import type { ProjectionRebuild, ProjectionRebuildStatus } from '@portcullis/contracts/api/projection-ops';

/** A rebuild that ended moves no more: its progress is no longer polled. */
export function rebuildEnded(status: ProjectionRebuildStatus): boolean {
  return status === 'succeeded' || status === 'failed';
}

/**
 * How far a rebuild is, 0 to 100: the server's own figure when it gives one, else the position over the
 * head it was measured against; a finished rebuild is whole, one not claimed yet has none (null).
 */
export function rebuildPercent(rebuild: Pick<ProjectionRebuild, 'status' | 'position' | 'head' | 'percent'>): number | null {
  if (rebuild.status === 'succeeded') return 100;
  if (rebuild.percent !== null) return clamp(rebuild.percent);
  if (rebuild.head === null) return null;
  if (rebuild.head <= 0) return rebuild.status === 'running' ? 100 : null;
  return clamp((rebuild.position / rebuild.head) * 100);
}

function clamp(percent: number): number {
  return Math.min(100, Math.max(0, percent));
}

export function rebuildTone(status: ProjectionRebuildStatus): 'ok' | 'bad' | 'info' | 'neutral' {
  return status === 'succeeded' ? 'ok' : status === 'failed' ? 'bad' : status === 'running' ? 'info' : 'neutral';
}
