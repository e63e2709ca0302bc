import { z } from 'zod';

/**
 * Who caused an event. `user`: a signed-in user acting on their own behalf (or signing in); `admin`: a user
 * acting with admin rights on someone else; `impersonator`: an admin acting through an impersonated
 * session (`id` is the impersonated user, `impersonatorId` the admin); `server`: a backend presenting the
 * server key; `system`: no request at all (a job, a migration); `anonymous`: a request nobody was signed in
 * for (a failed sign-in, a reset link used).
 */
export const actorKinds = ['user', 'admin', 'impersonator', 'server', 'system', 'anonymous'] as const;
export type ActorKind = (typeof actorKinds)[number];

export const eventActorSchema = z.object({
  kind: z.enum(actorKinds),
  id: z.string().nullable().meta({ description: 'the acting user id (the impersonated user for an impersonator)' }),
  impersonatorId: z.string().nullable().optional().meta({ description: 'the admin behind an impersonated session' }),
});
export type EventActor = z.infer<typeof eventActorSchema>;

/**
 * Metadata every stored event carries. Who, from where and why: what the audit trail shows and what lets
 * projector and mailer spans join the request's trace. Every field but `occurredAt` is optional, so events
 * stored before a field existed keep parsing; `actor` came after `actorId`, which stays (see `actorOf`).
 */
export const eventMetadataSchema = z.object({
  occurredAt: z.string().meta({ description: 'ISO time the command was decided at' }),
  actorId: z.string().nullable().optional(),
  actor: eventActorSchema.optional(),
  /** The admin acting as `actorId` through an impersonation session (better-auth's `impersonatedBy`). */
  impersonatedBy: z.string().nullable().optional(),
  ipAddress: z.string().nullable().optional(),
  userAgent: z.string().nullable().optional(),
  requestId: z.string().nullable().optional(),
  correlationId: z.string().nullable().optional(),
  causationId: z.string().nullable().optional(),
  traceparent: z.string().nullable().optional(),
});
export type EventMetadata = z.infer<typeof eventMetadataSchema>;

/**
 * The actor of a stored event, for events stored before `actor` existed too: those named only `actorId`,
 * which was a user acting (or nobody: a request without a signed-in user, or none at all).
 *
 * Whatever came through an impersonation session is the impersonator's act, whatever kind the command
 * named: events stored before that rule held an admin's command from an impersonation session as
 * `{ kind: 'admin', id: <impersonated> }` with the real admin only in `impersonatedBy`; they read as
 * impersonations here, so every reader (search, sentence, index) answers who really did it.
 */
export function actorOf(metadata: EventMetadata): EventActor {
  const impersonatorId = metadata.actor?.impersonatorId || metadata.impersonatedBy || null;
  if (metadata.actor) {
    if (impersonatorId === null || metadata.actor.kind === 'impersonator') return metadata.actor;
    return { kind: 'impersonator', id: metadata.actor.id, impersonatorId };
  }
  if (impersonatorId) return { kind: 'impersonator', id: metadata.actorId ?? null, impersonatorId };
  if (metadata.actorId) return { kind: 'user', id: metadata.actorId };
  return { kind: metadata.requestId || metadata.ipAddress ? 'anonymous' : 'system', id: null };
}

export interface EventDefinition<Type extends string, Schema extends z.ZodType> {
  readonly type: Type;
  readonly schema: Schema;
  /** Builds the (type, data) pair a decider emits, checked against the schema at compile time. */
  (data: z.input<Schema>): { type: Type; data: z.output<Schema> };
}

/** Event types are past tense, `<area>.<fact>.v<n>`; a published version never changes shape. */
export function defineEvent<Type extends `${string}.${string}.v${number}`, Schema extends z.ZodType>(
  type: Type,
  schema: Schema,
): EventDefinition<Type, Schema> {
  const create = (data: z.input<Schema>) => ({ type, data: schema.parse(data) });
  return Object.assign(create, { type, schema });
}

export type EventOf<D> = D extends EventDefinition<infer T, infer S> ? { type: T; data: z.output<S> } : never;

/**
 * A published version that a newer one replaced: its schema (to read what the log holds) and how its data
 * becomes the next version's. Readers only ever see the newest version of an event; a chain of these takes
 * a stored event there one step at a time.
 */
export interface SupersededEvent {
  readonly type: string;
  readonly schema: z.ZodType;
  readonly next: string;
  upcast(data: unknown): unknown;
}

export function superseded<OldSchema extends z.ZodType, NextType extends string, NextSchema extends z.ZodType>(
  old: EventDefinition<`${string}.${string}.v${number}`, OldSchema>,
  next: EventDefinition<NextType, NextSchema>,
  upcast: (data: z.output<OldSchema>) => z.input<NextSchema>,
): SupersededEvent {
  return { type: old.type, schema: old.schema, next: next.type, upcast: (data) => upcast(data as z.output<OldSchema>) };
}
