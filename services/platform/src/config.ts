import { z } from 'zod';
import { logFormats, type LogFormatSetting } from './logger.ts';
import {
  defaultRateLimitRules,
  parseRateLimitRules,
  parseTrustedOrigins,
  parseTrustedProxies,
  type ParsedList,
  type RateLimitRule,
} from './perimeter-settings.ts';

const seconds = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
const lifetime = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');
/** better-auth refuses cookie max ages above 400 days (the limit browsers enforce, RFC 6265bis). */
const MAX_COOKIE_AGE_SECONDS = 34_560_000;
/** A comma-separated list checked entry by entry; every bad entry is reported. */
const list = <T>(parse: (value: string) => ParsedList<T>) =>
  z
    .string()
    .default('')
    .transform((value, ctx): T[] => {
      const parsed = parse(value);
      for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
      return parsed.values;
    });

export const captchaProviders = ['cloudflare-turnstile', 'google-recaptcha', 'hcaptcha'] as const;
export type CaptchaProvider = (typeof captchaProviders)[number];
/** better-auth's default captcha endpoints, plus the spec's /forget-password. */
const defaultCaptchaEndpoints = ['/sign-up/email', '/sign-in/email', '/forget-password', '/request-password-reset'];

/**
 * What slonik would get wrong about a postgres:// URL. It reads the user, password, host and port from the
 * URL's authority only: libpq's `?host=/socket&user=…` form parses without complaint and connects as the
 * OS user, and a socket path left unencoded in the authority is no URL at all.
 */
function databaseUrlProblem(value: string): string | null {
  const supportedForms = 'postgres://user:password@host:5432/db, or for a Unix socket postgres://user@%2Fvar%2Frun%2Fpostgresql/db';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `is not a valid URL; use ${supportedForms}`;
  }
  const ignored = ['host', 'hostaddr', 'port', 'user', 'password'].filter((name) => url.searchParams.has(name));
  if (ignored.length > 0) return `takes ${ignored.join(', ')} in the URL itself, not as query parameters: ${supportedForms}`;
  return null;
}

