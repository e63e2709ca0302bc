import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/**
 * Stream `sign-in-username-<lower-cased username>`: failed username sign-ins, the username counterpart of
 * `credentials.sign_in_failed.v1`. Never carries the attempted password.
 */
export const UsernameSignInFailed = defineEvent(
  'credentials.username_sign_in_failed.v1',
  z.object({
    username: z.string(),
    userId: z.string().nullable(),
    reason: z.enum(['user_not_found', 'credential_account_not_found', 'invalid_password']),
  }),
);

/**
 * On a sign-in stream (`sign-in-<email>` or `sign-in-username-<username>`): too many failures within the
 * window, so sign-ins with this identifier are refused until `lockedUntil`, whatever the source IP. Decided
 * the same way for identifiers that have no account, so a lock tells nothing about who is registered.
 */
export const SignInLocked = defineEvent(
  'credentials.sign_in_locked.v1',
  z.object({
    identifier: z.string(),
    userId: z.string().nullable(),
    failures: z.number().int().positive(),
    lockedUntil: z.string(),
  }),
);

/**
 * On a sign-in stream: a lock lifted before its time, because the account's password was reset (or changed
 * by its signed-in owner) after the lock was set.
 */
export const SignInUnlocked = defineEvent(
  'credentials.sign_in_unlocked.v1',
  z.object({
    identifier: z.string(),
    userId: z.string(),
    reason: z.enum(['password_reset', 'password_changed']),
  }),
);

/**
 * Stream `sign-in-account-<userId>`: a failed sign-in of this account, whichever of its identifiers (email or
 * username) named it. The account's failures lock the account, so that guessing through both identifiers
 * gets no more tries than through one. Never carries the attempted password.
 */
export const AccountSignInFailed = defineEvent(
  'credentials.account_sign_in_failed.v1',
  z.object({
    userId: z.string(),
    via: z.enum(['email', 'username']),
    reason: z.enum(['credential_account_not_found', 'invalid_password']),
  }),
);

/**
 * On `sign-in-account-<userId>`: too many failures within the window, by any of the account's identifiers,
 * so sign-ins to it are refused until `lockedUntil`, whichever identifier names it.
 */
export const AccountSignInLocked = defineEvent(
  'credentials.account_sign_in_locked.v1',
  z.object({
    userId: z.string(),
    failures: z.number().int().positive(),
    lockedUntil: z.string(),
  }),
);

/** On `sign-in-account-<userId>`: the account's lock lifted before its time by a password reset or change made after it. */
export const AccountSignInUnlocked = defineEvent(
  'credentials.account_sign_in_unlocked.v1',
  z.object({
    userId: z.string(),
    reason: z.enum(['password_reset', 'password_changed']),
  }),
);
