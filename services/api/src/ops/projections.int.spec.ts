import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectionRebuild, ProjectionStatus } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { waitFor } from '../../../../tests/support/processes.ts';

const KEY = 'projections-key-0123456789abcdef0123456789';

/**
 * The projections as operators see them over HTTP, on an api whose projections run in the same process (so
 * their locks are held here) and with no projector taking rebuild requests: what the api records is what
 * these specs see. Running a rebuild is the projector's (rebuild-requests.int.spec.ts, and the system test).
 */
describe('projection routes', () => {
  let api: InProcessApi;
  const op = { 'x-api-key': KEY };

  const get = async <T>(url: string) => {
    const answer = await api.app.inject({ method: 'GET', url, headers: op });
    return { status: answer.statusCode, json: answer.json<T>() };
  };
  const rebuild = async (name: string) => {
    const answer = await api.app.inject({ method: 'POST', url: `/ops/projections/${encodeURIComponent(name)}/rebuild`, headers: op });
    return { status: answer.statusCode, json: answer.json<{ rebuild: ProjectionRebuild; started: boolean; code?: string }>() };
  };

  beforeAll(async () => {
    api = await startInProcessApi('projection_routes', { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: KEY, NODE_ENV: 'development' });
    const signedUp = await api.app.inject({ method: 'POST', url: '/api/auth/sign-up/email', payload: { email: 'projected@example.test', password: 'a long enough password', name: 'Projected' } });
    expect(signedUp.statusCode, signedUp.body).toBe(200);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('lists every projection with its checkpoint, the head, its lag and the process holding its lock', async () => {
    const head = Number(await api.db.pool.oneFirst(sql.unsafe`SELECT position FROM event_log_head`));
    let answer: { head: number; projections: ProjectionStatus[] } | undefined;
    await waitFor(
      async () => {
        answer = (await get<{ head: number; projections: ProjectionStatus[] }>('/ops/projections')).json;
        return ['identity', 'sessions', 'organizations'].every((name) => answer!.projections.find((p) => p.name === name)?.checkpoint === answer!.head);
      },
      { timeoutMs: 10_000, message: 'the read models to reach the head' },
    );
    expect(answer!.head).toBeGreaterThanOrEqual(head);
    const byName = new Map(answer!.projections.map((p) => [p.name, p]));
    // Without Redis there is no session cache; without Kafka the mailer follows the log.
    expect([...byName.keys()]).toEqual(expect.arrayContaining(['identity', 'sessions', 'organizations', 'audit-index', 'erasure', 'mail-bus:portcullis-mailer', 'mail-retries:portcullis-mailer']));
    expect(byName.has('session-cache')).toBe(false);
    const identity = byName.get('identity')!;
    expect(identity).toMatchObject({ store: 'postgres', lagEvents: 0, lagSeconds: 0, rebuildable: true, rebuild: null, detail: null });
    // This process's runner holds it, on a connection of its own.
    const backends = (await api.db.pool.anyFirst(sql.unsafe`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)) as readonly number[];
    expect(backends).toContain(identity.holder?.pid);
    expect(identity.holder?.clientAddress === null || typeof identity.holder?.clientAddress === 'string').toBe(true);
    expect(byName.get('erasure')).toMatchObject({ rebuildable: false });
    // No mailer runs here: its followers have no checkpoint and no holder.
    expect(byName.get('mail-bus:portcullis-mailer')).toMatchObject({ checkpoint: null, holder: null, rebuildable: false, detail: 'not started' });
  });

  it('counts the lag of a projection behind the log in events and in seconds since the first it has not applied', async () => {
    const head = Number(await api.db.pool.oneFirst(sql.unsafe`SELECT position FROM event_log_head`));
    // A projection no runner holds, its checkpoint at the log's first event.
    await api.db.pool.query(sql.unsafe`INSERT INTO projection_checkpoints (name, position) VALUES ('spec-behind', 1)`);
    const age = Number(await api.db.pool.oneFirst(sql.unsafe`SELECT extract(epoch FROM now() - recorded_at) FROM events WHERE position = 2`));
    const behind = (await get<{ projections: ProjectionStatus[] }>('/ops/projections')).json.projections.find((p) => p.name === 'spec-behind')!;
    expect(behind).toMatchObject({ checkpoint: 1, holder: null, rebuildable: false });
    expect(behind.lagEvents).toBeGreaterThanOrEqual(head - 1);
    expect(behind.lagSeconds).toBeGreaterThanOrEqual(age);
  });

  it('records one rebuild per projection under way, answers it to a second request, and starts anew once it ended', async () => {
    const first = await rebuild('identity');
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ started: true, rebuild: { projection: 'identity', status: 'requested', requestedBy: null, percent: 0, position: 0, startedAt: null, worker: null } });
    const again = await rebuild('identity');
    expect(again.json).toMatchObject({ started: false, rebuild: { id: first.json.rebuild.id, status: 'requested' } });
    expect((await get<ProjectionRebuild>(`/ops/projections/rebuilds/${first.json.rebuild.id}`)).json).toEqual(first.json.rebuild);
    const listed = (await get<{ projections: ProjectionStatus[] }>('/ops/projections')).json.projections.find((p) => p.name === 'identity')!;
    expect(listed.rebuild).toEqual(first.json.rebuild);

    // As a projector would end it.
    await api.db.pool.query(sql.unsafe`UPDATE projection_rebuilds SET status = 'failed', error = 'spec', finished_at = now() WHERE id = ${first.json.rebuild.id}`);
    const next = await rebuild('identity');
    expect(next.json).toMatchObject({ started: true, rebuild: { status: 'requested' } });
    expect(next.json.rebuild.id).not.toBe(first.json.rebuild.id);
    // Another projection's rebuild is its own.
    expect((await rebuild('organizations')).json.started).toBe(true);
  });

  it('refuses to rebuild what owns no read model, and knows no projection or rebuild it was not told of', async () => {
    for (const name of ['erasure', 'mail-bus:portcullis-mailer', 'mail-retries:portcullis-mailer']) {
      const refused = await rebuild(name);
      expect({ status: refused.status, code: refused.json.code }, name).toEqual({ status: 400, code: 'PROJECTION_CANNOT_BE_REBUILT' });
    }
    // The session cache is not deployed without Redis.
    for (const name of ['nope', 'session-cache', 'spec-behind']) {
      const unknown = await rebuild(name);
      expect({ status: unknown.status, code: unknown.json.code }, name).toEqual({ status: 404, code: 'PROJECTION_NOT_FOUND' });
    }
    const missing = await get<{ code: string }>(`/ops/projections/rebuilds/${randomUUID()}`);
    expect({ status: missing.status, code: missing.json.code }).toEqual({ status: 404, code: 'PROJECTION_REBUILD_NOT_FOUND' });
    expect((await get(`/ops/projections/rebuilds/not-an-id`)).status).toBe(400);
  });

  it('answers operators only', async () => {
    for (const [method, url] of [['GET', '/ops/projections'], ['POST', '/ops/projections/identity/rebuild'], ['GET', `/ops/projections/rebuilds/${randomUUID()}`]] as const) {
      const refused = await api.app.inject({ method, url });
      expect({ status: refused.statusCode, code: refused.json<{ code: string }>().code }, url).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    }
  });
});
