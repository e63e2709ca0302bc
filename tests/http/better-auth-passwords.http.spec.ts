import type { AddressInfo } from 'node:net';
import { hashPassword as betterAuthHash } from 'better-auth/crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streams, type AuditEvent } from '@portcullis/contracts';
import { generateId, passwordHashIsCurrent, sql, systemRequest, verifyPassword, type Argon2idCost } from '@portcullis/platform';
import { registerUser } from '../../services/api/src/identity/register-user.command.ts';
import { initialUsernameFields } from '../../services/api/src/identity/username.decider.ts';
import { expectCatalogueError } from '../support/auth.ts';
import { startInProcessApi, type InProcessApi } from '../support/in-process-api.ts';
import { waitFor } from '../support/processes.ts';
import { HttpClient } from '../support/system.ts';

const KEY = 'better-auth-passwords-key-0123456789abcdef';
const PASSWORD = 'correct horse battery';
const TODAY: Argon2idCost = { memoryKiB: 19_456, iterations: 2, parallelism: 1 };
const HIGHER: Argon2idCost = { memoryKiB: 24_576, iterations: 3, parallelism: 1 };
const HIGHER_ENV = { AUTH_PASSWORD_ARGON2_MEMORY_KIB: '24576', AUTH_PASSWORD_ARGON2_ITERATIONS: '3' };

interface Rehash {
  readonly position: number;
  readonly data: { userId: string; accountId: string; passwordHash: string; previous: string; cost: Argon2idCost };
}

/**
 * Accounts that hold better-auth's scrypt hash (as an import from a better-auth database leaves them) sign in
 * with their password over HTTP, and their first sign-in replaces the hash with argon2id at the configured
 * cost, recorded on the log, projected to the account row and told by the audit trail; so does a change of
 * that cost for argon2 hashes. Real Postgres, the projections in process, each api listening on a port.
 */
