import { z } from 'zod';
import { flag, section, setting } from './settings.ts';

/**
 * OWASP's argon2id minimums (Password Storage Cheat Sheet) trade memory for passes: 46 MiB × 1 to 7 MiB × 5.
 * Each keeps memory × iterations at 35840 KiB or more, so that product is the floor a configured cost must reach.
 */
export const ARGON2_FLOOR_KIB_PASSES = 35_840;

/** Passwords, usernames, sign-up and the protection of sign-in against guessing. */
export const credentialsSettings = section(
  'Credentials',
  {
    AUTH_PASSWORD_MIN_LENGTH: setting(z.coerce.number().int().min(1).default(8), 'shortest password accepted, in characters (code points of its NFKC form)'),
    AUTH_PASSWORD_MAX_LENGTH: setting(z.coerce.number().int().min(1).max(4096).default(128), 'longest password accepted, in characters (code points of its NFKC form)'),
    AUTH_PASSWORD_ARGON2_MEMORY_KIB: setting(
      z.coerce.number().int().min(7_168).max(1_048_576).default(19_456),
      'argon2id memory per password hash, KiB (7168 to 1048576, i.e. 7 MiB to 1 GiB); with the iterations at least OWASP\'s floor (see `AUTH_PASSWORD_ARGON2_ITERATIONS`). A stored hash at another cost is re-hashed at its next sign-in',
    ),
    AUTH_PASSWORD_ARGON2_ITERATIONS: setting(
      z.coerce.number().int().min(1).max(32).default(2),
      `argon2id passes over that memory (1 to 32); memory × iterations must reach ${ARGON2_FLOOR_KIB_PASSES} (OWASP: 47104 × 1, 19456 × 2, 12288 × 3, 9216 × 4, 7168 × 5)`,
    ),
    AUTH_PASSWORD_ARGON2_PARALLELISM: setting(z.coerce.number().int().min(1).max(16).default(1), 'argon2id lanes per hash (1 to 16)'),
    AUTH_SIGN_UP_AUTO_SIGN_IN: setting(flag(true), 'sign-up opens a session'),
    AUTH_USERNAME_MIN_LENGTH: setting(z.coerce.number().int().min(1).default(3), 'shortest username'),
    AUTH_USERNAME_MAX_LENGTH: setting(z.coerce.number().int().min(1).max(256).default(30), 'longest username'),
    AUTH_BRUTE_FORCE_PROTECTION: setting(flag(true), 'lock an email or username after repeated failed sign-ins'),
    AUTH_BRUTE_FORCE_MAX_FAILURES: setting(z.coerce.number().int().min(1).default(5), 'failed sign-ins within the window that lock'),
    AUTH_BRUTE_FORCE_WINDOW: setting(z.coerce.number().int().min(1).default(900), 'the window failures are counted in, seconds'),
    AUTH_BRUTE_FORCE_LOCK_DURATION: setting(z.coerce.number().int().min(1).default(900), 'how long a lock lasts, seconds (a password reset lifts it)'),
  },
  (c) => ({
    password: {
      minLength: c.AUTH_PASSWORD_MIN_LENGTH,
      maxLength: c.AUTH_PASSWORD_MAX_LENGTH,
      argon2: { memoryKiB: c.AUTH_PASSWORD_ARGON2_MEMORY_KIB, iterations: c.AUTH_PASSWORD_ARGON2_ITERATIONS, parallelism: c.AUTH_PASSWORD_ARGON2_PARALLELISM },
    },
    signUpAutoSignIn: c.AUTH_SIGN_UP_AUTO_SIGN_IN,
    username: { minLength: c.AUTH_USERNAME_MIN_LENGTH, maxLength: c.AUTH_USERNAME_MAX_LENGTH },
    bruteForce: {
      enabled: c.AUTH_BRUTE_FORCE_PROTECTION,
      maxFailures: c.AUTH_BRUTE_FORCE_MAX_FAILURES,
      windowSeconds: c.AUTH_BRUTE_FORCE_WINDOW,
      lockSeconds: c.AUTH_BRUTE_FORCE_LOCK_DURATION,
    },
  }),
);
