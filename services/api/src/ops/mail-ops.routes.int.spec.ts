import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

const KEY = 'operator-key-0123456789abcdef0123456789';
const SECRET = 'mail-ops-spec-secret-0123456789abcdef0123';

/**
 * The dev mailbox holds live reset and deletion links: only an operator may read it, unless the api
 * listens on loopback alone (nobody but this machine can reach it).
 */
describe('mail ops routes', () => {
  let exposed: InProcessApi;
  let local: InProcessApi;

  beforeAll(async () => {
    exposed = await startInProcessApi('mail_ops_exposed', { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: KEY, AUTH_SECRET: SECRET, NODE_ENV: 'development' });
    local = await startInProcessApi('mail_ops_local', { HOST: '127.0.0.1', AUTH_SERVER_API_KEY: KEY, AUTH_SECRET: SECRET, NODE_ENV: 'development' });
  });

  afterAll(async () => {
    await exposed?.close();
    await local?.close();
  });

  it('refuses a caller without the key when the api listens beyond loopback, and serves an operator', async () => {
    for (const url of ['/ops/mailbox', '/ops/mail/deliveries']) {
      const refused = await exposed.app.inject({ method: 'GET', url });
      expect(refused.statusCode, url).toBe(401);
      expect(refused.json()).toMatchObject({ code: 'UNAUTHORIZED' });
      expect((await exposed.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY } })).statusCode, url).toBe(200);
      expect((await exposed.app.inject({ method: 'GET', url, headers: { 'x-api-key': 'wrong' } })).statusCode, url).toBe(401);
    }
  });

  it('serves anyone on this machine when the api listens on loopback alone', async () => {
    expect((await local.app.inject({ method: 'GET', url: '/ops/mailbox' })).statusCode).toBe(200);
  });
});
