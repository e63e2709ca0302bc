import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/** Stream `user-<userId>`. */
export const UserRegistered = defineEvent(
  'user.registered.v1',
  z.object({
    userId: z.string(),
    email: z.string(),
    name: z.string(),
    image: z.string().nullable(),
    emailVerified: z.boolean(),
  }),
);

/** The password account (better-auth's `credential` provider). Carries the argon2id hash, never the password. */
export const CredentialAccountCreated = defineEvent(
  'user.credential_account_created.v1',
  z.object({
    userId: z.string(),
    accountId: z.string(),
    passwordHash: z.string().startsWith('$argon2id$'),
  }),
);

export const UserUpdated = defineEvent(
  'user.updated.v1',
  z.object({
    userId: z.string(),
    name: z.string().optional(),
    image: z.string().nullable().optional(),
  }),
);

/**
 * Stream `email-<lower-cased email>`: the reservation that makes email uniqueness atomic. The first event of
 * the stream is appended with expected version "no stream", in the same atomic write as the user's stream.
 */
export const EmailReserved = defineEvent('email.reserved.v1', z.object({ email: z.string(), userId: z.string() }));

/**
 * Stream `sign-in-<lower-cased email>`: failed attempts, for the audit trail and brute-force protection.
 * Never carries the attempted password.
 */
export const SignInFailed = defineEvent(
  'credentials.sign_in_failed.v1',
  z.object({
    email: z.string(),
    userId: z.string().nullable(),
    reason: z.enum(['user_not_found', 'credential_account_not_found', 'invalid_password']),
  }),
);
