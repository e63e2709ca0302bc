import { describe, expect, it } from 'vitest';
import { projectionNames } from '@portcullis/contracts';
import { ProjectionPositions } from './projection-positions.ts';

const LONG = 60_000;

describe('ProjectionPositions', () => {
  it('lets a write waiting for a read model that is lost wait for the others only', async () => {
    const positions = new ProjectionPositions();
    positions.advance(projectionNames.sessions, 10);
    const waiting = positions.waitFor(10, [projectionNames.sessions, projectionNames.sessionCache], LONG);
    positions.forget(projectionNames.sessionCache);
    await expect(waiting).resolves.toBe(true);
    positions.close();
  });

  it('keeps it waiting for the others until they get there', async () => {
    const positions = new ProjectionPositions();
    const waiting = positions.waitFor(10, [projectionNames.sessions, projectionNames.sessionCache], LONG);
    let answered: boolean | null = null;
    void waiting.then((caughtUp) => (answered = caughtUp));
    positions.forget(projectionNames.sessionCache);
    positions.advance(projectionNames.sessions, 9);
    await Promise.resolve();
    expect(answered).toBeNull();
    positions.advance(projectionNames.sessions, 10);
    await expect(waiting).resolves.toBe(true);
    positions.close();
  });

  it('leaves writes that never waited for it as they were', async () => {
    const positions = new ProjectionPositions();
    const waiting = positions.waitFor(5, [projectionNames.identity], LONG);
    positions.forget(projectionNames.sessionCache);
    positions.close();
    await expect(waiting).resolves.toBe(false);
  });
});
