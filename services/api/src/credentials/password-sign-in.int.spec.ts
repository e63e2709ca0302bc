import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '@portcullis/contracts';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

const PASSWORD = 'correct horse battery';

/**
 * Sign-in reads the user stream of the account an email was last seen reserved for in the same query as the
 * reservation, and answers the user folded from that stream. Both must follow the account through its
 * changes: a new name, and an email moving to another account. In-process (`inject`) on real Postgres.
 */
describe('password sign-in: the user answered and the account read', () => {
  let api: InProcessApi;

  beforeAll(async () => {
    api = await startInProcessApi('password_sign_in', {
      BASE_URL: 'http://localhost:3000',
      AUTH_SECRET: 'password-sign-in-secret-0123456789abcdef',
      AUTH_RATE_LIMIT_ENABLED: 'false',
      AUTH_CHANGE_EMAIL_ENABLED: 'true',
    });
  });

  afterAll(async () => {
    await api?.close();
  });

  async function post(url: string, body: object, token?: string): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await api.app.inject({
      method: 'POST',
      url: `/api/auth/${url}`,
      headers: { origin: 'http://localhost:3000', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      payload: body,
    });
    return { status: response.statusCode, json: JSON.parse(response.body) as Record<string, unknown> };
  }

  async function signIn(email: string): Promise<{ token: string; user: User }> {
    const answer = await post('sign-in/email', { email, password: PASSWORD });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return answer.json as { token: string; user: User };
  }

  async function sessionUser(token: string): Promise<User> {
    const response = await api.app.inject({ method: 'GET', url: '/api/auth/get-session', headers: { authorization: `Bearer ${token}` } });
    return (JSON.parse(response.body) as { user: User }).user;
  }

  it('answers the user as get-session does, after a change of name', async () => {
    const signedUp = await post('sign-up/email', { name: 'Ada', email: 'ada@example.com', password: PASSWORD });
    expect(signedUp.status).toBe(200);
    const first = await signIn('ada@example.com');
    expect(first.user).toEqual(await sessionUser(first.token));

    expect((await post('update-user', { name: 'Ada Lovelace', image: 'https://example.com/ada.png' }, first.token)).status).toBe(200);
    const second = await signIn('ada@example.com');
    expect(second.user).toMatchObject({ name: 'Ada Lovelace', image: 'https://example.com/ada.png' });
    expect(second.user).toEqual(await sessionUser(second.token));
  });

  it('signs in to the account an email has moved to, not the one it was last seen with', async () => {
    await post('sign-up/email', { name: 'First', email: 'moving@example.com', password: PASSWORD });
    const before = await signIn('moving@example.com');

    expect((await post('change-email', { newEmail: 'moved@example.com' }, before.token)).status).toBe(200);
    const taker = await post('sign-up/email', { name: 'Second', email: 'moving@example.com', password: PASSWORD });
    expect(taker.status).toBe(200);

    const after = await signIn('moving@example.com');
    expect(after.user).toMatchObject({ id: (taker.json.user as User).id, name: 'Second', email: 'moving@example.com' });
    expect(after.user.id).not.toBe(before.user.id);
    expect((await signIn('moved@example.com')).user).toMatchObject({ id: before.user.id, name: 'First', email: 'moved@example.com' });
  });
});
