import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent, AuditNames, SecurityOverview } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../support/in-process-api.ts';
import { waitFor } from '../support/processes.ts';

const KEY = 'audit-console-key-0123456789abcdef0123';
const PASSWORD = 'correct horse battery';
const ALICE_IP = '203.0.113.7';
const BOB_IP = '192.0.2.44';
const CAROL_IP = '192.0.2.200';
const GUESSER_IP = '198.51.100.9';
const DAY_MS = 86_400_000;

interface SearchAnswer extends AuditNames {
  events: AuditEvent[];
  nextCursor: number | null;
  indexedTo: number;
}

interface Change {
  path: string;
  before: unknown;
  after: unknown;
}

interface EventDetail extends AuditNames {
  event: AuditEvent;
  chain: { previousPosition: number; previousHash: string | null; hash: string; verifies: boolean };
  subjects: Array<{ kind: 'user' | 'organization'; id: string; before: unknown; after: unknown; changes: Change[] }>;
}

interface HistoryAnswer {
  id: string;
  points: Array<{ position: number; occurredAt: string; recordedAt: string; type: string; streamId: string }>;
  total: number;
  nextCursor: number | null;
}

/**
 * What the ops console asks of the audit trail beyond search (real Postgres, the projections in process):
 * names for ids (an erased user's as erased), several values per filter, one event with its chain link and
 * the states it changed, the security view, and the points of a subject's history.
 */