describe('better-auth scrypt hashes and the argon2id cost', () => {
  let api: InProcessApi;
  let today: HttpClient;
  const listening: FastifyInstance[] = [];

  async function listen(app: FastifyInstance): Promise<HttpClient> {
    await app.listen({ port: 0, host: '127.0.0.1' });
    listening.push(app);
    // The page a browser would send these from is on the api's public origin (BASE_URL).
    return new HttpClient(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/auth`, { origin: 'http://localhost:3000' });
  }

  /** A user whose password account holds `passwordHash` as it is (what the better-auth import appends). */
  async function userWithHash(label: string, passwordHash: string): Promise<{ userId: string; email: string; username: string }> {
    const userId = generateId();
    const email = `${label}-${userId.slice(0, 8)}@example.com`.toLowerCase();
    const username = `${label}_${userId.slice(0, 8)}`.toLowerCase();
    const registered = await registerUser(api.contextOf(api.app), systemRequest, {
      via: 'admin.bootstrap',
      actor: { id: 'spec', kind: 'system' },
      registration: { userId, email, name: label, image: null, emailVerified: true, passwordHash, refusal: 'USER_ALREADY_EXISTS' },
      username: initialUsernameFields({ username }),
      alsoOnUser: () => [],
      verificationMail: null,
      session: null,
      whenTaken: 'refuse',
    });
    expect(registered.registered).toBe(true);
    return { userId, email, username };
  }

  async function storedHash(userId: string): Promise<string> {
    const rows = (await api.db.pool.anyFirst(sql.unsafe`
      SELECT password FROM account WHERE "userId" = ${userId} AND "providerId" = 'credential'`)) as readonly string[];
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }

  async function rehashesOf(userId: string): Promise<Rehash[]> {
    const { events } = await api.db.store.readStream(streams.user(userId));
    return events.filter((event) => event.type === 'user.password_rehashed.v1').map((event) => ({ position: event.position, data: event.data as Rehash['data'] }));
  }

  async function auditOf(userId: string, type: string): Promise<AuditEvent[]> {
    const head = await api.db.store.headPosition();
    const search = async (): Promise<{ events: AuditEvent[]; indexedTo: number }> => {
      const response = await today.get<{ events: AuditEvent[]; indexedTo: number }>(`/ops/audit/events?user=${userId}&type=${type}`, { headers: { 'x-api-key': KEY } });
      expect(response.status, response.text).toBe(200);
      return response.json;
    };
    await waitFor(async () => (await search()).indexedTo >= head, { timeoutMs: 20_000, message: 'the audit index to reach the head' });
    return (await search()).events;
  }

  beforeAll(async () => {
    api = await startInProcessApi('better_auth_passwords', {
      BASE_URL: 'http://localhost:3000',
      AUTH_SECRET: 'better-auth-passwords-secret-0123456789abcdef',
      AUTH_SERVER_API_KEY: KEY,
      AUTH_RATE_LIMIT_ENABLED: 'false',
    });
    today = await listen(api.app);
  });

  afterAll(async () => {
    for (const app of listening) await app.close();
    await api?.close();
  });

  it('signs in by email with a hash better-auth made, and stores argon2id at today\'s cost in its place, once', async () => {
    const scrypt = await betterAuthHash(PASSWORD);
    const { userId, email } = await userWithHash('ada', scrypt);
    expect(await storedHash(userId)).toBe(scrypt);

    const answer = await today.post<{ token: string; user: { id: string } }>('sign-in/email', { email, password: PASSWORD });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.user.id).toBe(userId);
    const session = await today.get<{ user: { id: string } }>('get-session', { headers: { authorization: `Bearer ${answer.json.token}` } });
    expect(session.json.user.id).toBe(userId);

    // The sign-in waited for the identity projection its rehash concerns: the row has it already.
    const stored = await storedHash(userId);
    expect(passwordHashIsCurrent(stored, TODAY)).toBe(true);
    expect(await verifyPassword(stored, PASSWORD)).toBe(true);
    const [rehash, ...more] = await rehashesOf(userId);
    expect(more).toEqual([]);
    expect(rehash!.data).toEqual({ userId, accountId: expect.any(String), passwordHash: stored, previous: 'better-auth-scrypt', cost: TODAY });

    // The next sign-in finds the hash current: nothing more on the log.
    expect((await today.post('sign-in/email', { email, password: PASSWORD })).status).toBe(200);
    expect(await rehashesOf(userId)).toHaveLength(1);

    const [audited] = await auditOf(userId, 'user.password_rehashed.v1');
    expect(audited!.sentence).toBe(`${email}'s password hash was upgraded at sign-in, from better-auth scrypt to argon2id (m=19456 KiB, t=2, p=1) from 127.0.0.1`);
    // The audit trail never shows the hash.
    expect(audited!.data.passwordHash).toBe('[redacted]');
  });

  it('refuses a wrong password against a scrypt hash with the catalogue\'s answer, and keeps the hash', async () => {
    const scrypt = await betterAuthHash(PASSWORD);
    const { userId, email, username } = await userWithHash('bea', scrypt);
    expectCatalogueError(await today.post('sign-in/email', { email, password: 'correct horse batterY' }), 'INVALID_EMAIL_OR_PASSWORD');
    expectCatalogueError(await today.post('sign-in/username', { username, password: 'not it at all' }), 'INVALID_USERNAME_OR_PASSWORD');
    expect(await storedHash(userId)).toBe(scrypt);
    expect(await rehashesOf(userId)).toEqual([]);
  });

  it('signs in by username with a scrypt hash, rehashing it the same way', async () => {
    const { userId, username } = await userWithHash('cyd', await betterAuthHash(PASSWORD));
    const answer = await today.post('sign-in/username', { username, password: PASSWORD });
    expect(answer.status, answer.text).toBe(200);
    expect(passwordHashIsCurrent(await storedHash(userId), TODAY)).toBe(true);
    expect((await rehashesOf(userId)).map((r) => r.data.previous)).toEqual(['better-auth-scrypt']);
  });

  it('rehashes an argon2 hash at the next sign-in once the cost is raised, and new hashes use the new cost', async () => {
    const signUp = await today.post<{ user: { id: string } }>('sign-up/email', { name: 'Eve', email: 'eve@example.com', password: PASSWORD });
    expect(signUp.status, signUp.text).toBe(200);
    const userId = signUp.json.user.id;
    const before = await storedHash(userId);
    expect(passwordHashIsCurrent(before, TODAY)).toBe(true);

    // The owners raise the cost: an api started with the new settings, on the same log.
    const raised = await listen(await api.another({ env: HIGHER_ENV }));
    expect((await raised.post('sign-in/email', { email: 'eve@example.com', password: PASSWORD })).status).toBe(200);
    const after = await storedHash(userId);
    expect(passwordHashIsCurrent(after, HIGHER)).toBe(true);
    expect(await verifyPassword(after, PASSWORD)).toBe(true);
    expect((await rehashesOf(userId)).map((r) => [r.data.previous, r.data.cost])).toEqual([['argon2', HIGHER]]);
    const [audited] = await auditOf(userId, 'user.password_rehashed.v1');
    expect(audited!.sentence).toContain('from argon2 at another cost to argon2id (m=24576 KiB, t=3, p=1)');

    const newcomer = await raised.post<{ user: { id: string } }>('sign-up/email', { name: 'Fay', email: 'fay@example.com', password: PASSWORD });
    expect(newcomer.status, newcomer.text).toBe(200);
    expect(passwordHashIsCurrent(await storedHash(newcomer.json.user.id), HIGHER)).toBe(true);
  });
});
