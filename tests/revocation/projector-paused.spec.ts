import { afterAll, beforeAll, expect, it } from 'vitest';
import { SessionRevoked, VerificationTokenIssued, streams } from '@portcullis/contracts';
import { generateSessionToken, hashToken, PostgresEventStore, sessionIdForTokenHash } from '@portcullis/platform';
import { DEFAULT_PASSWORD, signUp, uniqueEmail } from '../support/auth.ts';
import { domainWrite, metadataAt } from '../support/event-log.ts';
import { spawnService, waitFor, type ServiceProcess } from '../support/processes.ts';
import { describeWithRedis } from '../support/redis.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';
import { serviceEntries } from '../../scripts/build.ts';

const MAX_LAG_MS = 1000;
const LEASE_MS = 2000;

/**
 * What the api promises while its projectors are stopped (frozen, SIGSTOP): writes answer after the
 * read-your-writes timeout and what they wrote is read back from the log; a revocation answers within the
 * staleness bound and is effective by then; and a standby projector takes over a frozen holder's
 * projections within its lease.
 */
describeWithRedis('with the projector paused (real processes, Redis cache)', () => {
  let system: System;
  let standby: ServiceProcess;
  let store: PostgresEventStore;

  beforeAll(async () => {
    system = await startSystem({
      redis: true,
      env: {
        AUTH_READ_YOUR_WRITES_TIMEOUT_MS: '300',
        AUTH_SESSION_READ_MAX_LAG_MS: String(MAX_LAG_MS),
        AUTH_RESET_PASSWORD_REVOKE_SESSIONS: 'true',
        PROJECTOR_LEASE_MS: String(LEASE_MS),
      },
    });
    store = new PostgresEventStore({ databaseUrl: system.env.DATABASE_URL! });
  });

  afterAll(async () => {
    system?.projector.kill('SIGCONT');
    standby?.kill('SIGCONT');
    await standby?.stop();
    await store?.close();
    await system?.stop();
  });

  const client = (): HttpClient => new HttpClient(system.authUrl);

  async function sessionOf(token: string): Promise<unknown> {
    const response = await fetch(`${system.authUrl}/get-session`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    return response.json();
  }

  async function post(path: string, token: string, body: unknown = {}): Promise<Response> {
    return fetch(`${system.authUrl}/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: system.baseUrl },
      body: JSON.stringify(body),
    });
  }

  /** Runs `work` with every projector frozen, and thaws them whatever happens. */
  async function withProjectorsFrozen<T>(work: () => Promise<T>): Promise<T> {
    const frozen = [system.projector, ...(standby ? [standby] : [])];
    for (const projector of frozen) projector.kill('SIGSTOP');
    try {
      return await work();
    } finally {
      for (const projector of frozen) projector.kill('SIGCONT');
    }
  }

  it('answers a sign-in after the read-your-writes timeout, serves its session from the log, and makes a sign-out effective within the bound', async () => {
    const { user, token: before } = await signUp(client());
    await withProjectorsFrozen(async () => {
      const signedIn = await client().post<{ token: string }>('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD });
      expect(signedIn.status).toBe(200);
      // No read model holds it: the api reads it back from the log.
      expect(await sessionOf(signedIn.json.token)).toMatchObject({ user: { id: user.id } });

      // Its read models cannot apply the revocation; the answer comes once no api believes them any more.
      const startedAt = Date.now();
      expect((await post('sign-out', before)).status).toBe(200);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(MAX_LAG_MS);
      expect(await sessionOf(before)).toBeNull();
      expect(await sessionOf(signedIn.json.token)).not.toBeNull();
    });
    // Thawed: the read models catch up, and agree.
    await waitFor(async () => (await system.query(`SELECT 1 FROM session WHERE "userId" = $1`, [user.id])).length === 1, {
      timeoutMs: 20_000,
      message: 'the session table to drop the ended session',
    });
    expect(await sessionOf(before)).toBeNull();
  });

  it('ends, with a password reset, every session a racing sign-in with the old password appended before it', async () => {
    const { user } = await signUp(client());
    // The reset link's token, as the api would mail it.
    const resetToken = generateSessionToken();
    await store.append([
      domainWrite(
        streams.verification(hashToken(resetToken)),
        'no_stream',
        [VerificationTokenIssued({ purpose: 'reset-password', tokenHash: hashToken(resetToken), userId: user.id, expiresAt: new Date(Date.now() + 3_600_000).toISOString() })],
        metadataAt(new Date()),
      ),
    ]);
    const signIns: Promise<string | null>[] = [];
    let reset!: Promise<Response>;
    await withProjectorsFrozen(async () => {
      for (let i = 0; i < 12; i += 1) {
        signIns.push(
          client()
            .post<{ token: string }>('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })
            .then((r) => (r.status === 200 ? r.json.token : null)),
        );
        if (i === 6) {
          reset = fetch(`${system.authUrl}/reset-password`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', origin: system.baseUrl },
            body: JSON.stringify({ token: resetToken, newPassword: `${DEFAULT_PASSWORD} new` }),
          });
        }
      }
      expect((await reset).status).toBe(200);
      const tokens = (await Promise.all(signIns)).filter((t): t is string => t !== null);
      // Every sign-in with the old password either landed before the reset, and was ended by it, or was refused.
      for (const token of tokens) expect(await sessionOf(token)).toBeNull();
    });
    const positions = await system.query<{ created: string; reset: string }>(
      `SELECT (SELECT max(position) FROM events WHERE type = 'session.created.v2' AND data->>'userId' = $1) AS created,
              (SELECT position FROM events WHERE type = 'user.password_changed.v1' AND data->>'userId' = $1) AS reset`,
      [user.id],
    );
    expect(Number(positions[0]!.created)).toBeLessThan(Number(positions[0]!.reset));
    const open = await system.query(
      `SELECT c.data->>'sessionId' AS id FROM events c WHERE c.type = 'session.created.v2' AND c.data->>'userId' = $1
         AND NOT EXISTS (SELECT 1 FROM events r WHERE r.type = 'session.revoked.v2' AND r.data->>'sessionId' = c.data->>'sessionId')`,
      [user.id],
    );
    expect(open).toEqual([]);
  });

  it(`hands a frozen holder's projections to the standby within its lease (${LEASE_MS} ms)`, async () => {
    standby = spawnService({ name: 'standby', entry: serviceEntries.projector.built, env: { ...system.env, LOG_LEVEL: 'info' } });
    await standby.waitForOutput(/projector started/, 60_000);
    for (const frozen of [system.projector, standby]) {
      frozen.kill('SIGSTOP');
      try {
        const startedAt = Date.now();
        const { token } = await signUp(client(), { email: uniqueEmail('failover') });
        const head = await store.headPosition();
        // Whichever process held which projection, each is moved on by a live one while this one is frozen.
        await waitFor(
          async () => {
            const rows = await system.query<{ position: string }>(`SELECT position FROM projection_checkpoints WHERE name IN ('identity', 'sessions', 'organizations')`);
            return rows.length === 3 && rows.every((r) => Number(r.position) >= head);
          },
          { timeoutMs: LEASE_MS * 10, message: `the projections to move on while ${frozen.name} is frozen` },
        ).catch((error: unknown) => {
          throw new Error(`${String(error)}\n--- standby\n${standby.output().slice(-3000)}`);
        });
        console.info(`[projector-paused] ${frozen.name} frozen: every projection at the head after ${Date.now() - startedAt} ms`);
        expect(await sessionOf(token)).not.toBeNull();
      } finally {
        frozen.kill('SIGCONT');
      }
    }
  });
});

/**
 * A read model that may still be believed (within a long staleness bound here) holds a session whose own
 * stream has ended it; a refresh is due on every read. The refresh reads the stream, finds the session
 * ended, and that, not the read model, is the answer.
 */
describeWithRedis('a due refresh of a session its stream has ended', () => {
  let system: System;
  let store: PostgresEventStore;

  beforeAll(async () => {
    system = await startSystem({ redis: true, env: { AUTH_SESSION_UPDATE_AGE: '0', AUTH_SESSION_READ_MAX_LAG_MS: '60000' } });
    store = new PostgresEventStore({ databaseUrl: system.env.DATABASE_URL! });
  });

  afterAll(async () => {
    system?.projector.kill('SIGCONT');
    await store?.close();
    await system?.stop();
  });

  it('answers no session, however current the read model that still holds it', async () => {
    const { token, user } = await signUp(new HttpClient(system.authUrl));
    const tokenHash = hashToken(token);
    const sessionId = sessionIdForTokenHash(tokenHash);
    const userId = user.id;
    // The session table shows a new session a moment after the cache does.
    await waitFor(async () => (await system.query(`SELECT 1 FROM session WHERE token = $1`, [tokenHash])).length === 1, {
      timeoutMs: 10_000,
      message: 'the session table to hold the session',
    });
    system.projector.kill('SIGSTOP');
    try {
      // Ended by another api whose revocation the read models have not applied yet.
      await store.append([
        domainWrite(streams.session(sessionId), 'any', [SessionRevoked({ sessionId, userId, tokenHash, reason: 'signed_out' })], metadataAt(new Date())),
      ]);
      const response = await fetch(`${system.authUrl}/get-session`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      expect(await response.json()).toBeNull();
    } finally {
      system.projector.kill('SIGCONT');
    }
  });
});
