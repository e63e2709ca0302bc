import { generateKeyPairSync } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streams, UserRoleChanged, type AuditEvent } from '@portcullis/contracts';
import { headSignatureHolds, type ExportedHead } from '@portcullis/platform';
import { domainWrite, metadataAt } from '../../../../tests/support/event-log.ts';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { waitFor } from '../../../../tests/support/processes.ts';

const KEY = 'audit-operator-key-0123456789abcdef0123';
const PASSWORD = 'correct horse battery';
const ALICE_IP = '203.0.113.7';
const GUESSER_IP = '198.51.100.9';
const signingKey = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

async function post(app: FastifyInstance, url: string, body: object, options: { token?: string; ip?: string } = {}): Promise<Record<string, unknown>> {
  const response = await app.inject({
    method: 'POST',
    url: `/api/auth/${url}`,
    remoteAddress: options.ip ?? '127.0.0.1',
    headers: { origin: 'http://localhost:3000', 'user-agent': 'audit-spec/1', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    payload: body,
  });
  return JSON.parse(response.body) as Record<string, unknown>;
}

interface SearchAnswer {
  events: AuditEvent[];
  nextCursor: number | null;
  indexedTo: number;
}

/**
 * The audit trail over HTTP (`inject`, real Postgres, the audit index projected in process): who did what
 * from where, searched by every filter, paged by position, exported as NDJSON, and users and organizations
 * folded as of a point of the log.
 */
describe('audit routes', () => {
  let api: InProcessApi;
  let aliceId: string;
  let aliceToken: string;
  let organizationId: string;
  let beforeOrganization: number;
  let head: number;

  async function search(query: string, key: string | null = KEY): Promise<SearchAnswer> {
    const response = await api.app.inject({ method: 'GET', url: `/ops/audit/events?${query}`, headers: key ? { 'x-api-key': key } : {} });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  beforeAll(async () => {
    api = await startInProcessApi('audit_routes', {
      HOST: '0.0.0.0',
      BASE_URL: 'http://localhost:3000',
      AUTH_SECRET: 'audit-routes-secret-0123456789abcdef',
      AUTH_SERVER_API_KEY: KEY,
      AUTH_RATE_LIMIT_ENABLED: 'false',
      AUDIT_SIGNING_KEY: signingKey,
    });
    const signedUp = await post(api.app, 'sign-up/email', { name: 'Alice', email: 'alice@example.com', password: PASSWORD }, { ip: ALICE_IP });
    aliceId = (signedUp.user as { id: string }).id;
    await post(api.app, 'sign-in/email', { email: 'alice@example.com', password: 'not her password' }, { ip: GUESSER_IP });
    const signedIn = await post(api.app, 'sign-in/email', { email: 'alice@example.com', password: PASSWORD }, { ip: ALICE_IP });
    const token = signedIn.token as string;
    aliceToken = token;
    beforeOrganization = await api.db.store.headPosition();
    const created = await post(api.app, 'organization/create', { name: 'Acme', slug: 'acme-audit' }, { token, ip: ALICE_IP });
    organizationId = created.id as string;
    await post(api.app, 'update-user', { name: 'Alice Liddell' }, { token, ip: ALICE_IP });
    head = await api.db.store.headPosition();
    await waitFor(async () => (await search('limit=1')).indexedTo >= head, { timeoutMs: 20_000, message: 'the audit index to reach the head' });
  });

  afterAll(async () => {
    await api?.close();
  });

  it('answers operators only: the server key, or the session of an admin who may list users and sessions', async () => {
    // The same user made an admin (ADMIN_USER_IDS) on a second process of the same api.
    const asAdmin = await api.another({ env: { ADMIN_USER_IDS: aliceId } });
    const session = { authorization: `Bearer ${aliceToken}` };
    for (const url of ['/ops/audit/events', '/ops/audit/export', '/ops/audit/head', `/ops/audit/users/${aliceId}`]) {
      expect((await api.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
      expect((await api.app.inject({ method: 'GET', url, headers: { 'x-api-key': 'wrong' } })).statusCode, url).toBe(401);
      const notAdmin = await api.app.inject({ method: 'GET', url, headers: session });
      expect({ status: notAdmin.statusCode, message: (notAdmin.json<{ message?: string }>()).message }, url).toEqual({
        status: 403,
        message: 'You are not allowed to read the audit trail',
      });
      expect((await asAdmin.inject({ method: 'GET', url, headers: session })).statusCode, url).toBe(200);
    }
  });

  it('shows each event with who did it, from where, and a sentence; never a password hash', async () => {
    const { events } = await search(`user=${aliceId}&order=oldest&limit=500`);
    const signIn = events.find((e) => e.type === 'session.created.v2')!;
    expect(signIn.sentence).toBe(`alice@example.com signed in from ${ALICE_IP}`);
    expect(signIn.actor).toEqual({ kind: 'user', id: aliceId });
    expect(signIn.metadata).toMatchObject({ ipAddress: ALICE_IP, userAgent: 'audit-spec/1' });
    expect(signIn.metadata.requestId).toBeTruthy();
    expect(signIn.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(events.find((e) => e.type === 'user.registered.v1')!.sentence).toBe(`alice@example.com signed up from ${ALICE_IP}`);
    const credential = events.find((e) => e.type === 'user.credential_account_created.v2')!;
    expect(credential.data.passwordHash).toBe('[redacted]');
    expect(JSON.stringify(events)).not.toContain('$argon2id$');
    expect(JSON.stringify(events)).not.toContain(PASSWORD);
  });

  it('filters by IP or CIDR, type, type prefix, stream, organization, actor and time', async () => {
    const guesses = await search(`ip=198.51.100.0/24&limit=500`);
    expect(guesses.events.length).toBeGreaterThan(0);
    expect(guesses.events.every((e) => e.metadata.ipAddress === GUESSER_IP)).toBe(true);
    expect(guesses.events.map((e) => e.type)).toContain('credentials.sign_in_failed.v1');
    expect(guesses.events.find((e) => e.type === 'credentials.sign_in_failed.v1')!.sentence).toBe(
      `a sign-in as alice@example.com failed (invalid password) from ${GUESSER_IP}`,
    );
    expect((await search(`ip=${GUESSER_IP}`)).events.length).toBe(guesses.events.length);

    const failures = await search('type=credentials.sign_in_failed.v1,credentials.account_sign_in_failed.v1');
    expect(new Set(failures.events.map((e) => e.type))).toEqual(new Set(['credentials.sign_in_failed.v1', 'credentials.account_sign_in_failed.v1']));
    const credentials = await search('typePrefix=credentials.&limit=500');
    expect(credentials.events.every((e) => e.type.startsWith('credentials.'))).toBe(true);
    expect(credentials.events.length).toBeGreaterThanOrEqual(failures.events.length);

    const ofOrganization = await search(`organization=${organizationId}&limit=500`);
    expect(ofOrganization.events.map((e) => e.type)).toContain('organization.created.v1');
    expect(ofOrganization.events.every((e) => e.position > beforeOrganization)).toBe(true);
    const both = await search(`organization=${organizationId}&user=${aliceId}&type=organization.member_added.v1`);
    expect(both.events).toHaveLength(1);

    const stream = await search(`stream=user-${aliceId}&order=oldest&limit=500`);
    expect(stream.events.every((e) => e.streamId === `user-${aliceId}`)).toBe(true);
    expect(stream.events.map((e) => e.streamVersion)).toEqual(stream.events.map((_, i) => i + 1));

    const byAlice = await search(`actor=${aliceId}&limit=500`);
    expect(byAlice.events.every((e) => e.actor.id === aliceId)).toBe(true);
    expect((await search('actorKind=anonymous&limit=500')).events.map((e) => e.type)).toContain('credentials.sign_in_failed.v1');

    const all = (await search('order=oldest&limit=500')).events;
    const middle = all[Math.floor(all.length / 2)]!;
    const later = await search(`from=${encodeURIComponent(middle.recordedAt)}&order=oldest&limit=500`);
    expect(later.events.every((e) => e.recordedAt >= middle.recordedAt)).toBe(true);
    expect(later.events[0]!.position).toBeLessThanOrEqual(middle.position);
    const earlier = await search(`to=${encodeURIComponent(middle.recordedAt)}&order=oldest&limit=500`);
    expect(earlier.events.every((e) => e.recordedAt < middle.recordedAt)).toBe(true);
    const window = await search(`from=${encodeURIComponent(all[1]!.recordedAt)}&to=${encodeURIComponent(middle.recordedAt)}&order=newest&limit=500`);
    expect(window.events.map((e) => e.position)).toEqual(
      all.filter((e) => e.recordedAt >= all[1]!.recordedAt && e.recordedAt < middle.recordedAt).map((e) => e.position).reverse(),
    );
    expect((await search('from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z')).events).toEqual([]);
    expect(later.events.length + earlier.events.length).toBe(all.length);
  });

  it('pages newest or oldest first by log position, each page continuing from the cursor', async () => {
    const all = (await search('order=oldest&limit=500')).events.map((e) => e.position);
    expect(all).toHaveLength(head);
    for (const order of ['newest', 'oldest'] as const) {
      const seen: number[] = [];
      let cursor: number | null = null;
      do {
        const page: SearchAnswer = await search(`order=${order}&limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
        seen.push(...page.events.map((e) => e.position));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(seen).toEqual(order === 'oldest' ? all : [...all].reverse());
    }
  });

  it('refuses a malformed filter with 400', async () => {
    for (const query of ['ip=not-an-ip', 'ip=10.0.0.0/33', 'from=yesterday', 'limit=0', 'order=sideways']) {
      const response = await api.app.inject({ method: 'GET', url: `/ops/audit/events?${query}`, headers: { 'x-api-key': KEY } });
      expect(response.statusCode, query).toBe(400);
    }
  });

  it('exports the same events as NDJSON, through pages, with the same filters', async () => {
    const response = await api.app.inject({ method: 'GET', url: `/ops/audit/export?user=${aliceId}&order=oldest`, headers: { 'x-api-key': KEY } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('application/x-ndjson');
    const lines = response.body.trimEnd().split('\n').map((line) => JSON.parse(line) as AuditEvent);
    expect(lines).toEqual((await search(`user=${aliceId}&order=oldest&limit=500`)).events);
  });

  it('exports the head signed with AUDIT_SIGNING_KEY', async () => {
    const response = await api.app.inject({ method: 'GET', url: '/ops/audit/head', headers: { 'x-api-key': KEY } });
    const exported = response.json<ExportedHead>();
    expect(exported.position).toBeGreaterThanOrEqual(head);
    expect(headSignatureHolds(exported)).toBe(true);
    expect(headSignatureHolds({ ...exported, position: exported.position - 1 })).toBe(false);
  });

  it('folds a user as of a log position or an instant, with the diff between two points', async () => {
    const at = async (query: string): Promise<{ state: Record<string, Record<string, unknown>>; position: number; diff: { changes: Array<{ path: string }> } | null }> => {
      const response = await api.app.inject({ method: 'GET', url: `/ops/audit/users/${aliceId}?${query}`, headers: { 'x-api-key': KEY } });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    };
    const then = await at(`at=${beforeOrganization}`);
    expect(then.state.profile).toMatchObject({ status: 'registered', name: 'Alice', email: 'alice@example.com' });
    expect(then.state.organizations).toEqual({});
    expect(Object.keys(then.state.sessions!)).toHaveLength(2);
    expect(JSON.stringify(then)).not.toContain('$argon2id$');

    const now = await at(`diffFrom=${beforeOrganization}`);
    expect(now.state.profile).toMatchObject({ name: 'Alice Liddell' });
    expect(now.state.organizations).toEqual({ [organizationId]: { name: 'Acme', role: 'owner' } });
    expect(now.diff!.changes.map((c) => c.path)).toEqual(expect.arrayContaining(['profile.name', `organizations.${organizationId}`, 'account.name']));

    const [registered] = (await search(`user=${aliceId}&type=user.registered.v1`)).events;
    const atSignUp = await at(`at=${encodeURIComponent(registered!.occurredAt)}`);
    expect(atSignUp.state.profile).toMatchObject({ name: 'Alice' });
    const beforeAnything = await at('at=2000-01-01T00:00:00Z');
    expect(beforeAnything.state.profile).toEqual({ status: 'none' });
  });

  it('folds an organization as of a point with the organization model', async () => {
    const fetchAt = async (at: number): Promise<{ state: { status: string; members?: Record<string, { userId: string; role: string }> } }> =>
      (await api.app.inject({ method: 'GET', url: `/ops/audit/organizations/${organizationId}?at=${at}`, headers: { 'x-api-key': KEY } })).json();
    expect((await fetchAt(beforeOrganization)).state).toEqual({ status: 'none' });
    const now = await fetchAt(head);
    expect(now.state.status).toBe('active');
    expect(Object.values(now.state.members!)).toEqual([expect.objectContaining({ userId: aliceId, role: 'owner' })]);
  });

  it('shows the role admin commands gave a user as of each point, beside the ban the account shows', async () => {
    const at = async (query: string): Promise<{ state: { role: string | null }; diff: { changes: Array<{ path: string; before: unknown; after: unknown }> } | null }> =>
      (await api.app.inject({ method: 'GET', url: `/ops/audit/users/${aliceId}?${query}`, headers: { 'x-api-key': KEY } })).json();
    const before = await api.db.store.headPosition();
    await api.db.store.append([domainWrite(streams.user(aliceId), 'any', [UserRoleChanged({ userId: aliceId, role: 'admin' })], metadataAt(new Date()))]);

    expect((await at(`at=${before}`)).state.role).toBe('user');
    const now = await at(`diffFrom=${before}`);
    expect(now.state.role).toBe('admin');
    expect(now.diff!.changes).toContainEqual({ path: 'role', before: 'user', after: 'admin' });
    expect((await at('at=2000-01-01T00:00:00Z')).state.role).toBeNull();
  });
});
