import { describe, expect, it } from 'vitest';
import { projectionNames, projectionsToAwait, type ProjectionName } from './projections.ts';

const all = Object.values(projectionNames) as ProjectionName[];
const withoutRedis: ProjectionName[] = ['identity', 'sessions', 'organizations'];

describe('projectionsToAwait: what an append must wait for', () => {
  it('a new session beside the session cache: the cache alone (the session table may show it late)', () => {
    expect(projectionsToAwait(['session.created.v2'], all)).toEqual(['session-cache']);
  });

  it('a sign-up: the user table and the cache, not the session table', () => {
    expect(projectionsToAwait(['user.registered.v1', 'user.credential_account_created.v2', 'session.created.v2'], all).sort()).toEqual(['identity', 'session-cache']);
  });

  it('a new session without Redis: the session table, which get-session then reads', () => {
    expect(projectionsToAwait(['session.created.v2'], withoutRedis)).toEqual(['sessions']);
  });

  it('a revocation: the session table as well as the cache, whatever came with it', () => {
    expect(projectionsToAwait(['session.revoked.v2'], all).sort()).toEqual(['session-cache', 'sessions']);
    expect(projectionsToAwait(['session.created.v2', 'session.revoked.v2'], all).sort()).toEqual(['session-cache', 'sessions']);
  });

  it('a deleted user: every read model', () => {
    expect(projectionsToAwait(['user.deleted.v1'], all).sort()).toEqual([...all].sort());
  });

  it('a failed sign-in, which no read model is built from: nothing', () => {
    expect(projectionsToAwait(['credentials.sign_in_failed.v1', 'mail.job_queued.v1'], all)).toEqual([]);
  });
});
