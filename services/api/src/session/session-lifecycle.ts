import { ImpersonationStarted, SessionCreated, streams, type EventData, type SessionEndReason } from '@portcullis/contracts';
import type { UnitOfWork } from '@portcullis/platform';
import { decideCloseImpersonations, impersonationIndexModel, impersonationOpened } from './impersonation-index.decider.ts';
import { decideEndSessions, sessionExtended, sessionIndexModel, sessionOpened, sessionsClosed } from './session-index.decider.ts';
import { decideSession, sessionModel, type SessionCommand } from './session.decider.ts';

/** A session about to be created: its id is derived from its token's hash (`sessionIdForTokenHash`). */
export interface NewSession {
  readonly sessionId: string;
  readonly tokenHash: string;
  readonly expiresAt: Date;
  readonly ipAddress: string | null;
  readonly userAgent: string | null;
  readonly rememberMe: boolean;
}

export type SessionOpening = EventData<'session.created.v2'>['method'];

/**
 * Opens a session within a command: its own stream, and its place in the user's session index, so that
 * ending all of the user's sessions, decided on that index, cannot miss it.
 */
export function openSession(unit: UnitOfWork, userId: string, session: NewSession, method: SessionOpening, providerId: string | null = null): void {
  const { sessionId, tokenHash, ipAddress, userAgent, rememberMe } = session;
  const created = SessionCreated({ sessionId, userId, tokenHash, expiresAt: session.expiresAt.toISOString(), ipAddress, userAgent, rememberMe, method, providerId });
  appendOpening(unit, userId, session, created);
}

/**
 * Opens a session of `userId` for an admin impersonating them: its own stream and its place in the user's
 * session index as any session, so a ban or a revocation of the user's sessions ends it too; and its place
 * in the admin's impersonation index, so ending every session of the admin ends it as well.
 */
export function openImpersonationSession(unit: UnitOfWork, userId: string, impersonatedBy: string, session: NewSession): void {
  const { sessionId, tokenHash, ipAddress, userAgent } = session;
  const expiresAt = session.expiresAt.toISOString();
  const started = ImpersonationStarted({ sessionId, userId, tokenHash, expiresAt, ipAddress, userAgent, impersonatedBy });
  appendOpening(unit, userId, session, started);
  unit.append(streams.impersonations(impersonatedBy), [impersonationOpened(impersonatedBy, { userId, sessionId, tokenHash, expiresAt })], { expected: 'any' });
}

function appendOpening(
  unit: UnitOfWork,
  userId: string,
  session: NewSession,
  opening: ReturnType<typeof SessionCreated> | ReturnType<typeof ImpersonationStarted>,
): void {
  unit.append(streams.session(session.sessionId), [opening], { expected: 'no_stream', model: sessionModel });
  // 'any': an opening never conflicts with another; an ending of all sessions requires the version it read.
  const index = sessionOpened(userId, { sessionId: session.sessionId, tokenHash: session.tokenHash, expiresAt: session.expiresAt.toISOString() });
  unit.append(streams.userSessions(userId), [index], { expected: 'any' });
}

/**
 * Decides one command on a session's stream within a unit; an ending or a refresh is also recorded in the
 * user's session index. Answers the events decided for the session's stream.
 */
export async function decideOnSession(unit: UnitOfWork, sessionId: string, command: SessionCommand) {
  const loaded = await unit.load(streams.session(sessionId), sessionModel);
  const events = decideSession(command, loaded.state);
  unit.append(loaded.streamId, events);
  const state = loaded.state;
  if (state.status !== 'none') {
    for (const event of events) {
      const index = streams.userSessions(state.userId);
      if (event.type === 'session.revoked.v2') unit.append(index, [sessionsClosed(state.userId, [sessionId])], { expected: 'any' });
      if (event.type === 'session.refreshed.v1') unit.append(index, [sessionExtended(state.userId, sessionId, event.data.expiresAt)], { expected: 'any' });
    }
  }
  return events;
}

/**
 * Ends every session of a user (but `except`), decided on the user's session index: the append requires
 * the index at the version read, so a session opened meanwhile makes the command decide again with it.
 * The impersonation sessions the user opened as an admin end with them (`endImpersonationsOpenedBy`).
 * Answers how many sessions were ended.
 */
export async function endAllSessions(
  unit: UnitOfWork,
  userId: string,
  reason: SessionEndReason,
  options: { except?: string | undefined } = {},
): Promise<number> {
  const index = await unit.load(streams.userSessions(userId), sessionIndexModel);
  const ended = decideEndSessions({ userId, reason, now: unit.now, except: options.except }, index.state);
  unit.append(index.streamId, ended.index);
  for (const revocation of ended.revocations) {
    unit.append(streams.session(revocation.data.sessionId), [revocation], { expected: 'any' });
  }
  const alreadyEnded = new Set(ended.revocations.map((revocation) => revocation.data.sessionId));
  return ended.revocations.length + (await endImpersonationsOpenedBy(unit, userId, reason, alreadyEnded));
}

/**
 * Ends every impersonation session an admin opened, decided on their impersonation index: what a banned,
 * removed or reset admin opened must not keep acting as the users they impersonated. Each is ended on its
 * own stream as read (one already over is left as it is), and closed in its user's session index too.
 */
export async function endImpersonationsOpenedBy(
  unit: UnitOfWork,
  adminId: string,
  reason: SessionEndReason,
  alreadyEnded: ReadonlySet<string> = new Set(),
): Promise<number> {
  const index = await unit.load(streams.impersonations(adminId), impersonationIndexModel);
  const closing = decideCloseImpersonations({ adminId, now: unit.now }, index.state);
  unit.append(index.streamId, closing.index);
  let ended = 0;
  for (const opened of closing.live) {
    if (alreadyEnded.has(opened.sessionId)) continue;
    const events = await decideOnSession(unit, opened.sessionId, { type: 'revoke', byUserId: opened.userId, reason });
    ended += events.length;
  }
  return ended;
}
