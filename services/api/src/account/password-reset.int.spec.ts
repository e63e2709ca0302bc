import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

/**
 * A newer reset link ends the older ones, decided on the user's `password-reset-<userId>` stream: requests
 * racing each other on two api processes must still leave exactly one live link. In-process on real Postgres.
 */
describe('password reset links: only the latest lives, under concurrent requests', () => {
  let api: InProcessApi;

  beforeAll(async () => {
    api = await startInProcessApi('password_reset_links', {
      BASE_URL: 'http://localhost:3000',
      AUTH_SECRET: 'reset-links-secret-0123456789abcdefgh',
      AUTH_RATE_LIMIT_ENABLED: 'false',
    });
  });

  afterAll(async () => {
    await api?.close();
  });

  it('leaves one live link of many requested at once through two processes', async () => {
    const email = 'racing-resets@example.com';
    const signedUp = await api.app.inject({
      method: 'POST',
      url: '/api/auth/sign-up/email',
      headers: { origin: 'http://localhost:3000' },
      payload: { name: 'Racer', email, password: 'correct horse battery' },
    });
    expect(signedUp.statusCode, signedUp.body).toBe(200);
    const userId = (JSON.parse(signedUp.body) as { user: { id: string } }).user.id;

    const apps = [api.app, await api.another()];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        apps[i % 2]!.inject({ method: 'POST', url: '/api/auth/forget-password', headers: { origin: 'http://localhost:3000' }, payload: { email } }),
      ),
    );
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);

    const tokens = (await api.db.pool.any(sql.unsafe`
      SELECT data->>'tokenHash' AS token_hash,
             bool_or(type IN ('verification.token_revoked.v1', 'verification.token_consumed.v1')) AS ended
      FROM events
      WHERE type LIKE 'verification.token_%' AND data->>'userId' = ${userId}
      GROUP BY data->>'tokenHash'`)) as readonly { token_hash: string; ended: boolean }[];
    expect(tokens).toHaveLength(12);
    const live = tokens.filter((t) => !t.ended);
    expect(live).toHaveLength(1);
    // ...and it is the one the user's reset stream names as the latest.
    const latest = await api.db.pool.oneFirst(sql.unsafe`
      SELECT data->>'tokenHash' FROM events WHERE stream_id = ${`password-reset-${userId}`} ORDER BY position DESC LIMIT 1`);
    expect(latest).toBe(live[0]!.token_hash);
  });
});
