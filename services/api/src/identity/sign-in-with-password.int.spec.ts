import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streams, type User } from '@portcullis/contracts';
import type { EventStore, StreamWrite } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

const PASSWORD = 'correct horse battery';

/** An in-process api for these specs, with rate limiting off (they sign in many times) and `env` on top. */
function startSignInApi(prefix: string, env: Record<string, string>, storeSeenByApi?: (store: EventStore) => EventStore): Promise<InProcessApi> {
  return startInProcessApi(
    prefix,
    { BASE_URL: 'http://localhost:3000', AUTH_SECRET: `${prefix}-secret-0123456789abcdef`, AUTH_RATE_LIMIT_ENABLED: 'false', ...env },
    storeSeenByApi ? { storeSeenByApi } : {},
  );
}

async function post(app: FastifyInstance, url: string, body: object, token?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await app.inject({
    method: 'POST',
    url: `/api/auth/${url}`,
    headers: { origin: 'http://localhost:3000', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    payload: body,
  });
  return { status: response.statusCode, json: JSON.parse(response.body) as Record<string, unknown> };
}

/** The real store, telling `onCall` of every method called on it. */
function observed(store: EventStore, onCall: (method: string | symbol, args: unknown[]) => void): EventStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        onCall(property, args);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * Sign-in reads the user stream of the account an email was last seen reserved for in the same query as the
 * reservation, and answers the user folded from that stream. Both must follow the account through its
 * changes: a new name, and an email moving to another account. In-process (`inject`) on real Postgres.
 */
describe('password sign-in: the user answered and the account read', () => {
  let api: InProcessApi;

  beforeAll(async () => {
    api = await startSignInApi('password_sign_in', { AUTH_CHANGE_EMAIL_ENABLED: 'true' });
  });

  afterAll(async () => {
    await api?.close();
  });

  async function signIn(email: string): Promise<{ token: string; user: User }> {
    const answer = await post(api.app, 'sign-in/email', { email, password: PASSWORD });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return answer.json as { token: string; user: User };
  }

  async function sessionUser(token: string): Promise<User> {
    const response = await api.app.inject({ method: 'GET', url: '/api/auth/get-session', headers: { authorization: `Bearer ${token}` } });
    return (JSON.parse(response.body) as { user: User }).user;
  }

  it('answers the user as get-session does, after a change of name', async () => {
    const signedUp = await post(api.app, 'sign-up/email', { name: 'Ada', email: 'ada@example.com', password: PASSWORD });
    expect(signedUp.status).toBe(200);
    const first = await signIn('ada@example.com');
    expect(first.user).toEqual(await sessionUser(first.token));

    expect((await post(api.app, 'update-user', { name: 'Ada Lovelace', image: 'https://example.com/ada.png' }, first.token)).status).toBe(200);
    const second = await signIn('ada@example.com');
    expect(second.user).toMatchObject({ name: 'Ada Lovelace', image: 'https://example.com/ada.png' });
    expect(second.user).toEqual(await sessionUser(second.token));
  });

  it('signs in to the account an email has moved to, not the one it was last seen with', async () => {
    await post(api.app, 'sign-up/email', { name: 'First', email: 'moving@example.com', password: PASSWORD });
    const before = await signIn('moving@example.com');

    expect((await post(api.app, 'change-email', { newEmail: 'moved@example.com' }, before.token)).status).toBe(200);
    const taker = await post(api.app, 'sign-up/email', { name: 'Second', email: 'moving@example.com', password: PASSWORD });
    expect(taker.status).toBe(200);

    const after = await signIn('moving@example.com');
    expect(after.user).toMatchObject({ id: (taker.json.user as User).id, name: 'Second', email: 'moving@example.com' });
    expect(after.user.id).not.toBe(before.user.id);
    expect((await signIn('moved@example.com')).user).toMatchObject({ id: before.user.id, name: 'First', email: 'moved@example.com' });
  });
});

/**
 * A sign-in is decided on the identifier's remembered read when there is one, and its session's append
 * requires the streams that read came from to be unchanged. These specs change those streams through a
 * second api (memory of its own, as a second process has) and show the first api deciding on the change.
 */
describe('password sign-in: decided on a remembered read, landed only on unchanged streams', () => {
  let api: InProcessApi;
  let other: FastifyInstance;
  const calls = { reads: 0, appends: [] as (readonly StreamWrite[])[] };

  beforeAll(async () => {
    // The real store, with the api's reads and appends counted (the second api's included).
    api = await startSignInApi('remembered_sign_in', { AUTH_CHANGE_EMAIL_ENABLED: 'true', AUTH_BRUTE_FORCE_MAX_FAILURES: '3' }, (store) =>
      observed(store, (method, args) => {
        if (method === 'readStream' || method === 'readStreams' || method === 'readStreamsFromSnapshots') calls.reads += 1;
        if (method === 'append') calls.appends.push(args[0] as readonly StreamWrite[]);
      }),
    );
    other = await api.another();
  });

  afterAll(async () => {
    await api?.close();
  });

  async function signUp(email: string): Promise<string> {
    const answer = await post(api.app, 'sign-up/email', { name: 'Remembered', email, password: PASSWORD });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return answer.json.token as string;
  }

  async function failures(email: string): Promise<number> {
    const read = await api.db.store.readStream(streams.signIn(email));
    return read.events.filter((e) => e.type === 'credentials.sign_in_failed.v1').length;
  }

  it('reads none of the streams for a second sign-in of the same email, and requires them unchanged', async () => {
    const email = 'again@example.com';
    await signUp(email);
    expect((await post(api.app, 'sign-in/email', { email, password: PASSWORD })).status).toBe(200);

    calls.reads = 0;
    calls.appends.length = 0;
    const again = await post(api.app, 'sign-in/email', { email, password: PASSWORD });

    expect(again.status).toBe(200);
    expect(calls.reads).toBe(0);
    expect(calls.appends).toHaveLength(1);
    const userId = (again.json.user as User).id;
    const checked = calls.appends[0]!.filter((w) => w.events.length === 0).map((w) => w.streamId);
    expect(checked.sort()).toEqual([streams.email(email), streams.signIn(email), streams.user(userId), streams.accountSignIn(userId)].sort());
    const session = await api.app.inject({ method: 'GET', url: '/api/auth/get-session', headers: { authorization: `Bearer ${String(again.json.token)}` } });
    expect(JSON.parse(session.body)).toMatchObject({ user: { id: userId, email } });
  });

  it('refuses the old password once another api changed it, recording one failure, and takes the new one', async () => {
    const email = 'changed@example.com';
    const token = await signUp(email);
    expect((await post(api.app, 'sign-in/email', { email, password: PASSWORD })).status).toBe(200);

    const changed = await post(other, 'change-password', { currentPassword: PASSWORD, newPassword: 'a brand new passphrase' }, token);
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);

    const stale = await post(api.app, 'sign-in/email', { email, password: PASSWORD });
    expect(stale).toMatchObject({ status: 401, json: { code: 'INVALID_EMAIL_OR_PASSWORD' } });
    expect(await failures(email)).toBe(1);
    expect((await post(api.app, 'sign-in/email', { email, password: 'a brand new passphrase' })).status).toBe(200);
  });

  it('refuses a correct password with 429 once failures through another api locked the email', async () => {
    const email = 'locked@example.com';
    await signUp(email);
    expect((await post(api.app, 'sign-in/email', { email, password: PASSWORD })).status).toBe(200);

    for (let i = 0; i < 3; i += 1) expect((await post(other, 'sign-in/email', { email, password: 'not the password' })).status).toBe(401);
    expect((await post(other, 'sign-in/email', { email, password: PASSWORD })).status).toBe(429);

    const refused = await post(api.app, 'sign-in/email', { email, password: PASSWORD });
    expect(refused).toMatchObject({ status: 429, json: { code: 'TOO_MANY_FAILED_SIGN_INS' } });
    expect(await failures(email)).toBe(3);
  });

  it("refuses a correct password by email with 429 once failures by the account's username through another api locked the account", async () => {
    const email = 'account-locked@example.com';
    const token = await signUp(email);
    expect((await post(api.app, 'update-user', { username: 'account_locked' }, token)).status).toBe(200);
    expect((await post(api.app, 'sign-in/email', { email, password: PASSWORD })).status).toBe(200);

    for (let i = 0; i < 3; i += 1) expect((await post(other, 'sign-in/username', { username: 'account_locked', password: 'not the password' })).status).toBe(401);

    // The remembered read of the email saw the account's sign-in stream before the lock: its append fails.
    const refused = await post(api.app, 'sign-in/email', { email, password: PASSWORD });
    expect(refused).toMatchObject({ status: 429, json: { code: 'TOO_MANY_FAILED_SIGN_INS' } });
    expect(await failures(email)).toBe(0);
  });

  it('refuses an email another api moved away, and signs in under the new one', async () => {
    const email = 'leaving@example.com';
    const token = await signUp(email);
    expect((await post(api.app, 'sign-in/email', { email, password: PASSWORD })).status).toBe(200);

    expect((await post(other, 'change-email', { newEmail: 'arrived@example.com' }, token)).status).toBe(200);

    expect((await post(api.app, 'sign-in/email', { email, password: PASSWORD })).status).toBe(401);
    expect((await post(api.app, 'sign-in/email', { email: 'arrived@example.com', password: PASSWORD })).status).toBe(200);
  });

  it('records a wrong password once when the sign-in was first decided on a remembered read', async () => {
    const email = 'mistyped@example.com';
    await signUp(email);
    expect((await post(api.app, 'sign-in/email', { email, password: PASSWORD })).status).toBe(200);

    expect((await post(api.app, 'sign-in/email', { email, password: 'not the password' })).status).toBe(401);
    expect(await failures(email)).toBe(1);
    expect((await post(api.app, 'sign-in/email', { email, password: PASSWORD })).status).toBe(200);
  });
});

describe('password sign-in: what is remembered', () => {
  let api: InProcessApi;
  let reads = 0;

  beforeAll(async () => {
    api = await startSignInApi('remembered_sign_in_bounds', { AUTH_BRUTE_FORCE_MAX_FAILURES: '1000' }, (store) =>
      observed(store, (method) => {
        if (method === 'readStream' || method === 'readStreams' || method === 'readStreamsFromSnapshots') reads += 1;
      }),
    );
  });

  afterAll(async () => {
    await api?.close();
  });

  async function signIn(email: string, password: string): Promise<number> {
    return (await post(api.app, 'sign-in/email', { email, password })).status;
  }

  it('does not hold the read of an identifier crowded with failures, which an attacker could multiply', async () => {
    const email = 'crowded@example.com';
    expect((await post(api.app, 'sign-up/email', { name: 'Crowded', email, password: PASSWORD })).status).toBe(200);
    for (let i = 0; i < 33; i += 1) expect(await signIn(email, 'not the password')).toBe(401);

    expect(await signIn(email, PASSWORD)).toBe(200);
    reads = 0;
    expect(await signIn(email, PASSWORD)).toBe(200);
    expect(reads).toBeGreaterThan(0);
  });
});