describe('audit trail for the console', () => {
  let api: InProcessApi;
  let asAdmin: FastifyInstance;
  let clockOffsetMs = 0;
  let aliceId: string;
  let aliceToken: string;
  let bobId: string;
  let carolId: string;
  let daveId: string;
  let organizationId: string;

  async function post(app: FastifyInstance, url: string, body: object, options: { token?: string; ip?: string } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await app.inject({
      method: 'POST',
      url: `/api/auth/${url}`,
      remoteAddress: options.ip ?? '127.0.0.1',
      headers: { origin: 'http://localhost:3000', 'user-agent': 'audit-console-spec/1', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
      payload: body,
    });
    return { status: response.statusCode, body: JSON.parse(response.body) as Record<string, unknown> };
  }

  async function get<T>(url: string, app: FastifyInstance = api.app): Promise<T> {
    const response = await app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY } });
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    return response.json<T>();
  }

  const search = (query: string) => get<SearchAnswer>(`/ops/audit/events?${query}`);

  async function signUp(name: string, ip: string): Promise<{ id: string; token: string }> {
    const { body } = await post(api.app, 'sign-up/email', { name, email: `${name.toLowerCase()}@example.com`, password: PASSWORD }, { ip });
    return { id: (body.user as { id: string }).id, token: body.token as string };
  }

  async function indexed(): Promise<void> {
    const head = await api.db.store.headPosition();
    await waitFor(async () => (await search('limit=1')).indexedTo >= head, { timeoutMs: 20_000, message: 'the audit index to reach the head' });
  }

  beforeAll(async () => {
    api = await startInProcessApi(
      'audit_console',
      {
        HOST: '0.0.0.0',
        BASE_URL: 'http://localhost:3000',
        AUTH_SECRET: 'audit-console-secret-0123456789abcdef',
        AUTH_SERVER_API_KEY: KEY,
        AUTH_RATE_LIMIT_ENABLED: 'false',
        AUTH_BRUTE_FORCE_MAX_FAILURES: '3',
      },
      { clock: () => new Date(Date.now() + clockOffsetMs) },
    );
    const alice = await signUp('Alice', ALICE_IP);
    aliceId = alice.id;
    aliceToken = alice.token;
    bobId = (await signUp('Bob', BOB_IP)).id;
    carolId = (await signUp('Carol', CAROL_IP)).id;
    daveId = (await signUp('Dave', ALICE_IP)).id;
    asAdmin = await api.another({ env: { ADMIN_USER_IDS: aliceId } });
    organizationId = (await post(api.app, 'organization/create', { name: 'Acme', slug: 'acme-console' }, { token: aliceToken, ip: ALICE_IP })).body.id as string;
    // One wrong password for Alice, and three for Bob (the third locks his email and his account), all from one address.
    expect((await post(api.app, 'sign-in/email', { email: 'alice@example.com', password: 'not hers' }, { ip: GUESSER_IP })).status).toBe(401);
    for (let i = 0; i < 3; i += 1) {
      expect((await post(api.app, 'sign-in/email', { email: 'bob@example.com', password: `guess ${i}` }, { ip: GUESSER_IP })).status).toBe(401);
    }
    expect((await post(asAdmin, 'admin/ban-user', { userId: bobId, banReason: 'spam' }, { token: aliceToken, ip: ALICE_IP })).status).toBe(200);
    expect((await post(asAdmin, 'admin/remove-user', { userId: carolId }, { token: aliceToken, ip: ALICE_IP })).status).toBe(200);
    await indexed();
  });

  afterAll(async () => {
    await api?.close();
  });

  it('answers operators only, as the audit search does: the server key, or an admin\'s session', async () => {
    const urls = ['/ops/security', '/ops/audit/events/1', `/ops/audit/users/${aliceId}/history`, `/ops/audit/organizations/${organizationId}/history`];
    for (const url of urls) {
      expect((await api.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
      expect((await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${aliceToken}` } })).statusCode, url).toBe(403);
      expect((await asAdmin.inject({ method: 'GET', url, headers: { authorization: `Bearer ${aliceToken}` } })).statusCode, url).toBe(200);
    }
  });

  it('names every actor and subject: users by name and email (an erased one as erased), organizations by name and slug', async () => {
    const ofAlice = await search(`user=${aliceId}&limit=500`);
    expect(ofAlice.people[aliceId]).toEqual({ name: 'Alice', email: 'alice@example.com' });
    expect(ofAlice.organizations[organizationId]).toEqual({ name: 'Acme', slug: 'acme-console', deleted: false });
    // Every id the page names has its entry.
    for (const event of ofAlice.events) {
      for (const id of [event.actor.id, event.data.userId].filter((v): v is string => typeof v === 'string')) {
        if (id !== carolId) expect(ofAlice.people[id], `${event.type} names ${id}`).toBeDefined();
      }
    }

    const ban = (await search('type=user.banned.v1')).events;
    expect(ban).toHaveLength(1);
    const banPage = await search('type=user.banned.v1');
    expect(banPage.people).toEqual({ [aliceId]: { name: 'Alice', email: 'alice@example.com' }, [bobId]: { name: 'Bob', email: 'bob@example.com' } });

    const ofCarol = await search(`user=${carolId}&limit=500`);
    expect(ofCarol.events.map((e) => e.type)).toContain('user.deleted.v1');
    expect(ofCarol.people[carolId]).toBe('erased');
    expect(JSON.stringify(ofCarol)).not.toContain('carol@example.com');
    // The admin who deleted her is still named.
    expect(ofCarol.people[aliceId]).toEqual({ name: 'Alice', email: 'alice@example.com' });

    const user = await get<AuditNames & { state: unknown }>(`/ops/audit/users/${aliceId}`);
    expect(user.people[aliceId]).toEqual({ name: 'Alice', email: 'alice@example.com' });
    expect(user.organizations).toEqual({ [organizationId]: { name: 'Acme', slug: 'acme-console', deleted: false } });
    const organization = await get<AuditNames>(`/ops/audit/organizations/${organizationId}`);
    expect(organization.organizations[organizationId]).toEqual({ name: 'Acme', slug: 'acme-console', deleted: false });
    expect(organization.people[aliceId]).toEqual({ name: 'Alice', email: 'alice@example.com' });
  });

  it('takes several values per filter: two users, two CIDR ranges, two actor kinds, two streams; the export too', async () => {
    const positions = async (query: string): Promise<number[]> => (await search(`${query}&limit=500`)).events.map((e) => e.position);
    const union = (...lists: number[][]) => [...new Set(lists.flat())].sort((a, b) => b - a);

    const alice = await positions(`user=${aliceId}`);
    const bob = await positions(`user=${bobId}`);
    expect(alice.length).toBeGreaterThan(0);
    expect(bob.length).toBeGreaterThan(0);
    const both = await positions(`user=${aliceId},${bobId}`);
    expect(both).toEqual(union(alice, bob));
    // The ban names both (Alice did it to Bob): listed once.
    expect(both.length).toBeLessThan(alice.length + bob.length);
    expect(await positions(`user=${aliceId}&user=${bobId}`)).toEqual(both);
    // Paged by three, the pages join up to the same list.
    const paged: number[] = [];
    let cursor: number | null = null;
    do {
      const page: SearchAnswer = await search(`user=${aliceId},${bobId}&limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
      paged.push(...page.events.map((e) => e.position));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(paged).toEqual(both);

    const ranges = await search('ip=203.0.113.0/24,192.0.2.32/28&limit=500');
    const addresses = new Set(ranges.events.map((e) => e.metadata.ipAddress));
    expect(addresses).toEqual(new Set([ALICE_IP, BOB_IP]));
    expect((await positions('ip=203.0.113.0/24,192.0.2.32/28'))).toEqual(union(await positions('ip=203.0.113.0/24'), await positions('ip=192.0.2.32/28')));

    const kinds = await search('actorKind=anonymous,admin&limit=500');
    expect(new Set(kinds.events.map((e) => e.actor.kind))).toEqual(new Set(['anonymous', 'admin']));
    expect(kinds.events.map((e) => e.type)).toEqual(expect.arrayContaining(['credentials.sign_in_failed.v1', 'user.banned.v1']));

    const actors = await search(`actor=${aliceId},${bobId}&limit=500`);
    expect(actors.events.every((e) => e.actor.id === aliceId || e.actor.id === bobId)).toBe(true);
    expect(await positions(`organization=${organizationId}&user=${aliceId},${daveId}`)).toEqual(await positions(`organization=${organizationId}&user=${aliceId}`));

    const streams = await search(`stream=user-${aliceId},user-${bobId}&order=oldest&limit=500`);
    expect(new Set(streams.events.map((e) => e.streamId))).toEqual(new Set([`user-${aliceId}`, `user-${bobId}`]));

    const exported = await api.app.inject({ method: 'GET', url: `/ops/audit/export?user=${aliceId},${bobId}`, headers: { 'x-api-key': KEY } });
    expect(exported.statusCode).toBe(200);
    expect(exported.body.trimEnd().split('\n').map((line) => (JSON.parse(line) as AuditEvent).position)).toEqual(both);

    const refused = await api.app.inject({ method: 'GET', url: '/ops/audit/events?ip=203.0.113.0/24,not-an-address', headers: { 'x-api-key': KEY } });
    expect(refused.statusCode).toBe(400);
  });

  it('shows one event with its verified hash-chain link and the state it changed: a ban turns banned from false to true', async () => {
    const [ban] = (await search('type=user.banned.v1')).events;
    const detail = await get<EventDetail>(`/ops/audit/events/${ban!.position}`);
    expect(detail.event).toEqual(ban);
    expect(detail.chain).toMatchObject({ previousPosition: ban!.position - 1, hash: ban!.hash, verifies: true });
    const previous = await get<EventDetail>(`/ops/audit/events/${ban!.position - 1}`);
    expect(detail.chain.previousHash).toBe(previous.event.hash);
    expect(previous.chain.verifies).toBe(true);
    expect(detail.subjects.map((s) => [s.kind, s.id])).toEqual([['user', bobId]]);
    const [bob] = detail.subjects;
    expect(bob!.changes).toContainEqual({ path: 'banned', before: false, after: true });
    expect(bob!.before).toMatchObject({ banned: false, account: { ban: null } });
    expect(bob!.after).toMatchObject({ banned: true, account: { ban: { expiresAt: null } } });
    expect(detail.people[bobId]).toEqual({ name: 'Bob', email: 'bob@example.com' });

    const first = await get<EventDetail>('/ops/audit/events/1');
    expect(first.chain).toMatchObject({ previousPosition: 0, previousHash: '0'.repeat(64), verifies: true });

    // A member joining changes the organization; the member's own view of it changes with their index's event.
    const [joined] = (await search(`organization=${organizationId}&type=organization.member_added.v1`)).events;
    const membership = await get<EventDetail>(`/ops/audit/events/${joined!.position}`);
    const organizationSide = membership.subjects.find((s) => s.kind === 'organization')!;
    expect(organizationSide.id).toBe(organizationId);
    expect(organizationSide.changes.some((c) => c.path.startsWith('members.') && c.before === null)).toBe(true);
    expect(membership.organizations[organizationId]).toMatchObject({ name: 'Acme' });
    const [indexed] = (await search(`user=${aliceId}&type=organization_index.joined.v1`)).events;
    const memberSide = await get<EventDetail>(`/ops/audit/events/${indexed!.position}`);
    expect(memberSide.subjects.map((s) => [s.kind, s.id])).toEqual([['user', aliceId]]);
    expect(memberSide.subjects[0]!.changes).toEqual([{ path: `organizations.${organizationId}`, before: null, after: { name: 'Acme', role: 'owner' } }]);

    // A sign-in failure changes no folded state.
    const [failure] = (await search('type=credentials.sign_in_failed.v1')).events;
    expect((await get<EventDetail>(`/ops/audit/events/${failure!.position}`)).subjects).toEqual([]);

    const head = await api.db.store.headPosition();
    const missing = await api.app.inject({ method: 'GET', url: `/ops/audit/events/${head + 1000}`, headers: { 'x-api-key': KEY } });
    expect(missing.statusCode).toBe(404);
  });

  it('lists a user\'s and an organization\'s history points, paged with a total, each one a point time travel folds at', async () => {
    const points: HistoryAnswer['points'] = [];
    let cursor: number | null = null;
    let total = 0;
    do {
      const page: HistoryAnswer = await get<HistoryAnswer>(`/ops/audit/users/${aliceId}/history?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.points.length).toBeLessThanOrEqual(2);
      points.push(...page.points);
      total = page.total;
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(points).toHaveLength(total);
    expect(points.map((p) => p.position)).toEqual([...points.map((p) => p.position)].sort((a, b) => a - b));
    expect(points.map((p) => p.type)).toEqual(expect.arrayContaining(['user.registered.v1', 'session_index.session_opened.v1', 'organization.member_added.v1', 'organization_index.joined.v1']));
    // What Alice did to others (a ban, a deletion) is not her history; a failed guess at her password changes nothing folded.
    expect(points.map((p) => p.type)).not.toContain('user.banned.v1');
    expect(points.map((p) => p.type)).not.toContain('credentials.sign_in_failed.v1');
    const joined = points.find((p) => p.type === 'organization_index.joined.v1')!;
    const before = await get<{ state: { organizations: Record<string, unknown> } }>(`/ops/audit/users/${aliceId}?at=${joined.position - 1}`);
    const after = await get<{ state: { organizations: Record<string, unknown> } }>(`/ops/audit/users/${aliceId}?at=${joined.position}`);
    expect(before.state.organizations).toEqual({});
    expect(after.state.organizations).toEqual({ [organizationId]: { name: 'Acme', role: 'owner' } });

    const newest = await get<HistoryAnswer>(`/ops/audit/users/${aliceId}/history?order=newest&limit=1`);
    expect(newest.points[0]!.position).toBe(points.at(-1)!.position);

    const organization = await get<HistoryAnswer>(`/ops/audit/organizations/${organizationId}/history`);
    const ofStream = await search(`stream=organization-${organizationId}&order=oldest&limit=500`);
    expect(organization.points.map((p) => p.position)).toEqual(ofStream.events.map((e) => e.position));
    expect(organization.total).toBe(ofStream.events.length);
    expect(organization.points.slice(0, 2).map((p) => p.type)).toEqual(['organization.created.v1', 'organization.member_added.v1']);
  });

  it('shows failed sign-ins and lockouts per address and per account, and unused roles', async () => {
    const view = await get<SecurityOverview>('/ops/security', asAdmin);
    expect(view.window.hours).toBe(24);
    expect(view.signIns).toMatchObject({ failures: 4, failuresWithoutAccount: 0, identifierLockouts: 1, accountLockouts: 1 });
    expect(view.signIns.byAddress.total).toBe(1);
    expect(view.signIns.byAddress.top).toEqual([{ address: GUESSER_IP, failures: 4, lockouts: 2, rateLimited: 0, lastSeen: expect.any(String) as string }]);
    expect(view.signIns.byAccount.total).toBe(2);
    expect(view.signIns.byAccount.top).toEqual([
      { userId: bobId, person: { name: 'Bob', email: 'bob@example.com' }, failures: 3, lockouts: 1, lastSeen: expect.any(String) as string },
      { userId: aliceId, person: { name: 'Alice', email: 'alice@example.com' }, failures: 1, lockouts: 0, lastSeen: expect.any(String) as string },
    ]);
    expect((await get<SecurityOverview>('/ops/security?top=1')).signIns.byAccount).toMatchObject({ total: 2, top: [{ userId: bobId }] });

    // An unknown email's failures count against the address and the total, never an account.
    expect((await post(api.app, 'sign-in/email', { email: 'nobody@example.com', password: 'x' }, { ip: '198.51.100.10' })).status).toBe(401);
    await indexed();
    const after = await get<SecurityOverview>('/ops/security');
    expect(after.signIns).toMatchObject({ failures: 5, failuresWithoutAccount: 1 });
    expect(after.signIns.byAddress.total).toBe(2);
    expect(after.signIns.byAccount.total).toBe(2);

    expect(view.roles.organization).toEqual([
      { role: 'owner', holders: 1, unused: false },
      { role: 'admin', holders: 0, unused: true },
      { role: 'member', holders: 0, unused: true },
    ]);
    expect(view.roles.admin).toEqual([
      { role: 'admin', holders: 0, unused: true },
      { role: 'user', holders: 3, unused: false },
    ]);
    expect(view.roles.configuredAdmins).toEqual([{ userId: aliceId, exists: true }]);
    expect((await get<SecurityOverview>('/ops/security')).roles.configuredAdmins).toEqual([]);
  });

  it('lists users with no sign-in for the dormant period, counted, with a sample', async () => {
    const now = await get<SecurityOverview>('/ops/security');
    expect(now.dormantUsers).toEqual({ days: 90, total: 0, sample: [] });
    // A hundred days on, Alice signs in again; Bob (banned) and Dave have not since they signed up.
    clockOffsetMs = 100 * DAY_MS;
    expect((await post(api.app, 'sign-in/email', { email: 'alice@example.com', password: PASSWORD }, { ip: ALICE_IP })).status).toBe(200);
    await indexed();
    const later = await get<SecurityOverview>('/ops/security');
    expect(later.dormantUsers.total).toBe(2);
    expect(later.dormantUsers.sample.map((u) => u.id)).toEqual([bobId, daveId]);
    expect(later.dormantUsers.sample[1]).toMatchObject({ id: daveId, name: 'Dave', email: 'dave@example.com' });
    expect(Date.parse(later.dormantUsers.sample[1]!.lastSignInAt!)).toBeLessThan(Date.now() + DAY_MS);
    expect((await get<SecurityOverview>('/ops/security?sample=0')).dormantUsers).toEqual({ days: 90, total: 2, sample: [] });
    expect((await get<SecurityOverview>('/ops/security?dormantDays=200')).dormantUsers.total).toBe(0);
  });

  it('says an event changed in storage does not verify', async () => {
    const [update] = (await search(`user=${daveId}&type=user.registered.v1`)).events;
    await api.db.pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`ALTER TABLE events DISABLE TRIGGER events_append_only`);
      await tx.query(sql.unsafe`UPDATE events SET data = data || '{"name":"Mallory"}'::jsonb WHERE position = ${update!.position}`);
      await tx.query(sql.unsafe`ALTER TABLE events ENABLE TRIGGER events_append_only`);
    });
    expect((await get<EventDetail>(`/ops/audit/events/${update!.position}`)).chain.verifies).toBe(false);
    // The next link still holds over its own bytes: only the changed event fails.
    expect((await get<EventDetail>(`/ops/audit/events/${update!.position + 1}`)).chain.verifies).toBe(true);
  });
});
