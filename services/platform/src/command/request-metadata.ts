import type { EventMetadata } from '@portcullis/contracts';

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

/** What every event a command appends carries: who did it, from where, in which request, and when. */
export function eventMetadataOf(request: RequestMetadata, actorId: string | null, occurredAt: Date): EventMetadata {
  return {
    occurredAt: occurredAt.toISOString(),
    actorId,
    ipAddress: request.ipAddress,
    userAgent: request.userAgent,
    requestId: request.requestId,
    correlationId: request.correlationId ?? request.requestId,
    causationId: null,
    traceparent: request.traceparent,
    ...(request.impersonatedBy ? { impersonatedBy: request.impersonatedBy } : {}),
  };
}
