import { z } from 'zod';
import type { EventOf, SupersededEvent } from './define-event.ts';
import {
  AccountUnlinked,
  CredentialAccountCreated,
  EmailReserved,
  identityEventHistory,
  ProviderAccountClaimed,
  ProviderAccountLinked,
  ProviderAccountReleased,
  ProviderTokensUpdated,
  SignInFailed,
  UserRegistered,
  UserUpdated,
} from './identity.ts';
import {
  SessionCreated,
  SessionExtended,
  sessionEventHistory,
  SessionOpened,
  SessionRefreshed,
  SessionRevoked,
  SessionsClosed,
  SessionUpdated,
} from './session.ts';
import {
  AccountSignInFailed,
  AccountSignInLocked,
  AccountSignInUnlocked,
  SignInLocked,
  SignInUnlocked,
  UsernameSignInFailed,
} from './sign-in-guard.ts';
import { UsernameChanged, UsernameReleased, UsernameReserved } from './username.ts';
import {
  EmailChanged,
  EmailReleased,
  EmailVerified,
  PasswordChanged,
  PasswordRehashed,
  UserDeleted,
  PasswordResetLinkIssued,
  VerificationTokenConsumed,
  VerificationTokenIssued,
  VerificationTokenRevoked,
} from './account-lifecycle.ts';
import { MailJobQueued, MailRetryRequested } from './mail.ts';
import { SocialFlowFinished, SocialFlowStarted } from './social.ts';
import { CaptchaRefused, SignInRateLimited } from './perimeter.ts';
import { ImpersonationOpened, ImpersonationsClosed, ImpersonationStarted, UserBanned, UserRoleChanged, UserUnbanned } from './admin.ts';
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
  OrganizationJoined,
  OrganizationLeft,
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
export * from './social.ts';
export * from './session.ts';
export * from './username.ts';
export * from './sign-in-guard.ts';
export * from './account-lifecycle.ts';
export * from './mail.ts';
export * from './organization.ts';
export * from './perimeter.ts';
export * from './admin.ts';
export * from './personal-data.ts';

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
  SessionOpened,
  SessionExtended,
  SessionsClosed,
  UsernameReserved,
  UsernameReleased,
  UsernameChanged,
  UsernameSignInFailed,
  SignInLocked,
  SignInUnlocked,
  AccountSignInFailed,
  AccountSignInLocked,
  AccountSignInUnlocked,
  EmailVerified,
  EmailChanged,
  PasswordChanged,
  PasswordRehashed,
  UserDeleted,
  EmailReleased,
  VerificationTokenIssued,
  VerificationTokenConsumed,
  VerificationTokenRevoked,
  PasswordResetLinkIssued,
  MailJobQueued,
  MailRetryRequested,
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
  OrganizationJoined,
  OrganizationLeft,
  SignInRateLimited,
  CaptchaRefused,
  UserRoleChanged,
  UserBanned,
  UserUnbanned,
  ImpersonationStarted,
  ImpersonationOpened,
  ImpersonationsClosed,
  ProviderAccountLinked,
  ProviderTokensUpdated,
  AccountUnlinked,
  ProviderAccountClaimed,
  ProviderAccountReleased,
  SocialFlowStarted,
  SocialFlowFinished,
] as const;

export type DomainEvent = EventOf<(typeof eventDefinitions)[number]>;
export type DomainEventType = DomainEvent['type'];
export type EventData<T extends DomainEventType> = Extract<DomainEvent, { type: T }>['data'];

/** A stored event with the time it was decided at, for deciders whose rules count time (windows, locks). */
export interface TimedEvent {
  readonly event: DomainEvent;
  readonly occurredAt: string;
}

/** Every version a newer one replaced, each with the step that takes its data one version up. */
export const supersededEvents: readonly SupersededEvent[] = [...sessionEventHistory, ...identityEventHistory];

const schemaByType = new Map<string, z.ZodType>(eventDefinitions.map((d) => [d.type, d.schema]));
const supersededByType = new Map(supersededEvents.map((s) => [s.type, s]));

/**
 * Parses stored data into a typed event of the newest version, upcasting an older version step by step.
 * A type this reader does not know (a newer version, or an event added since) is returned as null, so an
 * older process skips what a newer one wrote rather than failing on it.
 */
export function parseDomainEvent(type: string, data: unknown): DomainEvent | null {
  let currentType = type;
  let currentData = data;
  for (let step = supersededByType.get(currentType); step; step = supersededByType.get(currentType)) {
    currentData = step.upcast(step.schema.parse(currentData));
    currentType = step.next;
  }
  const schema = schemaByType.get(currentType);
  if (!schema) return null;
  return { type: currentType, data: schema.parse(currentData) } as DomainEvent;
}

/**
 * The newest version a stored type reads as (itself, or where its upcasters lead), or null for a type this
 * reader does not know. Cheap: projections filter on it before parsing anything.
 */
export function currentEventType(type: string): string | null {
  let current = type;
  for (let step = supersededByType.get(current); step; step = supersededByType.get(current)) current = step.next;
  return schemaByType.has(current) ? current : null;
}

/**
 * Every stored type that reads as one of `current` (each itself, and the versions upcast to it): what a
 * reader that wants only those types asks the log for.
 */
export function storedTypesReadingAs(current: ReadonlySet<string>): string[] {
  return [...schemaByType.keys(), ...supersededByType.keys()].filter((type) => {
    const reads = currentEventType(type);
    return reads !== null && current.has(reads);
  });
}

export const streams = {
  user: (userId: string) => `user-${userId}`,
  email: (email: string) => `email-${email}`,
  signIn: (email: string) => `sign-in-${email}`,
  session: (sessionId: string) => `session-${sessionId}`,
  /** The sessions a user opened (see `SessionOpened`). */
  userSessions: (userId: string) => `user-sessions-${userId}`,
  /** The sessions an admin opened by impersonation (see `ImpersonationOpened`). */
  impersonations: (adminId: string) => `impersonations-${adminId}`,
  username: (username: string) => `username-${username}`,
  /** Usernames cannot hold '@', so these never meet an email's `sign-in-<email>` stream. */
  usernameSignIn: (username: string) => `sign-in-username-${username}`,
  /** Failures and locks of one account, by any of its identifiers; user ids hold no '@', so no email's stream either. */
  accountSignIn: (userId: string) => `sign-in-account-${userId}`,
  /** A provider sign-in under way, by the SHA-256 of its state (see `SocialFlowStarted`). */
  socialFlow: (stateHash: string) => `social-flow-${stateHash}`,
  /** Which user holds a provider's account (see `ProviderAccountClaimed`). */
  providerAccount: (providerId: string, providerAccountId: string) => `provider-account-${providerId}:${providerAccountId}`,
  verification: (tokenHash: string) => `verification-${tokenHash}`,
  /** The user's latest password-reset link (see `PasswordResetLinkIssued`). */
  passwordReset: (userId: string) => `password-reset-${userId}`,
  mail: (jobId: string) => `mail-${jobId}`,
  organization: (organizationId: string) => `organization-${organizationId}`,
  organizationSlug: (slug: string) => `organization-slug-${slug}`,
  /** The organizations a user belongs to (see `OrganizationJoined`). */
  userOrganizations: (userId: string) => `user-organizations-${userId}`,
  /** Refusals at the perimeter of one client (an IPv4 address or an IPv6 /64; see `SignInRateLimited`). */
  perimeter: (clientBucket: string) => `perimeter-${clientBucket}`,
} as const;
export * from './stream-model.ts';
export * from './published.ts';
