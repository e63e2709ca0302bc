import type { ActorKind, EventActor, EventMetadata } from '@portcullis/contracts';
import { activeTraceparent } from '../telemetry/telemetry.ts';

/**
 * Where a command comes from, as a plain value: an HTTP route builds it from its request, a CLI or a
 * test from theirs, so every one of them runs the same command.
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
 * The structured actor of a command. Through an impersonation session it is always the impersonator, whatever
 * kind the command names: an admin command sent from there is the admin behind the session acting, and the
 * audit trail must find it under that admin. Otherwise a command that names its kind (`admin`, say) is taken
 * at its word, and the kind follows from the request: a server call is `server`, a user id alone `user`, no
 * user `anonymous` when a request came in and `system` when none did. Commands that only pass `actorId`
 * (the user who acts) thus still get a truthful actor.
 */
export function actorFor(request: RequestMetadata, actorId: string | null, kind?: ActorKind): EventActor {
  const impersonatorId = request.impersonatedBy ?? null;
  if (impersonatorId !== null) return { kind: 'impersonator', id: actorId, impersonatorId };
  if (kind) return { kind, id: actorId };
  if (request.serverCall) return { kind: 'server', id: actorId };
  if (actorId) return { kind: 'user', id: actorId };
  const fromRequest = request.requestId !== null || request.ipAddress !== null;
  return { kind: fromRequest ? 'anonymous' : 'system', id: null };
}

/**
 * A W3C trace context `traceparent` (version 00, a non-zero trace and parent id), or null: anything else a
 * client sends in that header is not stored, so the log never carries text a tracer would choke on.
 * https://www.w3.org/TR/trace-context/#traceparent-header-field-values
 */
export function validTraceparent(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value);
  if (!match) return null;
  const [, version, traceId, parentId] = match;
  if (version === 'ff' || /^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return null;
  return value;
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
    // With tracing on, the command's own span: the projector and the mailer continue the trace under it.
    traceparent: activeTraceparent() ?? request.traceparent,
    ...(request.impersonatedBy ? { impersonatedBy: request.impersonatedBy } : {}),
  };
}
