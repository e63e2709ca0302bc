import { socialProviderIds } from './social.ts';

/**
 * Settings that may come from a file instead (`AUTH_SECRET_FILE=/run/secrets/auth_secret`): secrets, which
 * orchestrators hand over as mounted files so they stay out of `docker inspect`, the process table and
 * crash dumps of the environment.
 */
export const secretFileVariables: readonly string[] = [
  'AUTH_SECRET',
  'AUTH_SECRETS',
  'AUTH_SERVER_API_KEY',
  'DATABASE_URL',
  'SMTP_URL',
  'AUDIT_SIGNING_KEY',
  'AUTH_CAPTCHA_SECRET_KEY',
  ...socialProviderIds.map((id) => `AUTH_${id.toUpperCase()}_CLIENT_SECRET`),
];
