import { z } from 'zod';
import {
  defaultRateLimitRules,
  parseRateLimitRules,
  parseTrustedOrigins,
  parseTrustedProxies,
} from '../perimeter-settings.ts';
import { baseUrlOf } from './core.ts';
import { flag, list, section, setting } from './settings.ts';

const captchaProviders = ['cloudflare-turnstile', 'google-recaptcha', 'hcaptcha'] as const;
export type CaptchaProvider = (typeof captchaProviders)[number];
/** better-auth's default captcha endpoints, plus the spec's /forget-password. */
const defaultCaptchaEndpoints = ['/sign-up/email', '/sign-in/email', '/forget-password', '/request-password-reset'];

/** What stands between the api and hostile clients: origins, proxies, rate limits, captcha. */
export const perimeterSettings = section(
  'Perimeter',
  {
    TRUSTED_ORIGINS: setting(
      list(parseTrustedOrigins),
      'comma-separated origins (`https://app.example.com`), wildcard patterns (`https://*.example.com`, `*.example.com`) and app schemes (`myapp://`) trusted besides `BASE_URL`\'s',
    ),
    AUTH_TRUSTED_PROXIES: setting(
      list(parseTrustedProxies),
      'comma-separated IPs or CIDR ranges (or `loopback`, `linklocal`, `uniquelocal`) of proxies whose `X-Forwarded-For` gives the client address',
    ),
    AUTH_RATE_LIMIT_ENABLED: setting(flag(true), 'rate limiting'),
    AUTH_RATE_LIMIT_WINDOW: setting(z.coerce.number().int().min(1).default(10), 'the window of paths no rule covers, seconds'),
    AUTH_RATE_LIMIT_MAX: setting(z.coerce.number().int().min(1).default(100), 'requests per window on paths no rule covers'),
    AUTH_RATE_LIMIT_RULES: setting(
      list(parseRateLimitRules),
      'per-route rules before better-auth\'s defaults: `path=max/window` or `path=off`, comma-separated; a trailing `*` makes a prefix (`/sign-in/email=10/60,/get-session=off`); matched against route patterns (`/reset-password/:token`)',
    ),
    AUTH_RATE_LIMIT_STORAGE: setting(
      z.enum(['auto', 'redis', 'postgres']).default('auto'),
      '`redis` (needs `REDIS_URL`), `postgres`, or `auto`: Redis when `REDIS_URL` is set',
    ),
    AUTH_RATE_LIMIT_BATCH_MS: setting(
      z.coerce.number().int().min(0).max(1000).default(100),
      'limits of 50 or more per window are counted in the process and sent to the shared store this often (replicas may pass one interval\'s worth of each other\'s requests over the limit); tighter limits are counted in the store on every request; `0`: always in the store',
    ),
    AUTH_CAPTCHA_PROVIDER: setting(z.enum(captchaProviders).optional(), '`cloudflare-turnstile`, `google-recaptcha` or `hcaptcha`: captcha on the endpoints below'),
    AUTH_CAPTCHA_SECRET_KEY: setting(z.string().min(1).optional(), 'the captcha provider\'s secret (required with a provider)'),
    AUTH_CAPTCHA_SITE_KEY: setting(z.string().min(1).optional(), 'hCaptcha site key sent with each verification'),
    AUTH_CAPTCHA_ENDPOINTS: setting(
      z
        .string()
        .default(defaultCaptchaEndpoints.join(','))
        .transform((value) => value.split(',').map((p) => p.trim()).filter((p) => p !== ''))
        .pipe(z.array(z.string().regex(/^\/[A-Za-z0-9/_.*-]*$/, 'paths must start with / (wildcards: *, **)')).min(1)),
      'routes that need a captcha (`*` within a segment, `**` across), matched against route patterns',
    ),
    AUTH_CAPTCHA_VERIFY_URL: setting(z.url().optional(), 'where captcha tokens are verified', "the provider's siteverify URL"),
    AUTH_CAPTCHA_MIN_SCORE: setting(z.coerce.number().min(0).max(1).default(0.5), 'reCAPTCHA v3: answers scoring below this are refused'),
    AUTH_CAPTCHA_TIMEOUT_MS: setting(z.coerce.number().int().positive().default(10_000), 'how long to wait for the captcha vendor before refusing'),
  },
  (c, core) => ({
    /** The base URL's origin first, then TRUSTED_ORIGINS (exact origins and wildcard patterns). */
    trustedOrigins: Object.freeze([...new Set([new URL(baseUrlOf(core)).origin, ...c.TRUSTED_ORIGINS])]),
    /** Proxies whose X-Forwarded-For is believed (fastify's trustProxy); empty: the socket peer is the client. */
    trustedProxies: Object.freeze(c.AUTH_TRUSTED_PROXIES),
    rateLimit: {
      enabled: c.AUTH_RATE_LIMIT_ENABLED,
      /** Shared by every api replica: Redis when REDIS_URL is set, Postgres otherwise (or as configured). */
      storage: c.AUTH_RATE_LIMIT_STORAGE === 'auto' ? (core.REDIS_URL ? ('redis' as const) : ('postgres' as const)) : c.AUTH_RATE_LIMIT_STORAGE,
      /** The limit of any path no rule covers. */
      window: c.AUTH_RATE_LIMIT_WINDOW,
      max: c.AUTH_RATE_LIMIT_MAX,
      /** Configured rules, then better-auth's defaults; the first whose path matches wins. */
      rules: Object.freeze([...c.AUTH_RATE_LIMIT_RULES, ...defaultRateLimitRules]),
      /** How often lenient limits send their in-process counts to the shared store; 0: every request. */
      batchMs: c.AUTH_RATE_LIMIT_BATCH_MS,
    },
    captcha:
      c.AUTH_CAPTCHA_PROVIDER && c.AUTH_CAPTCHA_SECRET_KEY
        ? {
            provider: c.AUTH_CAPTCHA_PROVIDER,
            secretKey: c.AUTH_CAPTCHA_SECRET_KEY,
            siteKey: c.AUTH_CAPTCHA_SITE_KEY ?? null,
            /** Paths under the auth base path; `*` matches within a segment, `**` across segments. */
            endpoints: Object.freeze(c.AUTH_CAPTCHA_ENDPOINTS),
            /** Replaces the provider's siteverify URL (a self-hosted proxy, or a fake vendor in tests). */
            verifyUrlOverride: c.AUTH_CAPTCHA_VERIFY_URL ?? null,
            minScore: c.AUTH_CAPTCHA_MIN_SCORE,
            /** A verify call that takes longer is abandoned and the request refused (fail closed). */
            timeoutMs: c.AUTH_CAPTCHA_TIMEOUT_MS,
          }
        : null,
  }),
);
