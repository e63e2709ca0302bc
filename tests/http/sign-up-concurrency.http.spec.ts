import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieNames, DEFAULT_PASSWORD, expectCatalogueError, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { HttpClient, startSystem, type HttpResponse, type System } from '../support/system.ts';

const PARALLEL = 20;

let system: System;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system?.stop();
});

async function count(text: string, values: unknown[]): Promise<number> {
  const rows = await system.query<{ n: string }>(text, values);
  return Number(rows[0]!.n);
}

/**
 * Email uniqueness is decided by the reservation stream's atomic append, not by a read-model lookup, so a
 * burst of sign-ups for one address (in mixed letter case) must leave exactly one account and no trace of
 * the losers: no user, no credential account, no session, not even in the log.
 */
describe('parallel sign-ups with one email', () => {
  it(`lets exactly one of ${PARALLEL} win; the rest get 422 USER_ALREADY_EXISTS and leave nothing behind`, async () => {
    const email = uniqueEmail('race');
    const clients = Array.from({ length: PARALLEL }, () => new HttpClient(system.authUrl));
    // Start them all before awaiting any, with varying case, so they meet the reservation at the same time.
    const responses: HttpResponse<{ token: string; user: { id: string; email: string } }>[] = await Promise.all(
      clients.map((c, i) =>
        c.post<{ token: string; user: { id: string; email: string } }>('sign-up/email', {
          name: `Racer ${i}`,
          email: i % 2 === 0 ? email : email.toUpperCase(),
          password: DEFAULT_PASSWORD,
        }),
      ),
    );

    const winners = responses.filter((r) => r.status === 200);
    expect(winners, responses.map((r) => `${r.status} ${r.text}`).join('\n')).toHaveLength(1);
    for (const loser of responses.filter((r) => r.status !== 200)) {
      expectCatalogueError(loser, 'USER_ALREADY_EXISTS');
      expect(loser.setCookies).toEqual([]);
    }
    const winner = winners[0]!.json;
    expect(winner.user.email).toBe(email);

    expect(await count(`SELECT count(*) AS n FROM "user" WHERE email = $1`, [email])).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM "user"`, [])).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM account WHERE "userId" = $1 AND "providerId" = 'credential'`, [winner.user.id])).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM account`, [])).toBe(1);
    // One reservation, on the address's keyed stream (its email encrypted there).
    expect(await count(`SELECT count(*) AS n FROM events WHERE type = 'email.reserved.v1' AND stream_id = $1`, [system.storedStreamId(`email-${email}`)])).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM events WHERE type = 'user.registered.v1'`, [])).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM events WHERE type = 'user.credential_account_created.v2'`, [])).toBe(1);
    // No orphan: the only session (in the read model and in the log) is the winner's.
    const sessions = await system.query<{ userId: string }>(`SELECT "userId" FROM session`);
    expect(sessions).toEqual([{ userId: winner.user.id }]);
    expect(await count(`SELECT count(*) AS n FROM events WHERE type = 'session.created.v2'`, [])).toBe(1);

    // And the winner's session works.
    const winnerClient = clients[responses.indexOf(winners[0]!)]!;
    expect(winnerClient.cookie(cookieNames.sessionToken)).toBeDefined();
    const current = await winnerClient.get<SessionAnswerJson>('get-session');
    expect(current.json.session.token).toBe(winner.token);
    expect(current.json.user.id).toBe(winner.user.id);
  });
});
