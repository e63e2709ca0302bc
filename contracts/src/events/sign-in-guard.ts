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
