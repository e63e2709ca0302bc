import { z } from 'zod';
import { defineEvent, superseded } from './define-event.ts';

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

/** The first version: an argon2id hash only. */
const CredentialAccountCreatedV1 = defineEvent(
  'user.credential_account_created.v1',
  z.object({
    userId: z.string(),
    accountId: z.string(),
    passwordHash: z.string().startsWith('$argon2id$'),
  }),
);

/**
 * The password account (better-auth's `credential` provider). Carries the hash, never the password: argon2id,
 * or better-auth's scrypt `<salt>:<key>` (hex) on an account imported from a better-auth database, which its
 * first sign-in replaces with an argon2id one.
 */
export const CredentialAccountCreated = defineEvent(
  'user.credential_account_created.v2',
  z.object({
    userId: z.string(),
    accountId: z.string(),
    passwordHash: z.string().regex(/^(?:\$argon2id\$[^]*|[0-9a-fA-F]{16,128}:[0-9a-f]{128})$/),
  }),
);

export const identityEventHistory = [superseded(CredentialAccountCreatedV1, CredentialAccountCreated, (data) => data)];

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

const providerTokens = {
  accessToken: z.string().nullable(),
  refreshToken: z.string().nullable(),
  idToken: z.string().nullable(),
  accessTokenExpiresAt: z.string().nullable(),
  refreshTokenExpiresAt: z.string().nullable(),
};

/**
 * A social provider's account joined to the user (better-auth's account row with the provider's id). The
 * provider's tokens are personal data: sealed under the user's key in the log (deleting the user shreds
 * them), kept out of every read model, redacted from audit answers.
 */
export const ProviderAccountLinked = defineEvent(
  'user.provider_account_linked.v1',
  z.object({
    userId: z.string(),
    /** Ours: the account row's id. */
    accountId: z.string(),
    providerId: z.string(),
    /** The provider's id of the user (better-auth's `accountId`). */
    providerAccountId: z.string(),
    /** Granted scopes, comma-separated as better-auth keeps them. */
    scope: z.string().nullable(),
    ...providerTokens,
  }),
);

/** New tokens for a linked account: a returning sign-in, a refresh, a link-social asking for more scopes. */
export const ProviderTokensUpdated = defineEvent(
  'user.provider_tokens_updated.v1',
  z.object({
    userId: z.string(),
    accountId: z.string(),
    providerId: z.string(),
    /** Absent: the scopes stay as they were (a sign-in never narrows them, as better-auth). */
    scope: z.string().nullable().optional(),
    ...providerTokens,
  }),
);

/** An account removed from the user: a provider's, or the password account (never the last one). */
export const AccountUnlinked = defineEvent(
  'user.account_unlinked.v1',
  z.object({ userId: z.string(), accountId: z.string(), providerId: z.string() }),
);

/**
 * Stream `provider-account-<providerId>:<providerAccountId>` (named by a keyed hash in the log): which user
 * holds a provider's account. Claimed in the same atomic append as the link, so one provider account joins
 * at most one user however many callbacks race.
 */
export const ProviderAccountClaimed = defineEvent(
  'provider_account.claimed.v1',
  z.object({ providerId: z.string(), providerAccountId: z.string(), userId: z.string(), accountId: z.string() }),
);

export const ProviderAccountReleased = defineEvent(
  'provider_account.released.v1',
  z.object({ providerId: z.string(), providerAccountId: z.string(), userId: z.string() }),
);
