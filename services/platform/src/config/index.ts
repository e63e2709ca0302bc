import { z } from 'zod';
import { auditSettings } from './audit.ts';
import { adminSettings } from './admin.ts';
import { coreSettings } from './core.ts';
import { ARGON2_FLOOR_KIB_PASSES, credentialsSettings } from './credentials.ts';
import { databasePoolSettings } from './database-pools.ts';
import { mailSettings } from './mail.ts';
import { organizationSettings } from './organization.ts';
import { perimeterSettings } from './perimeter.ts';
import { projectorSettings } from './projector.ts';
import { tableOf } from './readme-table.ts';
import { resolveSecretFiles } from './secret-files.ts';
import { sessionSettings } from './session.ts';
import { checkSocialSettings, socialSettings } from './social.ts';

export { type CaptchaProvider } from './perimeter.ts';
export { secretFileVariables, takesSecretFile } from './secret-files.ts';
export { poolSizesOf, type PoolOwner, type PoolSizes } from './database-pools.ts';
export {
  socialProviderIds,
  type AppleProviderSettings,
  type MicrosoftProviderSettings,
  type OidcProviderSettings,
  type SocialProviderId,
  type SocialProviderSettings,
  type SocialProvidersSettings,
  type SocialSettings,
} from './social.ts';

/** Every concern's settings, in the order the README's table lists them. */
const settingsSections = [
  coreSettings,
  databasePoolSettings,
  sessionSettings,
  credentialsSettings,
  perimeterSettings,
  mailSettings,
  organizationSettings,
  socialSettings,
  adminSettings,
  projectorSettings,
  auditSettings,
] as const;

const environmentSchema = z
  .object({
    ...coreSettings.shape,
    ...databasePoolSettings.shape,
    ...sessionSettings.shape,
    ...credentialsSettings.shape,
    ...perimeterSettings.shape,
    ...mailSettings.shape,
    ...organizationSettings.shape,
    ...socialSettings.shape,
    ...adminSettings.shape,
    ...projectorSettings.shape,
    ...auditSettings.shape,
  })
  // Rules that span settings (each named on the variable to change).
  .refine((c) => c.AUTH_PASSWORD_MIN_LENGTH <= c.AUTH_PASSWORD_MAX_LENGTH, {
    path: ['AUTH_PASSWORD_MIN_LENGTH'],
    message: 'must not exceed AUTH_PASSWORD_MAX_LENGTH',
  })
  .refine((c) => c.AUTH_PASSWORD_ARGON2_MEMORY_KIB * c.AUTH_PASSWORD_ARGON2_ITERATIONS >= ARGON2_FLOOR_KIB_PASSES, {
    path: ['AUTH_PASSWORD_ARGON2_ITERATIONS'],
    message: `times AUTH_PASSWORD_ARGON2_MEMORY_KIB must be at least ${ARGON2_FLOOR_KIB_PASSES}, OWASP's argon2id floor (47104 × 1, 19456 × 2, 12288 × 3, 9216 × 4, 7168 × 5)`,
  })
  .refine((c) => c.AUTH_USERNAME_MIN_LENGTH <= c.AUTH_USERNAME_MAX_LENGTH, {
    path: ['AUTH_USERNAME_MIN_LENGTH'],
    message: 'must not exceed AUTH_USERNAME_MAX_LENGTH',
  })
  .refine((c) => c.AUTH_CAPTCHA_PROVIDER === undefined || c.AUTH_CAPTCHA_SECRET_KEY !== undefined, {
    path: ['AUTH_CAPTCHA_SECRET_KEY'],
    message: 'is required when AUTH_CAPTCHA_PROVIDER is set',
  })
  .refine((c) => c.NODE_ENV !== 'production' || c.AUTH_SECRET !== undefined || c.AUTH_SECRETS !== undefined, {
    path: ['AUTH_SECRET'],
    message: 'is required in production (or AUTH_SECRETS)',
  })
  .refine((c) => c.AUTH_SECRET === undefined || c.AUTH_SECRETS === undefined, {
    path: ['AUTH_SECRETS'],
    message: 'and AUTH_SECRET are both set: keep one (AUTH_SECRETS with the secret of AUTH_SECRET in it)',
  })
  // Without it the mailer fills the dev mailbox, where nobody's reset or verification link would ever arrive.
  .refine((c) => c.NODE_ENV !== 'production' || c.SMTP_URL !== undefined, {
    path: ['SMTP_URL'],
    message: 'is required in production (mail would land in the dev mailbox, not in anyone\'s inbox)',
  })
  .refine((c) => c.AUTH_RATE_LIMIT_STORAGE !== 'redis' || c.REDIS_URL !== undefined, {
    path: ['AUTH_RATE_LIMIT_STORAGE'],
    message: 'redis needs REDIS_URL',
  })
  .refine((c) => (c.AUTH_BOOTSTRAP_ADMIN_EMAIL === undefined) === (c.AUTH_BOOTSTRAP_ADMIN_PASSWORD === undefined), {
    path: ['AUTH_BOOTSTRAP_ADMIN_PASSWORD'],
    message: 'and AUTH_BOOTSTRAP_ADMIN_EMAIL are set together',
  })
  .refine((c) => c.KAFKA_SASL_MECHANISM === undefined || (c.KAFKA_SASL_USERNAME !== undefined && c.KAFKA_SASL_PASSWORD !== undefined), {
    path: ['KAFKA_SASL_MECHANISM'],
    message: 'needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD',
  })
  // A user or password without a mechanism would be ignored, and the broker's refusal would not say why.
  .refine((c) => c.KAFKA_SASL_MECHANISM !== undefined || (c.KAFKA_SASL_USERNAME === undefined && c.KAFKA_SASL_PASSWORD === undefined), {
    path: ['KAFKA_SASL_MECHANISM'],
    message: 'is required when KAFKA_SASL_USERNAME or KAFKA_SASL_PASSWORD is set',
  })
  .refine((c) => c.KAFKA_SSL_CA_FILE === undefined || c.KAFKA_SSL, {
    path: ['KAFKA_SSL_CA_FILE'],
    message: 'needs KAFKA_SSL=true',
  })
  .superRefine(checkSocialSettings);


