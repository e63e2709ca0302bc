import { randomUUID } from 'node:crypto';
import {
  CredentialAccountCreated,
  EmailReserved,
  SessionCreated,
  SessionOpened,
  SessionRevoked,
  SessionsClosed,
  streams,
  UserRegistered,
  type DomainEvent,
} from '@portcullis/contracts';
import { generateSessionToken, hashToken, sessionIdForTokenHash, type EventStore, type StreamWrite } from '@portcullis/platform';
import { domainWrite, metadataAt } from './event-log.ts';

/** A password hash of the right shape; nobody signs in with these users by password. */
const PASSWORD_HASH = '$argon2id$v=19$m=19456,t=2,p=1$YnVsa3NhbHQ$YnVsa2hhc2hidWxraGFzaA';

export interface BulkSession {
  readonly userId: string;
  readonly token: string;
}

export interface BulkHistory {
  /** Sessions still live at the end of the history. */
  readonly live: readonly BulkSession[];
  /** Sessions the history ended (each revoked after it was created, further down the log). */
  readonly revoked: readonly BulkSession[];
  readonly events: number;
}

/**
 * A long history written straight to the log, as years of use would leave it: users registering, each
 * signing in several times, half of the sessions later revoked. What the api appends for each (the
 * session's stream and the user's session index), so that every read model and the log-confirming path
 * treat these sessions as the api's own. Appended in large atomic writes: it takes seconds, not hours.
 */
export async function appendBulkHistory(
  store: Pick<EventStore, 'append'>,
  options: { readonly users: number; readonly sessionsPerUser: number; readonly usersPerAppend?: number },
): Promise<BulkHistory> {
  const live: BulkSession[] = [];
  const revoked: BulkSession[] = [];
  let events = 0;
  const now = new Date();
  const expiresAt = new Date(now.getTime() + 7 * 24 * 3600 * 1000).toISOString();
  const metadata = metadataAt(now);
  const usersPerAppend = options.usersPerAppend ?? 100;
  for (let first = 0; first < options.users; first += usersPerAppend) {
    const writes: StreamWrite[] = [];
    const revocations: StreamWrite[] = [];
    for (let u = first; u < Math.min(options.users, first + usersPerAppend); u += 1) {
      const userId = randomUUID();
      const email = `bulk-${userId}@example.test`;
      writes.push(
        domainWrite(streams.email(email), 'no_stream', [EmailReserved({ email, userId })], metadata),
        domainWrite(
          streams.user(userId),
          'no_stream',
          [
            UserRegistered({ userId, email, name: `Bulk ${u}`, image: null, emailVerified: true }),
            CredentialAccountCreated({ userId, accountId: randomUUID(), passwordHash: PASSWORD_HASH }),
          ],
          metadata,
        ),
      );
      const index: DomainEvent[] = [];
      const closed: string[] = [];
      for (let s = 0; s < options.sessionsPerUser; s += 1) {
        const token = generateSessionToken();
        const tokenHash = hashToken(token);
        const sessionId = sessionIdForTokenHash(tokenHash);
        const created = SessionCreated({
          sessionId,
          userId,
          tokenHash,
          expiresAt,
          ipAddress: '203.0.113.9',
          userAgent: 'bulk-history',
          rememberMe: true,
          method: 'email-password',
        });
        writes.push(domainWrite(streams.session(sessionId), 'no_stream', [created], metadata));
        index.push(SessionOpened({ userId, sessionId, tokenHash, expiresAt }));
        if (s % 2 === 1) {
          revocations.push(
            domainWrite(streams.session(sessionId), 1, [SessionRevoked({ sessionId, userId, tokenHash, reason: 'signed_out' })], metadata),
          );
          closed.push(sessionId);
          revoked.push({ userId, token });
        } else {
          live.push({ userId, token });
        }
      }
      writes.push(domainWrite(streams.userSessions(userId), 'no_stream', index, metadata));
      if (closed.length > 0) revocations.push(domainWrite(streams.userSessions(userId), index.length, [SessionsClosed({ userId, sessionIds: closed })], metadata));
    }
    await store.append(writes);
    // Revoked in a later write, so that a replay passes through every one of these sessions live first.
    await store.append(revocations);
    events += [...writes, ...revocations].reduce((n, w) => n + w.events.length, 0);
  }
  return { live, revoked, events };
}