const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    HOST: z.string().default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    BASE_URL: z.url().optional(),
    AUTH_BASE_PATH: z
      .string()
      .regex(/^\/[A-Za-z0-9/_-]*[^/]$/, 'must start with / and not end with /')
      .default('/api/auth'),
    AUTH_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .superRefine((value, context) => {
        const problem = databaseUrlProblem(value);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }),
    REDIS_URL: z
      .string()
      .regex(/^(rediss?|redis\+cluster):\/\//, 'must be a redis:// URL (redis+cluster://host:port,host:port for a cluster)')
      .optional(),
    REDIS_KEY_PREFIX: z.string().default('portcullis:'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    // Human-readable lines on a terminal, JSON everywhere else, unless told.
    LOG_FORMAT: z.enum(logFormats).default('auto'),
    AUTH_SESSION_EXPIRES_IN: seconds(7 * 24 * 3600).pipe(z.number().max(MAX_COOKIE_AGE_SECONDS, 'cookie max age above 400 days')),
    AUTH_SESSION_UPDATE_AGE: seconds(24 * 3600),
    AUTH_SESSION_FRESH_AGE: seconds(24 * 3600),
    AUTH_PASSWORD_MIN_LENGTH: z.coerce.number().int().min(1).default(8),
    AUTH_PASSWORD_MAX_LENGTH: z.coerce.number().int().min(1).max(4096).default(128),
    AUTH_COOKIE_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]+$/).default('better-auth'),
    AUTH_SIGN_UP_AUTO_SIGN_IN: flag(true),
    AUTH_READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
    // How far behind the log a read model (Redis cache, session table) may be and still be believed when
    // it says a session is live; also how long a revocation waits, at most, when the projector is stuck.
    AUTH_SESSION_READ_MAX_LAG_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
    AUTH_BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(64 * 1024),
    TRUSTED_ORIGINS: list(parseTrustedOrigins),
    AUTH_TRUSTED_PROXIES: list(parseTrustedProxies),
    AUTH_RATE_LIMIT_ENABLED: flag(true),
    AUTH_RATE_LIMIT_WINDOW: z.coerce.number().int().min(1).default(10),
    AUTH_RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(100),
    AUTH_RATE_LIMIT_RULES: list(parseRateLimitRules),
    AUTH_RATE_LIMIT_STORAGE: z.enum(['auto', 'redis', 'postgres']).default('auto'),
    AUTH_RATE_LIMIT_BATCH_MS: z.coerce.number().int().min(0).max(1000).default(100),
    AUTH_COOKIE_CACHE_ENABLED: flag(false),
    // With Redis: get-session answers from entries held in the api process, kept coherent by Redis's
    // invalidation pushes (server-assisted client-side caching).
    AUTH_SESSION_LOCAL_CACHE: flag(true),
    AUTH_SESSION_LOCAL_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).default(100_000),
    AUTH_COOKIE_CACHE_MAX_AGE: z.coerce
      .number()
      .int()
      .min(1)
      .default(60)
      .pipe(z.number().max(MAX_COOKIE_AGE_SECONDS, 'cookie max age above 400 days')),
    // Usernames (issue 4): better-auth's username plugin bounds.
    AUTH_USERNAME_MIN_LENGTH: z.coerce.number().int().min(1).default(3),
    AUTH_USERNAME_MAX_LENGTH: z.coerce.number().int().min(1).max(256).default(30),
    // Brute-force protection: after MAX_FAILURES failed sign-ins for one email or username within WINDOW
    // seconds, sign-ins with it are refused for LOCK_DURATION seconds (or until the password is reset).
    AUTH_BRUTE_FORCE_PROTECTION: flag(true),
    AUTH_BRUTE_FORCE_MAX_FAILURES: z.coerce.number().int().min(1).default(5),
    AUTH_BRUTE_FORCE_WINDOW: z.coerce.number().int().min(1).default(900),
    AUTH_BRUTE_FORCE_LOCK_DURATION: z.coerce.number().int().min(1).default(900),
    // Captcha (better-auth's captcha plugin): off unless a provider is named.
    AUTH_CAPTCHA_PROVIDER: z.enum(captchaProviders).optional(),
    AUTH_CAPTCHA_SECRET_KEY: z.string().min(1).optional(),
    AUTH_CAPTCHA_SITE_KEY: z.string().min(1).optional(),
    AUTH_CAPTCHA_ENDPOINTS: z
      .string()
      .default(defaultCaptchaEndpoints.join(','))
      .transform((value) => value.split(',').map((p) => p.trim()).filter((p) => p !== ''))
      .pipe(z.array(z.string().regex(/^\/[A-Za-z0-9/_.*-]*$/, 'paths must start with / (wildcards: *, **)')).min(1)),
    AUTH_CAPTCHA_VERIFY_URL: z.url().optional(),
    AUTH_CAPTCHA_MIN_SCORE: z.coerce.number().min(0).max(1).default(0.5),
    AUTH_CAPTCHA_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
    PROJECTOR_BATCH_SIZE: z.coerce.number().int().positive().default(500),
    PROJECTOR_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(1000),
    PROJECTOR_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(50),
    PROJECTOR_LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(5000),
    PROJECTOR_REBUILD_BATCH_SIZE: z.coerce.number().int().positive().default(2000),
    // Email lifecycle (issue 3). better-auth's defaults, except that sending mail is on: the mailer is always there.
    AUTH_SERVER_API_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
    AUTH_EMAIL_VERIFICATION_ENABLED: flag(true),
    AUTH_EMAIL_VERIFICATION_EXPIRES_IN: lifetime(3600),
    AUTH_REQUIRE_EMAIL_VERIFICATION: flag(false),
    AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP: z.enum(['true', 'false', '1', '0']).optional(),
    AUTH_EMAIL_VERIFICATION_AUTO_SIGN_IN: flag(false),
    AUTH_RESET_PASSWORD_ENABLED: flag(true),
    AUTH_RESET_PASSWORD_EXPIRES_IN: lifetime(3600),
    AUTH_RESET_PASSWORD_REVOKE_SESSIONS: flag(false),
    AUTH_CHANGE_EMAIL_ENABLED: flag(false),
    AUTH_DELETE_USER_ENABLED: flag(false),
    AUTH_DELETE_USER_VERIFICATION: flag(false),
    AUTH_DELETE_USER_EXPIRES_IN: lifetime(86400),
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\/[^/]/, 'must be an smtp:// or smtps:// URL')
      .optional(),
    MAIL_FROM: z.string().min(3).default('Portcullis <no-reply@localhost>'),
    MAIL_PRODUCT_NAME: z.string().min(1).max(100).default('Portcullis'),
    KAFKA_BROKERS: z
      .string()
      .regex(/^[A-Za-z0-9.-]+:\d+(,[A-Za-z0-9.-]+:\d+)*$/, 'must be host:port[,host:port...]')
      .optional(),
    KAFKA_CLIENT_ID: z.string().regex(/^[A-Za-z0-9._-]+$/).default('portcullis'),
    KAFKA_TOPIC_PREFIX: z.string().regex(/^[A-Za-z0-9._-]*$/).default(''),
    KAFKA_MAILER_GROUP: z.string().regex(/^[A-Za-z0-9._-]+$/).default('portcullis-mailer'),
    MAILER_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
    MAILER_RETRY_BASE_MS: z.coerce.number().int().positive().default(2000),
    MAILER_RETRY_MAX_MS: z.coerce.number().int().positive().default(10 * 60 * 1000),
    MAILER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    MAILER_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(1000),
    // Organizations (issue 5): better-auth's organization plugin options, with teams switched on.
    AUTH_ORGANIZATION_ALLOW_CREATE: flag(true),
    AUTH_ORGANIZATION_LIMIT: z.coerce.number().int().min(1).optional(),
    AUTH_ORGANIZATION_MEMBERSHIP_LIMIT: z.coerce.number().int().min(1).default(100),
    AUTH_ORGANIZATION_INVITATION_EXPIRES_IN: lifetime(172_800),
    AUTH_ORGANIZATION_INVITATION_LIMIT: z.coerce.number().int().min(1).default(100),
    AUTH_ORGANIZATION_INVITATION_URL: z
      .string()
      .regex(/^https?:\/\/.*\{id\}/, 'must be an http(s) URL containing {id}')
      .optional(),
    AUTH_ORGANIZATION_REQUIRE_EMAIL_VERIFICATION_ON_INVITATION: flag(false),
    AUTH_ORGANIZATION_DISABLE_DELETION: flag(false),
    AUTH_ORGANIZATION_TEAMS_ENABLED: flag(true),
    AUTH_ORGANIZATION_DEFAULT_TEAM: flag(true),
    AUTH_ORGANIZATION_MAXIMUM_TEAMS: z.coerce.number().int().min(1).optional(),
    AUTH_ORGANIZATION_MAXIMUM_MEMBERS_PER_TEAM: z.coerce.number().int().min(1).optional(),
    AUTH_ORGANIZATION_ALLOW_REMOVING_ALL_TEAMS: flag(false),
  })
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

