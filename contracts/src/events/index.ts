import { z } from 'zod';
import type { EventOf } from './define-event.ts';
import { CredentialAccountCreated, EmailReserved, SignInFailed, UserRegistered, UserUpdated } from './identity.ts';
import { SessionCreated, SessionRefreshed, SessionRevoked, SessionUpdated } from './session.ts';
import { SignInLocked, SignInUnlocked, UsernameSignInFailed } from './sign-in-guard.ts';
import { UsernameChanged, UsernameReleased, UsernameReserved } from './username.ts';
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
import {
  InvitationAccepted,
  InvitationCanceled,
  InvitationCreated,
  InvitationRejected,
  InvitationResent,
  MemberAdded,
  MemberRemoved,
  MemberRoleChanged,
  OrganizationCreated,
  OrganizationDeleted,
  OrganizationSlugReleased,
  OrganizationSlugReserved,
  OrganizationUpdated,
  SessionActiveOrganizationChanged,
  TeamCreated,
  TeamMemberAdded,
  TeamMemberRemoved,
  TeamRemoved,
  TeamUpdated,
} from './organization.ts';

export * from './define-event.ts';
export * from './identity.ts';
export * from './session.ts';
export * from './username.ts';
export * from './sign-in-guard.ts';
export * from './account-lifecycle.ts';
export * from './mail.ts';
export * from './organization.ts';

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
  UsernameReserved,
  UsernameReleased,
  UsernameChanged,
  UsernameSignInFailed,
  SignInLocked,
  SignInUnlocked,
  EmailVerified,
  EmailChanged,
  PasswordChanged,
  UserDeleted,
  EmailReleased,
  VerificationTokenIssued,
  VerificationTokenConsumed,
  MailJobQueued,
  OrganizationCreated,
  OrganizationUpdated,
  OrganizationDeleted,
  MemberAdded,
  MemberRoleChanged,
  MemberRemoved,
  InvitationCreated,
  InvitationResent,
  InvitationAccepted,
  InvitationRejected,
  InvitationCanceled,
  TeamCreated,
  TeamUpdated,
  TeamRemoved,
  TeamMemberAdded,
  TeamMemberRemoved,
  OrganizationSlugReserved,
  OrganizationSlugReleased,
  SessionActiveOrganizationChanged,
] as const;

export type DomainEvent = EventOf<(typeof eventDefinitions)[number]>;
export type DomainEventType = DomainEvent['type'];
export type EventData<T extends DomainEventType> = Extract<DomainEvent, { type: T }>['data'];

/** A stored event with the time it was decided at, for deciders whose rules count time (windows, locks). */
export interface TimedEvent {
  readonly event: DomainEvent;
  readonly occurredAt: string;
}

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
  username: (username: string) => `username-${username}`,
  /** Usernames cannot hold '@', so these never meet an email's `sign-in-<email>` stream. */
  usernameSignIn: (username: string) => `sign-in-username-${username}`,
  verification: (tokenHash: string) => `verification-${tokenHash}`,
  mail: (jobId: string) => `mail-${jobId}`,
  organization: (organizationId: string) => `organization-${organizationId}`,
  organizationSlug: (slug: string) => `organization-slug-${slug}`,
} as const;