/** The whole configuration, typed from what each concern builds from its settings. */
export type Config = Readonly<
  ReturnType<(typeof coreSettings)['build']> &
    ReturnType<(typeof databasePoolSettings)['build']> &
    ReturnType<(typeof sessionSettings)['build']> &
    ReturnType<(typeof credentialsSettings)['build']> &
    ReturnType<(typeof perimeterSettings)['build']> &
    ReturnType<(typeof mailSettings)['build']> &
    ReturnType<(typeof organizationSettings)['build']> &
    ReturnType<(typeof socialSettings)['build']> &
    ReturnType<(typeof adminSettings)['build']> &
    ReturnType<(typeof projectorSettings)['build']> &
    ReturnType<(typeof auditSettings)['build']>
>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates every setting at once, so a bad deployment learns all its mistakes in one start.
 * This is the only place that reads the environment (and the files its `*_FILE` variables name).
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const secretFiles = resolveSecretFiles(
    Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')),
  );
  const present = secretFiles.environment;
  const parsed = environmentSchema.safeParse(present);
  const problems = [
    ...secretFiles.problems,
    ...(parsed.success
      ? []
      : parsed.error.issues
          // A setting whose file could not be read is missing only because of that, already said.
          .filter((i) => !secretFiles.unresolved.has(String(i.path[0])))
          .map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`)),
    ...settingsSections.flatMap((s) => ('deploymentNamed' in s && s.deploymentNamed ? s.deploymentNamed.problems(present) : [])),
  ];
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const c = parsed.data;
  if (c.AUTH_SECRET === undefined && c.AUTH_SECRETS === undefined) {
    throw new ConfigError(['AUTH_SECRET: is required, or AUTH_SECRETS (npm start generates one for the embedded default)']);
  }
  return Object.freeze({
    ...coreSettings.build(c, c, present),
    ...databasePoolSettings.build(c, c, present),
    ...sessionSettings.build(c, c, present),
    ...credentialsSettings.build(c, c, present),
    ...perimeterSettings.build(c, c, present),
    ...mailSettings.build(c, c, present),
    ...organizationSettings.build(c, c, present),
    ...socialSettings.build(c, c, present),
    ...adminSettings.build(c, c, present),
    ...projectorSettings.build(c, c, present),
    ...auditSettings.build(c, c, present),
  });
}

/** Loads the config or stops the process with the list of bad variables (never their values). */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}

/** The README's configuration table, generated from the settings (`npm run docs:config` writes it). */
export function configurationTable(): string {
  return tableOf(settingsSections);
}

/**
 * The variables the settings read: each section's by name, and the deployment-named ones as the patterns the
 * README shows (`AUTH_OIDC_<NAME>_CLIENT_ID`).
 */
export function settingVariables(): { readonly names: readonly string[]; readonly patterns: readonly string[] } {
  return {
    names: settingsSections.flatMap((s) => Object.keys(s.shape)),
    patterns: settingsSections.flatMap((s) => ('deploymentNamed' in s && s.deploymentNamed ? s.deploymentNamed.documentation.map((d) => d.pattern) : [])),
  };
}
