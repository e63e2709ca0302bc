import { expect } from 'vitest';
import { errorCatalogue, wireCode, type ErrorCode } from '@portcullis/contracts';
import type { InProcessApi } from './in-process-api.ts';

export const ORGANIZATION_SPEC_PASSWORD = 'correct horse battery';

export interface Answer<T = unknown> {
  readonly status: number;
  readonly json: T;
}

/** A signed-up user whose requests carry its session as a bearer token. */
export interface SignedUpUser {
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly headers: Record<string, string>;
}

/** A membership as the member routes answer it: `teamId` where one was joined, `user` where listed with it. */
export interface MemberJson {
  id: string;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: string;
  teamId?: string;
  user?: { id: string; name: string; email: string; image: string | null };
}

export interface ActiveSelectionJson {
  activeOrganizationId: string | null;
  activeTeamId: string | null;
}

/** Requests against an in-process api, under the auth base path, for organization route specs. */
export function organizationApi(api: InProcessApi, basePath = '/api/auth') {
  async function call<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
    const response = await api.app.inject({ method, url: `${basePath}${path}`, headers, ...(body !== undefined ? { payload: body as object } : {}) });
    return { status: response.statusCode, json: (response.body ? JSON.parse(response.body) : null) as T };
  }

  let users = 0;
  /** A new user, signed up with `email` (else one made unique from `label`), as the server answers for it. */
  async function newUser(label: string, email = `${label}-${users + 1}@example.com`): Promise<SignedUpUser> {
    users += 1;
    const signedUp = await call<{ token: string; user: { id: string; email: string } }>('POST', '/sign-up/email', {
      name: label,
      email,
      password: ORGANIZATION_SPEC_PASSWORD,
    });
    expect(signedUp.status, JSON.stringify(signedUp.json)).toBe(200);
    const { token, user } = signedUp.json;
    return { userId: user.id, email: user.email, name: label, headers: { authorization: `Bearer ${token}` } };
  }

  let organizations = 0;
  /**
   * An organization of `owner` (active on the owner's session) under a slug unique to this api, with each of
   * the others added in their role by a server call (the api's AUTH_SERVER_API_KEY) and working in it; its id.
   */
  async function newOrganization(owner: SignedUpUser, name: string, others: Array<[SignedUpUser, string]> = []): Promise<string> {
    organizations += 1;
    const created = await call<{ id: string }>('POST', '/organization/create', { name, slug: `${name.toLowerCase()}-${organizations}` }, owner.headers);
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const organizationId = created.json.id;
    const server = serverHeaders();
    for (const [user, role] of others) {
      const added = await call('POST', '/organization/add-member', { userId: user.userId, role, organizationId }, server);
      expect(added.status, JSON.stringify(added.json)).toBe(200);
      const active = await call('POST', '/organization/set-active', { organizationId }, user.headers);
      expect(active.status, JSON.stringify(active.json)).toBe(200);
    }
    return organizationId;
  }

  /** The headers of a server call: the api's own AUTH_SERVER_API_KEY. */
  function serverHeaders(): Record<string, string> {
    const key = api.config.serverApiKey;
    if (key === null) throw new Error('organizationApi: the api has no AUTH_SERVER_API_KEY for server calls');
    return { 'x-api-key': key };
  }

  /** The session's active organization and team as get-session shows them, past any cookie cache. */
  async function activeSelection(user: SignedUpUser): Promise<ActiveSelectionJson> {
    const answer = await call<{ session: ActiveSelectionJson }>('GET', '/get-session?disableCookieCache=true', undefined, user.headers);
    expect(answer.status).toBe(200);
    const { activeOrganizationId, activeTeamId } = answer.json.session;
    return { activeOrganizationId, activeTeamId };
  }

  return { call, newUser, newOrganization, activeSelection };
}

/** The answer has `status` (200 unless told); its body, as the caller expects it to be. */
export function expectOk<T = unknown>(answer: Answer, status = 200): T {
  expect(answer.status, JSON.stringify(answer.json)).toBe(status);
  return answer.json as T;
}

/** The answer is the catalogue's refusal: status (unless a route overrides it), wire code and message to the letter. */
export function expectRefusal(answer: Answer, code: ErrorCode, status: number = errorCatalogue[code].status): void {
  const json = answer.json as { code?: string; message?: string } | null;
  expect({ status: answer.status, code: json?.code, message: json?.message }).toEqual({
    status,
    code: wireCode(code),
    message: errorCatalogue[code].message,
  });
}
