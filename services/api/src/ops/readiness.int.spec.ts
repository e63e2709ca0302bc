import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { waitFor } from '../../../../tests/support/processes.ts';

interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean; degraded?: boolean; detail?: string }>;
}

/** Readiness names what failed: the log unreadable is the log's engine's check, not a guess at the projections. */
describe('GET /readyz with the log unreadable', () => {
  let api: InProcessApi;
  let logAway = false;

  beforeAll(async () => {
    api = await startInProcessApi('readiness', {}, {
      storeSeenByApi: (store) =>
        new Proxy(store, {
          get: (target, property, receiver) =>
            property === 'headPosition' && logAway ? () => Promise.reject(new Error('connection refused')) : (Reflect.get(target, property, receiver) as unknown),
        }),
    });
  });

  afterAll(async () => {
    await api?.close();
  });

  const readiness = async (): Promise<{ status: number; body: Readiness }> => {
    const response = await api.app.inject({ url: '/readyz' });
    return { status: response.statusCode, body: response.json<Readiness>() };
  };

  it('is ready once the read models follow the log, and unready, naming the log\'s engine, when the log cannot be read', async () => {
    await waitFor(async () => (await readiness()).status === 200, { timeoutMs: 20_000, message: 'the api to be ready' });
    expect((await readiness()).body.checks).toMatchObject({ postgres: { ok: true }, projections: { ok: true } });

    logAway = true;
    const { status, body } = await readiness();
    expect(status).toBe(503);
    expect(body.status).toBe('not_ready');
    // Postgres holds the log here, so its check fails, whatever the checkpoints' query answered.
    expect(body.checks.postgres).toEqual({ ok: false, detail: 'connection refused' });
    // Without the log's head there is no lag to judge.
    expect(body.checks.projections).toBeUndefined();
    logAway = false;
    expect((await readiness()).status).toBe(200);
  });
});
