import { streams, type CachedSession } from '@portcullis/contracts';
import { loadStream, sessionIdForTokenHash } from '@portcullis/platform';
import type { SessionPorts } from './ports.ts';
import { sessionAnswerModel, userAnswerModel } from './session-answer.state.ts';

/**
 * Confirms, or clears, the organization and team a session works in, from the organization's own stream:
 * the events that end a selection (a member removed, an organization deleted) do not name the sessions, so
 * a session's stream alone cannot tell. Provided by the organization area.
 */
export type ActiveSelectionCheck = (
  userId: string,
  selection: { activeOrganizationId: string; activeTeamId: string | null },
) => Promise<{ activeOrganizationId: string | null; activeTeamId: string | null }>;

/**
 * The `{session, user}` for a token hash, folded from the log itself: the authority when no read model
 * may be believed (lagging, rebuilding, lost) or none holds the session (it was appended a moment ago).
 * Null for a session that does not exist, has ended, or whose user is gone; expiry is the caller's rule.
 */
export async function sessionFromLog(ctx: SessionPorts, tokenHash: string): Promise<CachedSession | null> {
  const { state } = await loadStream(ctx.store, streams.session(sessionIdForTokenHash(tokenHash)), sessionAnswerModel);
  // The id is derived from the hash; the stream must still be this token's.
  const session = state.tokenHash === tokenHash ? state.session : null;
  if (session === null) return null;
  const { state: user } = await loadStream(ctx.store, streams.user(session.userId), userAnswerModel);
  if (user === null) return null;
  if (session.activeOrganizationId === null || !ctx.activeSelectionCheck) return { session, user };
  const selection = await ctx.activeSelectionCheck(user.id, {
    activeOrganizationId: session.activeOrganizationId,
    activeTeamId: session.activeTeamId,
  });
  return { session: { ...session, ...selection }, user };
}
