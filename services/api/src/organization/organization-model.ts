import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  DomainError,
  SessionActiveOrganizationChanged,
  streams,
  type DomainEvent,
  type EventMetadata,
} from '@portcullis/contracts';
import type { StreamWrite } from '@portcullis/platform';
import { commit, withRetryOnConflict } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { eventMetadata } from '../http/request-context.ts';
import { storeCookieCache } from '../session/cookie-cache.ts';
import { sessionAnswer, type CurrentSession } from '../session/current-session.ts';
import { evolveSession, initialSessionState } from '../session/session.decider.ts';
import { loadStream, loadTimedStream, streamWrite, type Loaded } from '../write-model.ts';
import { membershipIndexWrites } from './membership-index.ts';
import { evolveOrganization, initialOrganizationState, type OrganizationState } from './organization.state.ts';

export function loadOrganization(ctx: ApiContext, organizationId: string): Promise<Loaded<OrganizationState>> {
  return loadTimedStream(ctx.store, streams.organization(organizationId), evolveOrganization, initialOrganizationState);
}

export interface OrganizationDecision<T> {
  /** Events for the organization stream. */
  readonly events: readonly DomainEvent[];
  /** Writes to other streams that must land in the same atomic append (a slug reservation, a mail job). */
  readonly alsoWrite?: readonly StreamWrite[];
  /** Members' organization indexes the decision counted on, at the versions it read them (the creator's, on create). */
  readonly indexesRead?: ReadonlyMap<string, number>;
  readonly result: T;
}

/**
 * Many members act on one organization at once (everyone accepting an invitation to it, say): a conflict
 * on its stream is normal, and each retry decides again on the newer state, so a limit is never overrun.
 * Every round lets at least one writer through, so this bounds how many may race, not how long they wait.
 */
const ORGANIZATION_RETRY_ATTEMPTS = 64;

/**
 * Load the organization, decide, append against the version decided on (with any other streams the
 * decision touches, atomically), and wait for the read models: retried from the start on a conflict.
 */
export async function runOrganizationCommand<T>(
  ctx: ApiContext,
  request: FastifyRequest,
  organizationId: string,
  actorId: string | null,
  decide: (loaded: Loaded<OrganizationState>, now: Date, metadata: EventMetadata) => OrganizationDecision<T> | Promise<OrganizationDecision<T>>,
): Promise<T> {
  return withRetryOnConflict(async () => {
    const now = ctx.clock();
    const metadata = eventMetadata(request, now, actorId);
    const loaded = await loadOrganization(ctx, organizationId);
    const decision = await decide(loaded, now, metadata);
    await commit(ctx, [
      streamWrite(streams.organization(organizationId), loaded.version, decision.events, metadata),
      ...(decision.alsoWrite ?? []),
      // Each member who joins or leaves, in their own index: what the organization limit and a user's
      // deletion are decided on.
      ...membershipIndexWrites(decision.events, metadata, decision.indexesRead),
    ]);
    return decision.result;
  }, ORGANIZATION_RETRY_ATTEMPTS);
}

export interface ActiveSelection {
  readonly activeOrganizationId: string | null;
  readonly activeTeamId: string | null;
}

/**
 * Records which organization and team the caller's session works in, and answers with the session as it is
 * now: the signed cookie cache (when on) is rewritten, as better-auth's setSessionCookie does, so a
 * client reading its session from the cookie sees the change at once.
 */
export async function setActiveSelection(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  current: CurrentSession,
  selection: ActiveSelection,
): Promise<CurrentSession> {
  const unchanged =
    current.session.activeOrganizationId === selection.activeOrganizationId && current.session.activeTeamId === selection.activeTeamId;
  if (!unchanged) {
    await withRetryOnConflict(async () => {
      const streamId = streams.session(current.session.id);
      const { state, version } = await loadStream(ctx.store, streamId, evolveSession, initialSessionState);
      if (state.status !== 'active') throw new DomainError('SESSION_NOT_FOUND');
      const changed = SessionActiveOrganizationChanged({ sessionId: current.session.id, userId: current.user.id, ...selection });
      await commit(ctx, [streamWrite(streamId, version, [changed], eventMetadata(request, ctx.clock(), current.user.id))]);
    });
  }
  const updated: CurrentSession = { ...current, session: { ...current.session, ...selection } };
  if (ctx.config.cookieCache.enabled && current.presented.via === 'cookie') {
    storeCookieCache(ctx, request, reply, sessionAnswer(updated), {
      dontRemember: current.presented.dontRemember || !current.session.rememberMe,
    });
  }
  return updated;
}
