import { z } from 'zod';
import { auditSettings } from './audit.ts';
import { adminSettings } from './admin.ts';
import { coreSettings } from './core.ts';
import { credentialsSettings } from './credentials.ts';
import { mailSettings } from './mail.ts';
import { organizationSettings } from './organization.ts';
import { perimeterSettings } from './perimeter.ts';
import { projectorSettings } from './projector.ts';
import { sessionSettings } from './session.ts';
import { docOf } from './settings.ts';

export { type CaptchaProvider } from './perimeter.ts';

/** Every concern's settings, in the order the README's table lists them. */
const settingsSections = [
  coreSettings,
  sessionSettings,
  credentialsSettings,
  perimeterSettings,
  mailSettings,
  organizationSettings,
  adminSettings,
  projectorSettings,
  auditSettings,
] as const;

const environmentSchema = z
  .object({
    ...coreSettings.shape,
    ...sessionSettings.shape,
    ...credentialsSettings.shape,
    ...perimeterSettings.shape,
    ...mailSettings.shape,
    ...organizationSettings.shape,
    ...adminSettings.shape,
    ...projectorSettings.shape,
    ...auditSettings.shape,
  })
  // Rules that span settings (each named on the variable to change).
  .refine((c) => c.AUTH_PASSWORD_MIN_LENGTH <= c.AUTH_PASSWORD_MAX_LENGTH, {
    path: ['AUTH_PASSWORD_MIN_LENGTH'],
    message: 'must not exceed AUTH_PASSWORD_MAX_LENGTH',
  })
  .refine((c) => c.AUTH_USERNAME_MIN_LENGTH <= c.AUTH_USERNAME_MAX_LENGTH, {
    path: ['AUTH_USERNAME_MIN_LENGTH'],
    message: 'must not exceed AUTH_USERNAME_MAX_LENGTH',
  })
  .refine((c) => c.AUTH_CAPTCHA_PROVIDER === undefined || c.AUTH_CAPTCHA_SECRET_KEY !== undefined, {
    path: ['AUTH_CAPTCHA_SECRET_KEY'],
    message: 'is required when AUTH_CAPTCHA_PROVIDER is set',
  })
  .refine((c) => c.NODE_ENV !== 'production' || c.AUTH_SECRET !== undefined, {
    path: ['AUTH_SECRET'],
    message: 'is required in production',
  })
  .refine((c) => c.AUTH_RATE_LIMIT_STORAGE !== 'redis' || c.REDIS_URL !== undefined, {
    path: ['AUTH_RATE_LIMIT_STORAGE'],
    message: 'redis needs REDIS_URL',
  });


/** The whole configuration, typed from what each concern builds from its settings. */
export type Config = Readonly<
  ReturnType<(typeof coreSettings)['build']> &
    ReturnType<(typeof sessionSettings)['build']> &
    ReturnType<(typeof credentialsSettings)['build']> &
    ReturnType<(typeof perimeterSettings)['build']> &
    ReturnType<(typeof mailSettings)['build']> &
    ReturnType<(typeof organizationSettings)['build']> &
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
 * This is the only place that reads the environment.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`));
  }
  const c = parsed.data;
  if (c.AUTH_SECRET === undefined) {
    throw new ConfigError(['AUTH_SECRET: is required (npm start generates one for the embedded default)']);
  }
  return Object.freeze({
    ...coreSettings.build(c, c),
    ...sessionSettings.build(c, c),
    ...credentialsSettings.build(c, c),
    ...perimeterSettings.build(c, c),
    ...mailSettings.build(c, c),
    ...organizationSettings.build(c, c),
    ...adminSettings.build(c, c),
    ...projectorSettings.build(c, c),
    ...auditSettings.build(c, c),
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

/** A setting's default as the README shows it: what parsing nothing gives, or what its documentation says. */
function shownDefault(schema: z.ZodType): string {
  const stated = docOf(schema)?.shownDefault;
  if (stated !== undefined) return stated;
  const parsed = schema.safeParse(undefined);
  if (!parsed.success || parsed.data === undefined) return 'none';
  const value = parsed.data;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : `\`${value.join(',')}\``;
  if (value === '') return 'none';
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

/** The README's configuration table, generated from the settings (`npm run docs:config` writes it). */
export function configurationTable(): string {
  const lines = ['| variable | default | meaning |', '|---|---|---|'];
  for (const section of settingsSections) {
    lines.push(`| **${section.title}** | | |`);
    for (const [name, schema] of Object.entries(section.shape) as [string, z.ZodType][]) {
      const doc = docOf(schema);
      if (!doc) throw new Error(`setting ${name} has no documentation: declare it with setting()`);
      lines.push(`| \`${name}\` | ${shownDefault(schema)} | ${doc.description} |`);
    }
  }
  return lines.join('\n');
}
