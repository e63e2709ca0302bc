import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessApi, type InProcessApi } from '../../../tests/support/in-process-api.ts';
import { expectRefusal, organizationApi, type Answer, type SignedUpUser } from '../../../tests/support/organization-api.ts';

const env = {
  AUTH_SECRET: 'write-conflicts-secret-0123456789abcdefgh',
  BASE_URL: 'http://localhost:3000',
  AUTH_RATE_LIMIT_ENABLED: 'false',
  AUTH_SERVER_API_KEY: 'write-conflicts-server-api-key-0123456789',
};

async function call(app: FastifyInstance, path: string, body: object, headers: Record<string, string>): Promise<Answer> {
  const response = await app.inject({ method: 'POST', url: `/api/auth${path}`, headers, payload: body });
  return { status: response.statusCode, json: response.body ? (JSON.parse(response.body) as unknown) : null };
}

/** A write of each kind of stream a route appends to: the session, the user, the organization. */
interface WriteRoute {
  readonly name: string;
  /** The n-th write: each differs from the one before, so every one appends. */
  readonly write: (app: FastifyInstance, n: number) => Promise<Answer>;
  /**
   * Organization commands take more attempts than a test process can be given (many members write to one
   * organization), so one stale state is always retried away there.
   */
  readonly ownAttempts?: true;
}

/**
 * Two api processes (two apps on one database, each with its own kept states and queues) writing to the same
 * streams. A conflict that retries cannot resolve is the catalogue's 409; the retries resolve every
 * conflict of ordinary concurrency; no route answers 500 to either.
 */
describe('writes from two processes to the same streams', () => {
  let api: InProcessApi;
  let owner: SignedUpUser;
  let organizationId: string;
  let memberId: string;
  let routes: WriteRoute[];

  beforeAll(async () => {
    api = await startInProcessApi('write_conflicts', env);
    const http = organizationApi(api);
    owner = await http.newUser('owner');
    const member = await http.newUser('member');
    organizationId = await http.newOrganization(owner, 'Conflicts', [[member, 'member']]);
    const members = await http.call<{ members: Array<{ id: string; userId: string }> }>(
      'GET',
      `/organization/list-members?organizationId=${organizationId}`,
      undefined,
      owner.headers,
    );
    memberId = members.json.members.find((m) => m.userId === member.userId)!.id;
    routes = [
      {
        name: 'set-active (session stream)',
        write: (app, n) => call(app, '/organization/set-active', { organizationId: n % 2 === 0 ? null : organizationId }, owner.headers),
      },
      { name: 'update-user (user stream)', write: (app, n) => call(app, '/update-user', { name: `Owner ${n}` }, owner.headers) },
      {
        name: 'organization update (organization stream)',
        ownAttempts: true,
        write: (app, n) => call(app, '/organization/update', { organizationId, data: { name: `Conflicts ${n}` } }, owner.headers),
      },
      {
        name: 'update-member-role (organization stream)',
        ownAttempts: true,
        write: (app, n) => call(app, '/organization/update-member-role', { organizationId, memberId, role: n % 2 === 0 ? 'admin' : 'member' }, owner.headers),
      },
      {
        name: 'invite-member (organization stream)',
        ownAttempts: true,
        write: (app, n) => call(app, '/organization/invite-member', { organizationId, email: `invitee-${n}@example.com`, role: 'member' }, owner.headers),
      },
    ];
  });

  afterAll(async () => {
    await api?.close();
  });

  it('answers a conflict its retries cannot resolve with 409 CONFLICT, not 500', async () => {
    // One attempt each: a process that decides on the state it kept, after the other process moved the
    // stream, has its append refused and no retry left.
    const first = await api.another({ commandAttempts: 1 });
    const second = await api.another({ commandAttempts: 1 });
    let n = 1_000;
    for (const route of routes.filter((r) => !r.ownAttempts)) {
      // Twice, so that one of them appends (set-active answers a selection already made without a write).
      for (const app of [first, first, second]) expect((await route.write(app, (n += 1))).status, route.name).toBe(200);
      const stale = await route.write(first, (n += 1));
      expect(stale.status, route.name).toBe(409);
      expectRefusal(stale, 'CONFLICT');
    }
  });

  it('resolves ordinary concurrency with retries: every write of many at once from both processes succeeds', async () => {
    const apps = [api.app, await api.another()];
    let n = 2_000;
    for (const route of routes) {
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => route.write(apps[i % 2]!, (n += 1))));
      expect(
        answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${JSON.stringify(a.json)}`),
        route.name,
      ).toEqual([]);
    }
  });
});
