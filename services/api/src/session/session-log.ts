import { evolveSessionAnswer, evolveUserAnswer, parseDomainEvent, streams, type CachedSession, type User } from '@portcullis/contracts';
import { sessionIdForTokenHash, type StreamRead } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';

/**
 * Confirms, or clears, the organization and team a session works in, from the organization's own stream:
 * the events that end a selection (a member removed, an organization deleted) do not name the sessions, so
 * a session's stream alone cannot tell. Provided by the organization area.
 */
export type ActiveSelectionCheck = (
  userId: string,
  selection: { activeOrganizationId: string; activeTeamId: string | null },
) => Promise<{ activeOrganizationId: string | null; activeTeamId: string | null }>;

function foldSession(read: StreamRead, tokenHash: string): CachedSession['session'] | null {
  let session: CachedSession['session'] | null = null;
  for (const recorded of read.events) {
    const event = parseDomainEvent(recorded.type, recorded.data);
    if (!event) continue;
    // The id is derived from the hash; the stream must still be this token's.
    if (event.type === 'session.created.v1' && event.data.tokenHash !== tokenHash) return null;
    session = evolveSessionAnswer(session, event, recorded.metadata.occurredAt);
  }
  return session;
}

function foldUser(read: StreamRead): User | null {
  let user: User | null = null;
  for (const recorded of read.events) {
    const event = parseDomainEvent(recorded.type, recorded.data);
    if (event) user = evolveUserAnswer(user, event, recorded.metadata.occurredAt);
  }
  return user;
}

/**
 * The `{session, user}` for a token hash, folded from the log itself: the authority when no read model
 * may be believed (lagging, rebuilding, lost) or none holds the session (it was appended a moment ago).
 * Null for a session that does not exist, has ended, or whose user is gone; expiry is the caller's rule.
 */
export async function sessionFromLog(ctx: ApiContext, tokenHash: string): Promise<CachedSession | null> {
  const sessionStream = streams.session(sessionIdForTokenHash(tokenHash));
  const session = foldSession(await ctx.store.readStream(sessionStream), tokenHash);
  if (session === null) return null;
  const user = foldUser(await ctx.store.readStream(streams.user(session.userId)));
  if (user === null) return null;
  if (session.activeOrganizationId === null || !ctx.activeSelectionCheck) return { session, user };
  const selection = await ctx.activeSelectionCheck(user.id, {
    activeOrganizationId: session.activeOrganizationId,
    activeTeamId: session.activeTeamId,
  });
  return { session: { ...session, ...selection }, user };
}
