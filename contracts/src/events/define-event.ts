import { z } from 'zod';

/**
 * Metadata every stored event carries. Who, from where and why: what the audit trail shows and what lets
 * projector and mailer spans join the request's trace.
 */
export const eventMetadataSchema = z.object({
  occurredAt: z.string().meta({ description: 'ISO time the command was decided at' }),
  actorId: z.string().nullable().optional(),
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
