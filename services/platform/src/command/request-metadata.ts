import type { ActorKind, EventActor, EventMetadata } from '@portcullis/contracts';

/**
 * Where a command comes from, as a plain value: an HTTP route builds it from its request, a CLI or the
 * ops console from theirs, so every one of them runs the same command.
 */
export interface RequestMetadata {
  readonly ipAddress: string | null;
  readonly userAgent: string | null;
  readonly requestId: string | null;
  readonly correlationId: string | null;
  readonly traceparent: string | null;
  /** The request authenticated with the server key (x-api-key): its actor is the server. */
  readonly serverCall?: boolean;
  /** The admin behind an impersonation session the request presents: every event it causes names them. */
  readonly impersonatedBy?: string | null;
}

/** A command that no request carries (a job, a test, a migration). */
export const systemRequest: RequestMetadata = {
  ipAddress: null,
  userAgent: null,
  requestId: null,
  correlationId: null,
  traceparent: null,
};

/**
 * The structured actor of a command. A command that names its kind (`admin`, say) is taken at its word;
 * otherwise the kind follows from the request: a server call is `server`, an impersonated session
 * `impersonator`, a user id alone `user`, no user `anonymous` when a request came in and `system` when none
 * did. Commands that only pass `actorId` (the user who acts) thus still get a truthful actor.
 */
export function actorFor(request: RequestMetadata, actorId: string | null, kind?: ActorKind): EventActor {
  const impersonatorId = request.impersonatedBy ?? null;
  if (kind === 'impersonator' || (!kind && impersonatorId !== null)) return { kind: 'impersonator', id: actorId, impersonatorId };
  if (kind) return { kind, id: actorId };
  if (request.serverCall) return { kind: 'server', id: actorId };
  if (actorId) return { kind: 'user', id: actorId };
  const fromRequest = request.requestId !== null || request.ipAddress !== null;
  return { kind: fromRequest ? 'anonymous' : 'system', id: null };
}

/** What every event a command appends carries: who did it, from where, in which request, and when. */
export function eventMetadataOf(request: RequestMetadata, actorId: string | null, occurredAt: Date, actorKind?: ActorKind): EventMetadata {
  return {
    occurredAt: occurredAt.toISOString(),
    actorId,
    actor: actorFor(request, actorId, actorKind),
    ipAddress: request.ipAddress,
    userAgent: request.userAgent,
    requestId: request.requestId,
    correlationId: request.correlationId ?? request.requestId,
    causationId: null,
    traceparent: request.traceparent,
    ...(request.impersonatedBy ? { impersonatedBy: request.impersonatedBy } : {}),
  };
}
