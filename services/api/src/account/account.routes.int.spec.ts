import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue, wireCode, type ErrorCode } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

const API_KEY = 'server-api-key-0123456789abcdefghijklmnopqrstuv';
const PASSWORD = 'correct horse battery';

/**
 * The email lifecycle switched off, in production: each flow answers its "not enabled" error (delete-user as
 * a route that does not exist), verification required without verification mail refuses sign-in without
 * mailing, and the ops mail endpoints want the server API key. In-process (`inject`) on real stores.
 */
describe('email lifecycle switched off (production, inject on real stores)', () => {
  let api: InProcessApi;
  let db: InProcessApi['db'];
  let app: InProcessApi['app'];

  beforeAll(async () => {
    api = await startInProcessApi('account_routes_off', {
      NODE_ENV: 'production',
      // Production wants a mail server; nothing in process sends through it.
      SMTP_URL: 'smtp://mail.example.test:25',
      HOST: '0.0.0.0',
      AUTH_SECRET: 'account-routes-secret-0123456789abcdef',
      BASE_URL: 'http://localhost:3000',
      AUTH_RATE_LIMIT_ENABLED: 'false',
      AUTH_SERVER_API_KEY: API_KEY,
      AUTH_EMAIL_VERIFICATION_ENABLED: 'false',
      AUTH_REQUIRE_EMAIL_VERIFICATION: 'true',
      AUTH_RESET_PASSWORD_ENABLED: 'false',
    });
    ({ db, app } = api);
  });

  afterAll(async () => {
    await api?.close();
  });

  async function call(method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await app.inject({ method, url, headers, ...(body !== undefined ? { payload: body as object } : {}) });
    return { status: response.statusCode, json: response.body ? (JSON.parse(response.body) as Record<string, unknown>) : null };
  }

  function expectError(answer: { status: number; json: Record<string, unknown> | null }, code: ErrorCode): void {
    expect({ status: answer.status, code: answer.json?.code, message: answer.json?.message }).toEqual({
      status: errorCatalogue[code].status,
      code: wireCode(code),
      message: errorCatalogue[code].message,
    });
  }

  it('answers each switched-off flow with its error', async () => {
    expectError(await call('POST', '/api/auth/send-verification-email', { email: 'a@example.com' }), 'VERIFICATION_EMAIL_NOT_ENABLED');
    expectError(await call('POST', '/api/auth/forget-password', { email: 'a@example.com' }), 'RESET_PASSWORD_DISABLED');
    expectError(await call('POST', '/api/auth/request-password-reset', { email: 'a@example.com' }), 'RESET_PASSWORD_DISABLED');
    expectError(await call('POST', '/api/auth/change-email', { newEmail: 'b@example.com' }), 'CHANGE_EMAIL_DISABLED');
    expectError(await call('POST', '/api/auth/delete-user', {}), 'NOT_FOUND');
    expectError(await call('GET', '/api/auth/delete-user/callback?token=x'), 'NOT_FOUND');
  });

  it('refuses an unverified sign-in with 403 and mails nothing when verification mail is off', async () => {
    const signedUp = await call('POST', '/api/auth/sign-up/email', { name: 'Una', email: 'una@example.com', password: PASSWORD });
    expect(signedUp.status).toBe(200);
    expect(signedUp.json?.token).toBeNull();
    expectError(await call('POST', '/api/auth/sign-in/email', { email: 'una@example.com', password: PASSWORD }), 'EMAIL_NOT_VERIFIED');
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM events WHERE type = 'mail.job_queued.v1'`))).toBe(0);
  });

  it('opens the ops mail endpoints of an api beyond loopback to server calls only', async () => {
    expectError(await call('GET', '/ops/mailbox'), 'UNAUTHORIZED');
    expectError(await call('GET', '/ops/mail/deliveries', undefined, { 'x-api-key': 'nope' }), 'UNAUTHORIZED');
    expect(await call('GET', '/ops/mailbox', undefined, { 'x-api-key': API_KEY })).toEqual({ status: 200, json: { messages: [] } });
    expect(await call('GET', '/ops/mail/deliveries?status=dead', undefined, { 'x-api-key': API_KEY })).toEqual({ status: 200, json: { deliveries: [], total: 0 } });
  });
});
