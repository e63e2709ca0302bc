import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainVerification } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { waitFor } from '../../../../tests/support/processes.ts';

const KEY = 'chain-check-key-0123456789abcdef0123456789';

interface Latest {
  latest: ChainVerification | null;
  lastFinished: ChainVerification | null;
}

/**
 * The hash-chain check over HTTP: started in the api's background, one at a time across processes, each
 * recorded with its time, result, position and progress; a check whose process died is failed, not left
 * running for ever.
 */
describe('hash-chain check routes', () => {
  let api: InProcessApi;
  const op = { 'x-api-key': KEY };

  const verification = async (): Promise<Latest> => (await api.app.inject({ method: 'GET', url: '/ops/audit/verification', headers: op })).json<Latest>();
  const verify = async () => {
    const answer = await api.app.inject({ method: 'POST', url: '/ops/audit/verify', headers: op });
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json<{ verification: ChainVerification; started: boolean }>();
  };
  const finished = async (id: string): Promise<ChainVerification> => {
    let seen: Latest | undefined;
    await waitFor(async () => (seen = await verification()).lastFinished?.id === id, { timeoutMs: 20_000, message: `check ${id} to finish` });
    return seen!.lastFinished!;
  };

  beforeAll(async () => {
    api = await startInProcessApi('chain_check_routes', { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: KEY, NODE_ENV: 'development' });
    for (const name of ['one', 'two', 'three']) {
      const signedUp = await api.app.inject({ method: 'POST', url: '/api/auth/sign-up/email', payload: { email: `${name}@chain.test`, password: 'a long enough password', name } });
      expect(signedUp.statusCode, signedUp.body).toBe(200);
    }
  });

  afterAll(async () => {
    await api?.close();
  });

  it('has nothing to answer before the first check, then the check with its result and the position it reached', async () => {
    expect(await verification()).toEqual({ latest: null, lastFinished: null });
    const head = Number(await api.db.pool.oneFirst(sql.unsafe`SELECT position FROM event_log_head`));
    const started = await verify();
    expect(started).toMatchObject({ started: true, verification: { status: 'running', source: 'api', finishedAt: null, failure: null } });
    const done = await finished(started.verification.id);
    expect(done).toMatchObject({ status: 'intact', percent: 100, failure: null, error: null });
    expect(done.verifiedTo).toBeGreaterThanOrEqual(head);
    expect(done.checked).toBe(done.verifiedTo);
    expect(Date.parse(done.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(done.startedAt));
    expect((await verification()).latest).toEqual(done);
  });

  it('answers the check under way elsewhere instead of starting a second, and fails one whose process stopped', async () => {
    // Another process's check, alive (it wrote its progress just now).
    const elsewhere = randomUUID();
    await api.db.pool.query(sql.unsafe`INSERT INTO chain_verifications (id, source, head, checked, verified_to) VALUES (${elsewhere}, 'cli', 100, 40, 40)`);
    const answered = await verify();
    expect(answered).toMatchObject({ started: false, verification: { id: elsewhere, status: 'running', source: 'cli', checked: 40, percent: 40 } });
    expect((await verification()).latest).toMatchObject({ id: elsewhere, status: 'running' });

    // Its process went silent a minute ago: it is over, and the next request starts a check.
    await api.db.pool.query(sql.unsafe`UPDATE chain_verifications SET progressed_at = now() - interval '1 minute' WHERE id = ${elsewhere}`);
    const next = await verify();
    expect(next.started).toBe(true);
    expect(next.verification.id).not.toBe(elsewhere);
    const abandoned = (await api.db.pool.one(sql.unsafe`SELECT status, error, finished_at IS NOT NULL AS finished FROM chain_verifications WHERE id = ${elsewhere}`)) as Record<string, unknown>;
    expect(abandoned).toEqual({ status: 'failed', error: 'the process running the check stopped', finished: true });
    expect(await finished(next.verification.id)).toMatchObject({ status: 'intact' });
  });

  it('finds a changed event: the check is broken at its position', async () => {
    // The log refuses updates (a trigger); whoever tampers with it disables that first.
    await api.db.pool.query(sql.unsafe`ALTER TABLE events DISABLE TRIGGER events_append_only`);
    await api.db.pool.query(sql.unsafe`UPDATE events SET data = jsonb_set(data, '{name}', '"tampered"') WHERE position = 2`);
    await api.db.pool.query(sql.unsafe`ALTER TABLE events ENABLE TRIGGER events_append_only`);
    const started = await verify();
    expect(await finished(started.verification.id)).toMatchObject({ status: 'broken', verifiedTo: 1, failure: { position: 2, problem: 'altered' } });
  });

  it('answers operators only', async () => {
    for (const [method, url] of [['GET', '/ops/audit/verification'], ['POST', '/ops/audit/verify']] as const) {
      expect((await api.app.inject({ method, url })).statusCode, url).toBe(401);
    }
  });
});
