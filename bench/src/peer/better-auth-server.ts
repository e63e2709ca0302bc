import http from 'node:http';
import { betterAuth, type BetterAuthOptions } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import { admin } from 'better-auth/plugins/admin';
import { organization } from 'better-auth/plugins/organization';
import { Redis } from 'ioredis';
import pg from 'pg';
import { redisSecondaryStorage } from './redis-secondary-storage.ts';

/**
 * better-auth 1.7 as a deployment would run it beside Portcullis: its own Postgres database through a pg
 * Pool, Redis as secondary storage (where it keeps sessions), email and password, and the organization
 * plugin with teams and a default team, as Portcullis's defaults have them. Everything a bench variant
 * decides comes from the environment the bench gives this child.
 */
const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`better-auth peer: ${name} is required`);
  return value;
};

const port = Number(required('PORT'));
const baseURL = required('BASE_URL');
const UNREACHABLE = 1_000_000_000;
const rateLimit: BetterAuthOptions['rateLimit'] =
  process.env.BENCH_RATE_LIMIT === 'off'
    ? { enabled: false }
    : {
        // Counting as deployed, but no bench can reach the limits: all load comes from one address. The
        // special rules (3 per 10 s on sign-in, sign-up, change-password) would refuse after a handful.
        enabled: true,
        max: UNREACHABLE,
        customRules: {
          '/sign-in/*': { window: 10, max: UNREACHABLE },
          '/sign-up/*': { window: 10, max: UNREACHABLE },
          '/change-password': { window: 10, max: UNREACHABLE },
        },
      };

const pool = new pg.Pool({ connectionString: required('DATABASE_URL') });
const redis = new Redis(required('REDIS_URL'), { maxRetriesPerRequest: 1 });

const options = {
  secret: required('AUTH_SECRET'),
  baseURL,
  trustedOrigins: [baseURL],
  database: pool,
  secondaryStorage: redisSecondaryStorage(redis, required('REDIS_KEY_PREFIX')),
  emailAndPassword: { enabled: true },
  rateLimit,
  telemetry: { enabled: false },
  plugins: [
    // Only for the benches that measure it: its session-create hook reads the user on every sign-in.
    ...(process.env.BENCH_ADMIN_PLUGIN === '1' ? [admin()] : []),
    organization({
      teams: { enabled: true },
      // Out of reach, as on the Portcullis side: the bench's organizations grow past the default of 100.
      membershipLimit: Number(process.env.BENCH_MEMBERSHIP_LIMIT ?? 100),
    }),
  ],
} satisfies BetterAuthOptions;

// The schema as better-auth's own CLI (`auth migrate`) would create it.
const { runMigrations } = await getMigrations(options);
await runMigrations();

const auth = betterAuth(options);
const handle = toNodeHandler(auth);
const server = http.createServer((request, response) => void handle(request, response));
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');

const stop = (): void => {
  server.close(() => {
    void Promise.allSettled([pool.end(), redis.quit()]).then(() => process.exit(0));
  });
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
