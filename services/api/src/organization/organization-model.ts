import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, SessionActiveOrganizationChanged, streams, type DomainEvent } from '@portcullis/contracts';
import { loadStream, type Loaded, type RequestMetadata, type UnitOfWork } from '@portcullis/platform';
import type { OrganizationPorts } from './ports.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { storeCookieCache } from '../session/cookie-cache.ts';
import { sessionAnswer, type CurrentSession } from '../session/current-session.ts';
import { sessionModel } from '../session/session.decider.ts';
import { recordMembershipChanges } from './membership-index.ts';
import { organizationModel, type OrganizationState } from './organization.state.ts';

/** The organization as the log holds it now, for a read that decides nothing. */
export async function readOrganization(ctx: OrganizationPorts, organizationId: string): Promise<OrganizationState> {
  return (await loadStream(ctx.store, streams.organization(organizationId), organizationModel)).state;
}

export interface OrganizationDecision<T> {
  /** Events for the organization stream. */
  readonly events: readonly DomainEvent[];
  readonly result: T;
  /** What follows from them on another stream, appended after them in the same append (a session switched to the organization). */
  readonly alsoAppend?: ((unit: UnitOfWork) => void) | null;
}

/**
 * Many members act on one organization at once (everyone accepting an invitation to it, say): a conflict
 * on its stream is normal across api processes (within one, commands on it queue), and each retry decides
 * again on the newer state, so a limit is never overrun. Every round lets at least one writer through, so
 * this bounds how many may race, not how long they wait.
 */
const ORGANIZATION_RETRY_ATTEMPTS = 64;

/**
 * Load the organization, decide, append against the version decided on (with any other streams the
 * decision touches, atomically), and wait for the read models: through the command handler, so a kept
 * state spares the read, a conflict is retried on a fresh one, and one that persists is a 409.
 */
export async function runOrganizationCommand<T>(
  ctx: Pick<OrganizationPorts, 'commands'>,
  command: { readonly name: `organization.${string}`; readonly request: RequestMetadata; readonly organizationId: string; readonly actorId: string | null },
  decide: (loaded: Loaded<OrganizationState>, unit: UnitOfWork) => OrganizationDecision<T> | Promise<OrganizationDecision<T>>,
): Promise<T> {
  const { name, request, organizationId, actorId } = command;
  const streamId = streams.organization(organizationId);
  const { result } = await ctx.commands.handle(
    { name, request, actorId, serialize: [streamId], attempts: ORGANIZATION_RETRY_ATTEMPTS },
    async (unit) => {
      const loaded = await unit.load(streamId, organizationModel);
      const decision = await decide(loaded, unit);
      unit.append(streamId, decision.events);
      // Each member who joins or leaves, in their own index: what the organization limit and a user's
      // deletion are decided on.
      recordMembershipChanges(unit, decision.events);
      decision.alsoAppend?.(unit);
      return decision.result;
    },
  );
  return result;
}

export interface ActiveSelection {
  readonly activeOrganizationId: string | null;
  readonly activeTeamId: string | null;
}

/** Whether the session already works in `selection`. */
function selects(current: CurrentSession, selection: ActiveSelection): boolean {
  return current.session.activeOrganizationId === selection.activeOrganizationId && current.session.activeTeamId === selection.activeTeamId;
}

/**
 * In a command's unit: loads the caller's session for a switch to `selection` and answers what appends the
 * switch (null when the session already works there). Appended with what brought it about (an organization
 * created, an invitation accepted), the switch lands with it or not at all, and the write waits for its read
 * models once rather than twice.
 */
export async function prepareSwitch(unit: UnitOfWork, current: CurrentSession, selection: ActiveSelection): Promise<((unit: UnitOfWork) => void) | null> {
  if (selects(current, selection)) return null;
  const streamId = streams.session(current.session.id);
  const session = await unit.load(streamId, sessionModel);
  if (session.state.status !== 'active') throw new DomainError('SESSION_NOT_FOUND');
  return (into) => into.append(streamId, [SessionActiveOrganizationChanged({ sessionId: current.session.id, userId: current.user.id, ...selection })]);
}

/**
 * The session as it is once switched: the signed cookie cache (when on) is rewritten, as better-auth's
 * setSessionCookie does, so a client reading its session from the cookie sees the change at once.
 */
export function switchedSession(ctx: OrganizationPorts, request: FastifyRequest, reply: FastifyReply, current: CurrentSession, selection: ActiveSelection): CurrentSession {
  const updated: CurrentSession = { ...current, session: { ...current.session, ...selection } };
  if (ctx.config.cookieCache.enabled && current.presented.via === 'cookie') {
    storeCookieCache(ctx, request, reply, sessionAnswer(updated), {
      dontRemember: current.presented.dontRemember || !current.session.rememberMe,
    });
  }
  return updated;
}

/** Records which organization and team the caller's session works in, and answers with the session as it is now. */
export async function setActiveSelection(
  ctx: OrganizationPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  current: CurrentSession,
  selection: ActiveSelection,
  /**
   * What must hold for the switch (the caller a member, say), already asked for: it is awaited beside the
   * session's load, so its reads and the load are one round trip, not two. Its failure is the switch's.
   */
  precondition: Promise<unknown> = Promise.resolve(),
): Promise<CurrentSession> {
  if (selects(current, selection)) await precondition;
  else {
    const streamId = streams.session(current.session.id);
    await ctx.commands.handle({ name: 'session.set-active', request: requestMetadataOf(request), actorId: current.user.id, serialize: [streamId] }, async (unit) => {
      const [appendSwitch] = await Promise.all([prepareSwitch(unit, current, selection), precondition]);
      appendSwitch?.(unit);
    });
  }
  return switchedSession(ctx, request, reply, current, selection);
}
