import { z } from 'zod';
import { logFormats } from '../logger.ts';
import { parseSecretRing, SECRET_MIN_LENGTH } from './secret-ring.ts';
import { flag, section, setting } from './settings.ts';

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

const coreShape = {
  NODE_ENV: setting(z.enum(['development', 'production', 'test']).default('development'), 'production requires `AUTH_SECRET` (or `AUTH_SECRETS`) and `SMTP_URL`; the ops endpoints want an operator unless `HOST` is loopback, whatever this says'),
    HOST: setting(z.string().default('127.0.0.1'), 'where the api listens; on loopback alone (`127.0.0.1`, `::1`, `localhost`) the ops endpoints answer anyone on this machine (not a request a proxy relayed, nor any once `AUTH_TRUSTED_PROXIES` is set), elsewhere only an operator (`x-api-key` or an admin\'s session)'),
    PORT: setting(z.coerce.number().int().min(0).max(65535).default(3000), 'the port the api listens on'),
    ADVERTISED_HOST: setting(
      z.string().regex(/^[A-Za-z0-9.:_-]+$/, 'must be a host name or an IP address').optional(),
      'the address other processes reach this one on (the process registry, where the overview reads every process\' figures); in Kubernetes the pod\'s IP (`status.podIP`)',
      '`HOST`, or when that is a wildcard (`0.0.0.0`) this machine\'s first non-loopback IPv4 address',
    ),
    BASE_URL: setting(z.url().optional(), 'public URL; https turns on secure cookies', '`http://localhost:$PORT`'),
    AUTH_BASE_PATH: setting(
      z
        .string()
        .regex(/^\/[A-Za-z0-9/_-]*[^/]$/, 'must start with / and not end with /')
        .default('/api/auth'),
      'mount point of the auth API',
    ),
    AUTH_SECRET: setting(
      z.string().min(SECRET_MIN_LENGTH, `must be at least ${SECRET_MIN_LENGTH} characters`).optional(),
      'signs cookies, seals mailed tokens and wraps the personal-data keys (a ring of one secret, see `AUTH_SECRETS`); at least 32 characters; it or `AUTH_SECRETS` is required when `NODE_ENV=production`',
      'generated into `.data/auth-secret` by `npm start`',
    ),
    AUTH_SECRETS: setting(
      z
        .string()
        .optional()
        .transform((value, context): string[] | undefined => {
          if (value === undefined) return undefined;
          const ring = parseSecretRing(value);
          for (const problem of ring.problems) context.addIssue({ code: 'custom', message: problem });
          return ring.values;
        }),
      'the secrets as a key ring, comma-separated, newest first, each at least 32 characters: the newest signs, seals and wraps, and what any of them made is accepted, so a secret is rotated without signing anyone out (see [Rotating secrets](operations.md#rotating-secrets)); not together with `AUTH_SECRET`',
    ),
    DATABASE_URL: setting(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
        .superRefine((value, context) => {
          const problem = databaseUrlProblem(value);
          if (problem) context.addIssue({ code: 'custom', message: problem });
        }),
      'event log and read models; a Unix socket goes in as a percent-encoded host (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`); libpq\'s `?host=…&user=…` query parameters are refused, since slonik would ignore them and connect as the OS user',
      'embedded Postgres under `npm start`',
    ),
    EVENTSTORE_URL: setting(
      z
        .string()
        .regex(/^(kurrentdb|kdb|esdb|eventstore)(\+discover)?:\/\//, 'must be a KurrentDB connection string (kurrentdb://host:2113, kurrentdb+discover://… for a cluster; esdb:// as well)')
        .optional(),
      'the event log on KurrentDB 25.1 or later instead of Postgres (`kurrentdb://user:password@host:2113`, `kurrentdb+discover://…` for a cluster); read models, checkpoints and personal-data keys stay in `DATABASE_URL`. Taken by every process (the api, the projector, its rebuilds, the mailer and the `audit` CLI), each reading the log only through the port; the projector then also chains the log into `log_chain`, which `audit verify` checks and the audit trail shows hashes from. A process with parts that still read the Postgres log would refuse to start with it, naming them ([design notes](design-notes.md#kurrentdb-how-each-guarantee-maps)); none has any now',
      'the log in `DATABASE_URL`',
    ),
    REDIS_URL: setting(
      z
        .string()
        .regex(/^(rediss?|redis\+cluster):\/\//, 'must be a redis:// URL (redis+cluster://host:port,host:port for a cluster)')
        .optional(),
      'session cache and shared rate-limit counts (`redis://`, `rediss://`, or `redis+cluster://host:port,host:port`); needs `maxmemory-policy noeviction`',
    ),
    REDIS_KEY_PREFIX: setting(z.string().default('portcullis:'), 'prefix of every Redis key'),
    LOG_LEVEL: setting(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'), 'pino level; secrets are redacted'),
    LOG_FORMAT: setting(
      z.enum(logFormats).default('auto'),
      '`pretty` (pino\'s human-readable lines), `json`, or `auto`: pretty when standard output is a terminal, JSON otherwise',
    ),
    AUTH_SERVER_API_KEY: setting(
      z.string().min(32, 'must be at least 32 characters').optional(),
      '`x-api-key` of server calls (set-password, add-member, the ops endpoints); at least 32 characters',
    ),
    AUTH_BODY_LIMIT_BYTES: setting(z.coerce.number().int().positive().default(64 * 1024), 'larger request bodies are refused with 413'),
    AUTH_CHECK_ANSWERS: setting(
      flag(false),
      'check every JSON answer against its endpoint\'s declared schema and answer 500 where one strays (the test suites and staging run with it; it costs each request a parse)',
    ),
};

/** The core settings as parsed: what other concerns derive from (the base URL, the Redis URL). */
export type CoreValues = z.infer<z.ZodObject<typeof coreShape>>;

/** The base URL as configured, or the local default. */
export function baseUrlOf(core: CoreValues): string {
  return (core.BASE_URL ?? `http://localhost:${core.PORT}`).replace(/\/$/, '');
}

/** Where the service runs and what it runs on. */
export const coreSettings = section(
  'Core',
  coreShape,
  (c) => {
    return {
      env: c.NODE_ENV,
      host: c.HOST,
      port: c.PORT,
      advertisedHost: c.ADVERTISED_HOST ?? null,
      baseUrl: baseUrlOf(c),
      basePath: c.AUTH_BASE_PATH,
      /**
       * The key ring, newest first (`AUTH_SECRETS`, or `AUTH_SECRET` as a ring of one; checked present after
       * parsing): what is signed, sealed or wrapped uses the newest, and what is read is accepted under any.
       */
      secrets: Object.freeze<string[]>(c.AUTH_SECRETS ?? (c.AUTH_SECRET === undefined ? [] : [c.AUTH_SECRET])),
      /** The newest secret, for what is only ever produced (a JWT to sign, a flow's derived secrets). */
      secret: c.AUTH_SECRETS?.[0] ?? c.AUTH_SECRET ?? '',
      databaseUrl: c.DATABASE_URL,
      /** Where the event log is when not in Postgres (a KurrentDB connection string; see `eventStoreRefusal`). */
      eventStoreUrl: c.EVENTSTORE_URL ?? null,
      logLevel: c.LOG_LEVEL,
      logFormat: c.LOG_FORMAT,
      /** `x-api-key` that makes a request a server call. */
      serverApiKey: c.AUTH_SERVER_API_KEY ?? null,
      bodyLimitBytes: c.AUTH_BODY_LIMIT_BYTES,
      checkAnswers: c.AUTH_CHECK_ANSWERS,
    };
  },
);
