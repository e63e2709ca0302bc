import { describe, expect, it } from 'vitest';
import { projectionNames, projectionsConcernedWith, type ProjectionName } from './projections.ts';

const all = Object.values(projectionNames) as ProjectionName[];

describe('projectionsConcernedWith: what an append must wait for', () => {
  it('a new session: the session table and the session cache, not users or organizations', () => {
    expect(projectionsConcernedWith(['session.created.v1'], all).sort()).toEqual(['session-cache', 'sessions']);
  });

  it('a deleted user: every read model', () => {
    expect(projectionsConcernedWith(['user.deleted.v1'], all).sort()).toEqual([...all].sort());
  });

  it('only those the api reads from: without Redis there is no session cache to wait for', () => {
    expect(projectionsConcernedWith(['session.created.v1'], ['identity', 'sessions', 'organizations'])).toEqual(['sessions']);
  });

  it('a failed sign-in, which no read model is built from: nothing', () => {
    expect(projectionsConcernedWith(['credentials.sign_in_failed.v1', 'mail.job_queued.v1'], all)).toEqual([]);
  });
});
