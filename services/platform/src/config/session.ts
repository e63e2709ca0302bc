import { z } from 'zod';
import { flag, MAX_COOKIE_AGE_SECONDS, seconds, section, setting } from './settings.ts';

/** Sessions, their cookies, and the caches get-session answers from. */
export const sessionSettings = section(
  'Sessions',
  {
    AUTH_SESSION_EXPIRES_IN: setting(
      seconds(7 * 24 * 3600).pipe(z.number().max(MAX_COOKIE_AGE_SECONDS, 'cookie max age above 400 days')),
      'session lifetime, seconds (at most 400 days)',
    ),
    AUTH_SESSION_UPDATE_AGE: setting(seconds(24 * 3600), 'a session older than this since its last refresh gets a new lifetime'),
    AUTH_SESSION_FRESH_AGE: setting(seconds(24 * 3600), 'sessions younger than this are fresh (0 turns the check off)'),
    AUTH_COOKIE_PREFIX: setting(z.string().regex(/^[A-Za-z0-9_.-]+$/).default('better-auth'), 'cookie name prefix'),
    AUTH_COOKIE_CACHE_ENABLED: setting(flag(false), 'the signed `session_data` cookie cache'),
    AUTH_COOKIE_CACHE_MAX_AGE: setting(
      z.coerce.number().int().min(1).default(60).pipe(z.number().max(MAX_COOKIE_AGE_SECONDS, 'cookie max age above 400 days')),
      'lifetime of the `session_data` cookie cache, seconds (at most 400 days)',
    ),
    AUTH_SESSION_LOCAL_CACHE: setting(
      flag(true),
      'with Redis: get-session answers from entries held in the api process, dropped the moment Redis reports their key changed (`CLIENT TRACKING ... BCAST`); while that channel is down every read goes to Redis (off with a cluster)',
    ),
    AUTH_SESSION_LOCAL_CACHE_MAX_ENTRIES: setting(z.coerce.number().int().min(1).default(100_000), 'entries the api process holds at most'),
    AUTH_READ_YOUR_WRITES_TIMEOUT_MS: setting(
      z.coerce.number().int().positive().default(5000),
      'how long a write waits for the read models before answering anyway',
    ),
    AUTH_SESSION_READ_MAX_LAG_MS: setting(
      z.coerce.number().int().min(100).max(60_000).default(1000),
      'how far behind the log a read model may be and still be believed that a session is live; the longest a revocation waits when the projector is stuck',
    ),
  },
  (c, core) => ({
    redis: core.REDIS_URL
      ? {
          url: core.REDIS_URL,
          keyPrefix: core.REDIS_KEY_PREFIX,
          /** Entries the api keeps in process (0: none, every get-session reads Redis). */
          localSessionCacheEntries: c.AUTH_SESSION_LOCAL_CACHE ? c.AUTH_SESSION_LOCAL_CACHE_MAX_ENTRIES : 0,
        }
      : null,
    session: {
      expiresInSeconds: c.AUTH_SESSION_EXPIRES_IN,
      updateAgeSeconds: c.AUTH_SESSION_UPDATE_AGE,
      freshAgeSeconds: c.AUTH_SESSION_FRESH_AGE,
    },
    cookiePrefix: c.AUTH_COOKIE_PREFIX,
    /** The signed `session_data` cookie get-session may answer from. */
    cookieCache: { enabled: c.AUTH_COOKIE_CACHE_ENABLED, maxAgeSeconds: c.AUTH_COOKIE_CACHE_MAX_AGE },
    readYourWritesTimeoutMs: c.AUTH_READ_YOUR_WRITES_TIMEOUT_MS,
    /** A read model further behind the log than this is not believed when it says a session is live. */
    sessionReadMaxLagMs: c.AUTH_SESSION_READ_MAX_LAG_MS,
  }),
);
