import { randomUUID } from 'node:crypto';
import {
  CredentialAccountCreated,
  EmailReserved,
  MemberAdded,
  OrganizationJoined,
  SessionActiveOrganizationChanged,
  SessionCreated,
  SessionOpened,
  streams,
  UserRegistered,
  type DomainEvent,
  type EventMetadata,
} from '@portcullis/contracts';
import { generateId, generateSessionToken, hashToken, sessionIdForTokenHash, type EventStore, type StreamWrite } from '@portcullis/platform';

/**
 * History written straight to the log, event for event what the api appends for the same requests
 * (sign-ups, set-active, add-member), so that the api, the projections and the log-confirming path treat it
 * as their own: tens of thousands of requests in seconds instead of hours. Only the request metadata is the
 * bench's, each event with a request id of its own as if it came from a request of its own.
 */

const SESSION_LIFETIME_MS = 7 * 24 * 3600 * 1000;

function requestMetadata(actorId: string | null, now: Date): EventMetadata {
  const requestId = randomUUID();
  return {
    occurredAt: now.toISOString(),
    actorId,
    ipAddress: '127.0.0.1',
    userAgent: 'portcullis-bench',
    requestId,
    correlationId: requestId,
    causationId: null,
    traceparent: null,
  };
}

function write(streamId: string, expectedVersion: StreamWrite['expectedVersion'], events: readonly DomainEvent[], actorId: string | null): StreamWrite {
  const now = new Date();
  return { streamId, expectedVersion, events: events.map((e) => ({ type: e.type, data: e.data, metadata: requestMetadata(actorId, now) })) };
}

export interface PrefilledUser {
  readonly userId: string;
  readonly email: string;
  /** The session sign-up opened (its bare token, which works as a bearer), when one was asked for. */
  readonly token: string | null;
}

/**
 * Users as `POST /sign-up/email` registers them (email reservation, user and credential account, and with
 * `withSessions` the session sign-up opens), a few hundred per atomic append. `passwordHash` is one real
 * argon2id hash shared by all: each can sign in with its password, without a hash per user here.
 */
export async function appendSignedUpUsers(
  store: Pick<EventStore, 'append'>,
  options: { readonly count: number; readonly label: string; readonly passwordHash: string; readonly withSessions: boolean },
): Promise<PrefilledUser[]> {
  const users: PrefilledUser[] = [];
  const perAppend = 250;
  for (let first = 0; first < options.count; first += perAppend) {
    const writes: StreamWrite[] = [];
    for (let n = first; n < Math.min(options.count, first + perAppend); n += 1) {
      const userId = generateId();
      const email = `${options.label}-${n}@example.com`;
      writes.push(
        write(streams.email(email), 'no_stream', [EmailReserved({ email, userId })], userId),
        write(
          streams.user(userId),
          'no_stream',
          [
            UserRegistered({ userId, email, name: `${options.label} ${n}`, image: null, emailVerified: false }),
            CredentialAccountCreated({ userId, accountId: generateId(), passwordHash: options.passwordHash }),
          ],
          userId,
        ),
      );
      let token: string | null = null;
      if (options.withSessions) {
        token = generateSessionToken();
        const tokenHash = hashToken(token);
        const sessionId = sessionIdForTokenHash(tokenHash);
        const expiresAt = new Date(Date.now() + SESSION_LIFETIME_MS).toISOString();
        writes.push(
          write(
            streams.session(sessionId),
            'no_stream',
            [SessionCreated({ sessionId, userId, tokenHash, expiresAt, ipAddress: '127.0.0.1', userAgent: 'portcullis-bench', rememberMe: true, method: 'sign-up' })],
            userId,
          ),
          write(streams.userSessions(userId), 'no_stream', [SessionOpened({ userId, sessionId, tokenHash, expiresAt })], userId),
        );
      }
      users.push({ userId, email, token });
    }
    await store.append(writes);
  }
  return users;
}

/**
 * `POST /organization/set-active` `count` times on one session, alternating between `organizationId` and
 * none from whichever the session has now (`activeNow`); in appends of a few thousand events.
 */
export async function appendActiveOrganizationToggles(
  store: Pick<EventStore, 'append' | 'readStream'>,
  options: { readonly sessionId: string; readonly userId: string; readonly organizationId: string; readonly activeNow: string | null; readonly count: number },
): Promise<void> {
  const streamId = streams.session(options.sessionId);
  let version = (await store.readStream(streamId)).version;
  let active = options.activeNow;
  const perAppend = 5_000;
  for (let done = 0; done < options.count; ) {
    const events: DomainEvent[] = [];
    for (; events.length < perAppend && done < options.count; done += 1) {
      active = active === null ? options.organizationId : null;
      events.push(
        SessionActiveOrganizationChanged({ sessionId: options.sessionId, userId: options.userId, activeOrganizationId: active, activeTeamId: null }),
      );
    }
    await store.append([write(streamId, version, events, options.userId)]);
    version += events.length;
  }
}

/**
 * `POST /organization/add-member` (a server call, role member, no team) for each user: the organization's
 * `member_added` and, in the same append, the member's own index of organizations.
 */
export async function appendMembers(
  store: Pick<EventStore, 'append' | 'readStream'>,
  options: { readonly organizationId: string; readonly userIds: readonly string[] },
): Promise<void> {
  const streamId = streams.organization(options.organizationId);
  let version = (await store.readStream(streamId)).version;
  const perAppend = 500;
  for (let first = 0; first < options.userIds.length; first += perAppend) {
    const userIds = options.userIds.slice(first, first + perAppend);
    const added = userIds.map((userId) =>
      MemberAdded({ organizationId: options.organizationId, memberId: generateId(), userId, role: 'member', teamId: null, via: 'added' }),
    );
    await store.append([
      write(streamId, version, added, null),
      ...userIds.map((userId) => write(streams.userOrganizations(userId), 'any', [OrganizationJoined({ userId, organizationId: options.organizationId })], null)),
    ]);
    version += added.length;
  }
}
