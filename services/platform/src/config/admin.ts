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
    AUTH_ADMIN_IMPERSONATION_SESSION_DURATION: setting(lifetime(3600), 'lifetime of a session opened by impersonating a user, seconds'),
  },
  (c) => ({
    admin: {
      adminUserIds: Object.freeze<string[]>([...c.ADMIN_USER_IDS]),
      impersonationSessionDurationSeconds: c.AUTH_ADMIN_IMPERSONATION_SESSION_DURATION,
    },
  }),
);
