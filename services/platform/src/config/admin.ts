import { z } from 'zod';
import { lifetime, section, setting } from './settings.ts';

/** better-auth's admin plugin options. */
export const adminSettings = section(
  'Admin',
  {
    ADMIN_USER_IDS: setting(
      z
        .string()
        .default('')
        .transform((value) =>
          value
            .split(',')
            .map((id) => id.trim())
            .filter((id) => id !== ''),
        ),
      'user ids (comma-separated) that pass every admin permission check whatever their role',
    ),
    AUTH_BOOTSTRAP_ADMIN_EMAIL: setting(
      z.email().max(320).optional(),
      'an admin (role `admin`) the api creates at start when no user has this email yet, so the ops console has someone to sign in (`npm start` sets one up in development)',
    ),
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: setting(z.string().min(8).max(128).optional(), 'the bootstrap admin\'s first password (needed with AUTH_BOOTSTRAP_ADMIN_EMAIL)'),
    AUTH_ADMIN_IMPERSONATION_SESSION_DURATION: setting(lifetime(3600), 'lifetime of a session opened by impersonating a user, seconds'),
  },
  (c) => ({
    admin: {
      adminUserIds: Object.freeze<string[]>([...c.ADMIN_USER_IDS]),
      impersonationSessionDurationSeconds: c.AUTH_ADMIN_IMPERSONATION_SESSION_DURATION,
      bootstrap: c.AUTH_BOOTSTRAP_ADMIN_EMAIL && c.AUTH_BOOTSTRAP_ADMIN_PASSWORD ? { email: c.AUTH_BOOTSTRAP_ADMIN_EMAIL.toLowerCase(), password: c.AUTH_BOOTSTRAP_ADMIN_PASSWORD } : null,
    },
  }),
);
