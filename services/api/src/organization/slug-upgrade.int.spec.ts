import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberAdded, OrganizationCreated, OrganizationJoined, OrganizationSlugReserved, streams } from '@portcullis/contracts';
import { sql, systemRequest } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { expectOk, expectRefusal, organizationApi, type Answer, type SignedUpUser } from '../../../../tests/support/organization-api.ts';

/**
 * A log written before slugs were normalized: an organization holding `LEGACY`. An api starting on it reserves
 * `legacy` for that organization too, so the look-alike is refused as taken; the organization is found by
 * either spelling, and giving the slug up frees both. In-process on real Postgres.
 */
describe('organization slugs stored before normalization', () => {
  let api: InProcessApi;
  let owner: SignedUpUser;
  let upgraded: InProcessApi['app'];
  const legacyId = 'legacy-organization';

  async function call<T = unknown>(method: 'GET' | 'POST', path: string, body: unknown, headers: Record<string, string>): Promise<Answer<T>> {
    const response = await upgraded.inject({ method, url: `/api/auth${path}`, headers, ...(body !== undefined ? { payload: body as object } : {}) });
    return { status: response.statusCode, json: (response.body ? JSON.parse(response.body) : null) as T };
  }

  beforeAll(async () => {
    api = await startInProcessApi('slug_upgrade', { BASE_URL: 'http://localhost:3000', AUTH_RATE_LIMIT_ENABLED: 'false' });
    owner = await organizationApi(api).newUser('legacy-owner');
    // What better-auth-compatible code before normalization wrote for `organization/create` with slug `LEGACY`.
    await api.contextOf(api.app).commands.handle({ name: 'legacy-create', request: systemRequest, actorId: owner.userId }, async (unit) => {
      unit.append(
        streams.organization(legacyId),
        [
          OrganizationCreated({ organizationId: legacyId, name: 'Legacy', slug: 'LEGACY', logo: null, metadata: null, createdByUserId: owner.userId }),
          MemberAdded({ organizationId: legacyId, memberId: 'legacy-member', userId: owner.userId, role: 'owner', teamId: null, via: 'creator' }),
        ],
        { expected: 'no_stream' },
      );
      unit.append(streams.organizationSlug('LEGACY'), [OrganizationSlugReserved({ slug: 'LEGACY', organizationId: legacyId })], { expected: 'no_stream' });
      unit.append(streams.userOrganizations(owner.userId), [OrganizationJoined({ userId: owner.userId, organizationId: legacyId })], { expected: 'any' });
      await Promise.resolve();
    });
    // The first api started on an empty log; this one starts on a log that has something to carry.
    await api.db.pool.query(sql.unsafe`DELETE FROM log_upgrade WHERE name = 'organization-slugs-normalized'`);
    upgraded = await api.another();
  });

  afterAll(async () => {
    await api?.close();
  });

  it('refuses the normalized look-alike as taken, finds the organization by either spelling, and frees both on a rename', async () => {
    const other = await organizationApi(api).newUser('look-alike');
    expectRefusal(await call('POST', '/organization/create', { name: 'Phish', slug: 'legacy' }, other.headers), 'ORGANIZATION_ALREADY_EXISTS');
    expectRefusal(await call('POST', '/organization/check-slug', { slug: 'Legacy' }, other.headers), 'ORGANIZATION_SLUG_ALREADY_TAKEN');
    for (const organizationSlug of ['LEGACY', 'legacy']) {
      const found = expectOk<{ id: string }>(await call('GET', `/organization/get-full-organization?organizationSlug=${organizationSlug}`, undefined, owner.headers));
      expect(found.id).toBe(legacyId);
    }

    expectOk(await call('POST', '/organization/update', { organizationId: legacyId, data: { slug: 'renamed-legacy' } }, owner.headers));
    const created = expectOk<{ slug: string }>(await call('POST', '/organization/create', { name: 'Newcomer', slug: 'legacy' }, other.headers));
    expect(created.slug).toBe('legacy');
  });
});
