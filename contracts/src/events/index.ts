import { z } from 'zod';
import type { EventOf } from './define-event.ts';
import { CredentialAccountCreated, EmailReserved, SignInFailed, UserRegistered, UserUpdated } from './identity.ts';
import { SessionCreated, SessionRefreshed, SessionRevoked, SessionUpdated } from './session.ts';
import {
  EmailChanged,
  EmailReleased,
  EmailVerified,
  PasswordChanged,
  UserDeleted,
  VerificationTokenConsumed,
  VerificationTokenIssued,
} from './account-lifecycle.ts';
import { MailJobQueued } from './mail.ts';

export * from './define-event.ts';
export * from './identity.ts';
export * from './session.ts';
export * from './account-lifecycle.ts';
export * from './mail.ts';

/** Every event type the log may hold, by type name: the projector parses each stored event with its schema. */
export const eventDefinitions = [
  UserRegistered,
  CredentialAccountCreated,
  UserUpdated,
  EmailReserved,
  SignInFailed,
  SessionCreated,
  SessionRefreshed,
  SessionUpdated,
  SessionRevoked,
  EmailVerified,
  EmailChanged,
  PasswordChanged,
  UserDeleted,
  EmailReleased,
  VerificationTokenIssued,
  VerificationTokenConsumed,
  MailJobQueued,
] as const;

export type DomainEvent = EventOf<(typeof eventDefinitions)[number]>;
export type DomainEventType = DomainEvent['type'];
export type EventData<T extends DomainEventType> = Extract<DomainEvent, { type: T }>['data'];

const schemaByType = new Map<string, z.ZodType>(eventDefinitions.map((d) => [d.type, d.schema]));

/** Parses stored data into a typed event; unknown types are returned as null so old readers skip new events. */
export function parseDomainEvent(type: string, data: unknown): DomainEvent | null {
  const schema = schemaByType.get(type);
  if (!schema) return null;
  return { type, data: schema.parse(data) } as DomainEvent;
}

export const streams = {
  user: (userId: string) => `user-${userId}`,
  email: (email: string) => `email-${email}`,
  signIn: (email: string) => `sign-in-${email}`,
  session: (sessionId: string) => `session-${sessionId}`,
  verification: (tokenHash: string) => `verification-${tokenHash}`,
  mail: (jobId: string) => `mail-${jobId}`,
} as const;
