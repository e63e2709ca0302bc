import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/**
 * The email lifecycle of an account: verification, password changes and resets, change of email, deletion.
 * Streams: `user-<userId>` for facts about the user, `email-<email>` for the reservation,
 * `verification-<tokenHash>` for a single-use token, and `password-reset-<userId>` for the user's latest
 * reset link. Tokens appear only as SHA-256 hashes (hex).
 */

const tokenHash = z.string().regex(/^[0-9a-f]{64}$/);

/** Stream `user-<userId>`: a verification link for `email` was used. */
export const EmailVerified = defineEvent('user.email_verified.v1', z.object({ userId: z.string(), email: z.string() }));

/** Stream `user-<userId>`. A changed email is unverified until a verification link for it is used. */
export const EmailChanged = defineEvent(
  'user.email_changed.v1',
  z.object({ userId: z.string(), previousEmail: z.string(), email: z.string(), emailVerified: z.boolean() }),
);

/** Stream `user-<userId>`: the credential account's new argon2id hash, never the password. */
export const PasswordChanged = defineEvent(
  'user.password_changed.v1',
  z.object({
    userId: z.string(),
    accountId: z.string(),
    passwordHash: z.string().startsWith('$argon2id$'),
    via: z.enum(['change-password', 'reset-password']),
  }),
);

/** An argon2id cost: memory in KiB, passes, lanes (as `AUTH_PASSWORD_ARGON2_*` set them). */
const argon2idCost = z.object({ memoryKiB: z.number().int(), iterations: z.number().int(), parallelism: z.number().int() });

/**
 * Stream `user-<userId>`: a sign-in that proved the password replaced the credential account's hash with an
 * argon2id one at today's cost (`cost`): the same password, stored as hashes are made now. `previous` says what
 * was replaced: a better-auth scrypt hash brought over with the account, or an argon2 hash at another cost.
 * Not a password change: it lifts no sign-in lock and ends no session. The new hash, never the password.
 */
export const PasswordRehashed = defineEvent(
  'user.password_rehashed.v1',
  z.object({
    userId: z.string(),
    accountId: z.string(),
    passwordHash: z.string().startsWith('$argon2id$'),
    previous: z.enum(['better-auth-scrypt', 'argon2']),
    cost: argon2idCost,
  }),
);

/**
 * Stream `user-<userId>`: the user is gone, with its sessions, accounts, verifications and (later)
 * memberships; every read model and the session cache drop them on this one event.
 */
export const UserDeleted = defineEvent('user.deleted.v1', z.object({ userId: z.string(), email: z.string() }));

/** Stream `email-<email>`: the address is free again (the user changed it or was deleted). */
export const EmailReleased = defineEvent('email.released.v1', z.object({ email: z.string(), userId: z.string() }));

const verificationPurposes = ['reset-password', 'delete-account'] as const;
export type VerificationPurpose = (typeof verificationPurposes)[number];

/** Stream `verification-<tokenHash>`: a single-use token was handed out (by mail) for `purpose`. */
export const VerificationTokenIssued = defineEvent(
  'verification.token_issued.v1',
  z.object({ purpose: z.enum(verificationPurposes), tokenHash, userId: z.string(), expiresAt: z.string() }),
);

/** Stream `verification-<tokenHash>`: the token was used; it cannot be used again. */
export const VerificationTokenConsumed = defineEvent(
  'verification.token_consumed.v1',
  z.object({ purpose: z.enum(verificationPurposes), tokenHash, userId: z.string() }),
);

/**
 * Stream `verification-<tokenHash>`: the token can no longer be used, unused: a newer one for the same
 * purpose replaced it (a second reset link ends the first).
 */
export const VerificationTokenRevoked = defineEvent(
  'verification.token_revoked.v1',
  z.object({ purpose: z.enum(verificationPurposes), tokenHash, userId: z.string(), reason: z.enum(['superseded']) }),
);

/**
 * Stream `password-reset-<userId>`: a reset link was mailed to the user, its token `tokenHash`. The stream
 * names the latest one, which is the only one usable: issuing a link revokes the one before in the same
 * append, decided against this stream's version.
 */
export const PasswordResetLinkIssued = defineEvent(
  'verification.password_reset_link_issued.v1',
  z.object({ userId: z.string(), tokenHash, expiresAt: z.string() }),
);