export type RawConfig = z.infer<typeof configSchema>;

export interface Config {
  readonly env: RawConfig['NODE_ENV'];
  readonly host: string;
  readonly port: number;
  readonly baseUrl: string;
  readonly basePath: string;
  readonly secret: string;
  readonly databaseUrl: string;
  readonly redis: {
    readonly url: string;
    readonly keyPrefix: string;
    /** Entries the api keeps in process (0: none, every get-session reads Redis). */
    readonly localSessionCacheEntries: number;
  } | null;
  readonly logLevel: RawConfig['LOG_LEVEL'];
  readonly logFormat: LogFormatSetting;
  readonly session: {
    readonly expiresInSeconds: number;
    readonly updateAgeSeconds: number;
    readonly freshAgeSeconds: number;
  };
  readonly password: { readonly minLength: number; readonly maxLength: number };
  readonly cookiePrefix: string;
  readonly signUpAutoSignIn: boolean;
  readonly readYourWritesTimeoutMs: number;
  /** A read model further behind the log than this is not believed when it says a session is live. */
  readonly sessionReadMaxLagMs: number;
  readonly bodyLimitBytes: number;
  /** The base URL's origin first, then TRUSTED_ORIGINS (exact origins and wildcard patterns). */
  readonly trustedOrigins: readonly string[];
  /** Proxies whose X-Forwarded-For is believed (fastify's trustProxy); empty: the socket peer is the client. */
  readonly trustedProxies: readonly string[];
  readonly rateLimit: {
    readonly enabled: boolean;
    /** Shared by every api replica: Redis when REDIS_URL is set, Postgres otherwise (or as configured). */
    readonly storage: 'redis' | 'postgres';
    /** The limit of any path no rule covers. */
    readonly window: number;
    readonly max: number;
    /** Configured rules, then better-auth's defaults; the first whose path matches wins. */
    readonly rules: readonly RateLimitRule[];
    /**
     * How often lenient limits (50 or more per window) send their counts to the shared store; between
     * sends they are counted in the process. 0: every request is counted in the store.
     */
    readonly batchMs: number;
  };
  /** The signed `session_data` cookie get-session may answer from. */
  readonly cookieCache: { readonly enabled: boolean; readonly maxAgeSeconds: number };
  readonly username: { readonly minLength: number; readonly maxLength: number };
  readonly bruteForce: {
    readonly enabled: boolean;
    readonly maxFailures: number;
    readonly windowSeconds: number;
    readonly lockSeconds: number;
  };
  readonly captcha: {
    readonly provider: CaptchaProvider;
    readonly secretKey: string;
    readonly siteKey: string | null;
    /** Paths under the auth base path; `*` matches within a segment, `**` across segments. */
    readonly endpoints: readonly string[];
    /** Replaces the provider's siteverify URL (a self-hosted proxy, or a fake vendor in tests). */
    readonly verifyUrlOverride: string | null;
    /** reCAPTCHA v3: answers scoring below this are refused. */
    readonly minScore: number;
    /** A verify call that takes longer is abandoned and the request refused (fail closed). */
    readonly timeoutMs: number;
  } | null;
  readonly projector: {
    readonly batchSize: number;
    readonly pollIntervalMs: number;
    readonly lingerMs: number;
    /** A holder that stops heartbeating loses its projections' locks after this long (failover bound). */
    readonly leaseMs: number;
    readonly rebuildBatchSize: number;
  };
  /** `x-api-key` that makes a request a server call (set-password, ops endpoints in production). */
  readonly serverApiKey: string | null;
  readonly emailVerification: {
    readonly enabled: boolean;
    readonly expiresInSeconds: number;
    /** Sign-in refuses unverified emails (403) and re-sends the mail. */
    readonly required: boolean;
    readonly sendOnSignUp: boolean;
    readonly autoSignIn: boolean;
  };
  readonly resetPassword: { readonly enabled: boolean; readonly expiresInSeconds: number; readonly revokeSessions: boolean };
  readonly changeEmail: { readonly enabled: boolean };
  readonly deleteUser: { readonly enabled: boolean; readonly sendVerification: boolean; readonly expiresInSeconds: number };
  readonly mail: { readonly smtpUrl: string | null; readonly from: string; readonly productName: string };
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    readonly topicPrefix: string;
    readonly mailerGroup: string;
  } | null;
  readonly mailer: {
    readonly maxAttempts: number;
    readonly retryBaseMs: number;
    readonly retryMaxMs: number;
    readonly concurrency: number;
    readonly pollIntervalMs: number;
  };
  readonly organization: {
    readonly allowCreate: boolean;
    /** Organizations one user may belong to when creating another; null: no limit. */
    readonly organizationLimit: number | null;
    readonly membershipLimit: number;
    readonly invitationExpiresInSeconds: number;
    /** Pending invitations one organization may hold. */
    readonly invitationLimit: number;
    /** The link an invitation mail carries; `{id}` is replaced by the invitation id. */
    readonly invitationUrl: string;
    readonly requireEmailVerificationOnInvitation: boolean;
    readonly disableDeletion: boolean;
    readonly teams: {
      readonly enabled: boolean;
      /** A new organization gets a team of its own name, holding its creator. */
      readonly defaultTeam: boolean;
      readonly maximumTeams: number | null;
      readonly maximumMembersPerTeam: number | null;
      readonly allowRemovingAllTeams: boolean;
    };
  };
}

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
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`));
  }
  const c = parsed.data;
  if (c.AUTH_SECRET === undefined) {
    throw new ConfigError(['AUTH_SECRET: is required (npm start generates one for the embedded default)']);
  }
  return Object.freeze({
    env: c.NODE_ENV,
    host: c.HOST,
    port: c.PORT,
    baseUrl: (c.BASE_URL ?? `http://localhost:${c.PORT}`).replace(/\/$/, ''),
    basePath: c.AUTH_BASE_PATH,
    secret: c.AUTH_SECRET,
    databaseUrl: c.DATABASE_URL,
    redis: c.REDIS_URL
      ? {
          url: c.REDIS_URL,
          keyPrefix: c.REDIS_KEY_PREFIX,
          localSessionCacheEntries: c.AUTH_SESSION_LOCAL_CACHE ? c.AUTH_SESSION_LOCAL_CACHE_MAX_ENTRIES : 0,
        }
      : null,
    logLevel: c.LOG_LEVEL,
    logFormat: c.LOG_FORMAT,
    session: {
      expiresInSeconds: c.AUTH_SESSION_EXPIRES_IN,
      updateAgeSeconds: c.AUTH_SESSION_UPDATE_AGE,
      freshAgeSeconds: c.AUTH_SESSION_FRESH_AGE,
    },
    password: { minLength: c.AUTH_PASSWORD_MIN_LENGTH, maxLength: c.AUTH_PASSWORD_MAX_LENGTH },
    cookiePrefix: c.AUTH_COOKIE_PREFIX,
    signUpAutoSignIn: c.AUTH_SIGN_UP_AUTO_SIGN_IN,
    readYourWritesTimeoutMs: c.AUTH_READ_YOUR_WRITES_TIMEOUT_MS,
    sessionReadMaxLagMs: c.AUTH_SESSION_READ_MAX_LAG_MS,
    bodyLimitBytes: c.AUTH_BODY_LIMIT_BYTES,
    trustedOrigins: Object.freeze([
      ...new Set([new URL(c.BASE_URL ?? `http://localhost:${c.PORT}`).origin, ...c.TRUSTED_ORIGINS]),
    ]),
    trustedProxies: Object.freeze(c.AUTH_TRUSTED_PROXIES),
    rateLimit: {
      enabled: c.AUTH_RATE_LIMIT_ENABLED,
      storage:
        c.AUTH_RATE_LIMIT_STORAGE === 'auto' ? (c.REDIS_URL ? 'redis' : 'postgres') : c.AUTH_RATE_LIMIT_STORAGE,
      window: c.AUTH_RATE_LIMIT_WINDOW,
      max: c.AUTH_RATE_LIMIT_MAX,
      rules: Object.freeze([...c.AUTH_RATE_LIMIT_RULES, ...defaultRateLimitRules]),
      batchMs: c.AUTH_RATE_LIMIT_BATCH_MS,
    },
    cookieCache: { enabled: c.AUTH_COOKIE_CACHE_ENABLED, maxAgeSeconds: c.AUTH_COOKIE_CACHE_MAX_AGE },
    username: { minLength: c.AUTH_USERNAME_MIN_LENGTH, maxLength: c.AUTH_USERNAME_MAX_LENGTH },
    bruteForce: {
      enabled: c.AUTH_BRUTE_FORCE_PROTECTION,
      maxFailures: c.AUTH_BRUTE_FORCE_MAX_FAILURES,
      windowSeconds: c.AUTH_BRUTE_FORCE_WINDOW,
      lockSeconds: c.AUTH_BRUTE_FORCE_LOCK_DURATION,
    },
    captcha:
      c.AUTH_CAPTCHA_PROVIDER && c.AUTH_CAPTCHA_SECRET_KEY
        ? {
            provider: c.AUTH_CAPTCHA_PROVIDER,
            secretKey: c.AUTH_CAPTCHA_SECRET_KEY,
            siteKey: c.AUTH_CAPTCHA_SITE_KEY ?? null,
            endpoints: Object.freeze(c.AUTH_CAPTCHA_ENDPOINTS),
            verifyUrlOverride: c.AUTH_CAPTCHA_VERIFY_URL ?? null,
            minScore: c.AUTH_CAPTCHA_MIN_SCORE,
            timeoutMs: c.AUTH_CAPTCHA_TIMEOUT_MS,
          }
        : null,
    projector: {
      batchSize: c.PROJECTOR_BATCH_SIZE,
      pollIntervalMs: c.PROJECTOR_POLL_INTERVAL_MS,
      lingerMs: c.PROJECTOR_LINGER_MS,
      leaseMs: c.PROJECTOR_LEASE_MS,
      rebuildBatchSize: c.PROJECTOR_REBUILD_BATCH_SIZE,
    },
    serverApiKey: c.AUTH_SERVER_API_KEY ?? null,
    emailVerification: {
      enabled: c.AUTH_EMAIL_VERIFICATION_ENABLED,
      expiresInSeconds: c.AUTH_EMAIL_VERIFICATION_EXPIRES_IN,
      required: c.AUTH_REQUIRE_EMAIL_VERIFICATION,
      // better-auth: sendOnSignUp defaults to requireEmailVerification.
      sendOnSignUp:
        c.AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP === undefined
          ? c.AUTH_REQUIRE_EMAIL_VERIFICATION
          : ['true', '1'].includes(c.AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP),
      autoSignIn: c.AUTH_EMAIL_VERIFICATION_AUTO_SIGN_IN,
    },
    resetPassword: {
      enabled: c.AUTH_RESET_PASSWORD_ENABLED,
      expiresInSeconds: c.AUTH_RESET_PASSWORD_EXPIRES_IN,
      revokeSessions: c.AUTH_RESET_PASSWORD_REVOKE_SESSIONS,
    },
    changeEmail: { enabled: c.AUTH_CHANGE_EMAIL_ENABLED },
    deleteUser: {
      enabled: c.AUTH_DELETE_USER_ENABLED,
      sendVerification: c.AUTH_DELETE_USER_VERIFICATION,
      expiresInSeconds: c.AUTH_DELETE_USER_EXPIRES_IN,
    },
    mail: { smtpUrl: c.SMTP_URL ?? null, from: c.MAIL_FROM, productName: c.MAIL_PRODUCT_NAME },
    kafka: c.KAFKA_BROKERS
      ? {
          brokers: c.KAFKA_BROKERS.split(','),
          clientId: c.KAFKA_CLIENT_ID,
          topicPrefix: c.KAFKA_TOPIC_PREFIX,
          mailerGroup: c.KAFKA_MAILER_GROUP,
        }
      : null,
    mailer: {
      maxAttempts: c.MAILER_MAX_ATTEMPTS,
      retryBaseMs: c.MAILER_RETRY_BASE_MS,
      retryMaxMs: c.MAILER_RETRY_MAX_MS,
      concurrency: c.MAILER_CONCURRENCY,
      pollIntervalMs: c.MAILER_POLL_INTERVAL_MS,
    },
    organization: {
      allowCreate: c.AUTH_ORGANIZATION_ALLOW_CREATE,
      organizationLimit: c.AUTH_ORGANIZATION_LIMIT ?? null,
      membershipLimit: c.AUTH_ORGANIZATION_MEMBERSHIP_LIMIT,
      invitationExpiresInSeconds: c.AUTH_ORGANIZATION_INVITATION_EXPIRES_IN,
      invitationLimit: c.AUTH_ORGANIZATION_INVITATION_LIMIT,
      invitationUrl:
        c.AUTH_ORGANIZATION_INVITATION_URL ??
        `${(c.BASE_URL ?? `http://localhost:${c.PORT}`).replace(/\/$/, '')}/accept-invitation/{id}`,
      requireEmailVerificationOnInvitation: c.AUTH_ORGANIZATION_REQUIRE_EMAIL_VERIFICATION_ON_INVITATION,
      disableDeletion: c.AUTH_ORGANIZATION_DISABLE_DELETION,
      teams: {
        enabled: c.AUTH_ORGANIZATION_TEAMS_ENABLED,
        defaultTeam: c.AUTH_ORGANIZATION_DEFAULT_TEAM,
        maximumTeams: c.AUTH_ORGANIZATION_MAXIMUM_TEAMS ?? null,
        maximumMembersPerTeam: c.AUTH_ORGANIZATION_MAXIMUM_MEMBERS_PER_TEAM ?? null,
        allowRemovingAllTeams: c.AUTH_ORGANIZATION_ALLOW_REMOVING_ALL_TEAMS,
      },
    },
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
