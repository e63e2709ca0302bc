import { migrate } from '@portcullis/platform';
import { pickFreePort } from '@portcullis/platform/free-port';
import { answersOk, spawnEntry, waitUntil, type Child } from './children.ts';
import { buildServices, serviceEntries } from '../../../scripts/build.ts';

// Built once per bench run, then measured as `npm start` runs it.
let built: Promise<unknown> | undefined;

interface ApiProcess {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly child: Child;
}

export interface Deployment {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly api: Child;
  readonly projector: Child;
  /**
   * Another api process on the same database and Redis, on a port of its own, ready when this resolves; it
   * stops with the deployment.
   */
  startAnotherApi(): Promise<ApiProcess>;
  /** Another projector or mailer on the same settings (a standby, until the one holding its work is gone). */
  startWorker(kind: 'projector' | 'mailer'): Child;
  stop(): Promise<void>;
}

export interface DeploymentOptions {
  readonly databaseUrl: string;
  readonly secret: string;
  readonly redis: { readonly url: string; readonly keyPrefix: string } | null;
  /**
   * `counting`: the rate limiter runs as in production but with limits no bench can reach (all load comes
   * from one address); `off`: no rate limiting at all.
   */
  readonly rateLimit: 'counting' | 'off';
  /** Members an organization may have; unset, the api's default (100). */
  readonly membershipLimit?: number;
  /** AUTH_SERVER_API_KEY, for server calls such as add-member. */
  readonly serverApiKey?: string;
  /** OTEL_* variables (the telemetry group's traced variant); none by default, so nothing is exported. */
  readonly otel?: Readonly<Record<`OTEL_${string}`, string>>;
  /**
   * A proxy in front of the apis: its URL is the public one (every api's BASE_URL, so the origin clients send
   * through it is trusted), and the apis believe the X-Forwarded-For of `trustedProxies`.
   */
  readonly proxy?: { readonly publicUrl: string; readonly trustedProxies: string };
  /** A mail server the mailers deliver to (the costs group's sink); unset, one no mailer can reach. */
  readonly smtpUrl?: string;
  /** Sign-up queues a verification mail (AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP), as the costs group measures it. */
  readonly signUpMail?: boolean;
}

const UNREACHABLE = 1_000_000_000;

/** Settings the bench decides itself; anything the caller's shell sets for them would skew a variant. */
const OWNED = [
  'DATABASE_URL',
  'AUTH_SECRET',
  'PORT',
  'HOST',
  'BASE_URL',
  'AUTH_BASE_PATH',
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'LOG_LEVEL',
  'AUTH_RATE_LIMIT_ENABLED',
  'AUTH_RATE_LIMIT_MAX',
  'AUTH_RATE_LIMIT_RULES',
  'AUTH_RATE_LIMIT_STORAGE',
  'AUTH_ORGANIZATION_MEMBERSHIP_LIMIT',
  'AUTH_SERVER_API_KEY',
  'AUTH_TRUSTED_PROXIES',
  'PROJECTOR_METRICS_PORT',
  'MAILER_METRICS_PORT',
  'SMTP_URL',
  'AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP',
];

/** Starts api + projector the way production runs them and returns once the api reports ready. */
export async function startDeployment(options: DeploymentOptions): Promise<Deployment> {
  const port = await pickFreePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of OWNED) delete env[name];
  // Tracing is a variant the telemetry group measures, never something the caller's shell turns on.
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
  const baseUrl = `http://127.0.0.1:${port}`;
  Object.assign(env, {
    NODE_ENV: 'production',
    // Production wants a mail server named; unless the group gives one, no mailer is meant to reach it.
    SMTP_URL: options.smtpUrl ?? 'smtp://mail.invalid:25',
    ...(options.signUpMail ? { AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP: 'true' } : {}),
    DATABASE_URL: options.databaseUrl,
    AUTH_SECRET: options.secret,
    HOST: '127.0.0.1',
    PORT: String(port),
    // The origin the bench's own calls claim, so the origin checks on sign-up and sign-in accept them.
    BASE_URL: options.proxy?.publicUrl ?? baseUrl,
    ...(options.proxy ? { AUTH_TRUSTED_PROXIES: options.proxy.trustedProxies } : {}),
    LOG_LEVEL: 'warn',
    ...(options.rateLimit === 'off'
      ? { AUTH_RATE_LIMIT_ENABLED: 'false' }
      : {
          AUTH_RATE_LIMIT_ENABLED: 'true',
          AUTH_RATE_LIMIT_MAX: String(UNREACHABLE),
          // First matching rule wins, so these shadow the 3-per-10-s defaults on the credential routes.
          AUTH_RATE_LIMIT_RULES: `/sign-in*=${UNREACHABLE}/10,/sign-up*=${UNREACHABLE}/10,/change-password*=${UNREACHABLE}/10`,
        }),
    ...(options.redis ? { REDIS_URL: options.redis.url, REDIS_KEY_PREFIX: options.redis.keyPrefix } : {}),
    ...(options.membershipLimit === undefined ? {} : { AUTH_ORGANIZATION_MEMBERSHIP_LIMIT: String(options.membershipLimit) }),
    ...(options.serverApiKey === undefined ? {} : { AUTH_SERVER_API_KEY: options.serverApiKey }),
    // Several deployments may run at once (a second api, a standby): their metrics ports are whatever is free.
    PROJECTOR_METRICS_PORT: '0',
    MAILER_METRICS_PORT: '0',
    ...options.otel,
  });

  built ??= buildServices();
  await built;
  // The migrate step, as a deployment runs it before the services (which refuse a schema not their build's).
  await migrate(options.databaseUrl);
  const projector = spawnEntry('projector', serviceEntries.projector.built, env, { profiled: true });
  const api = spawnEntry('api', serviceEntries.api.built, env, { profiled: true });
  const others: Child[] = [];
  const deployment: Deployment = {
    baseUrl,
    authUrl: `${baseUrl}/api/auth`,
    api,
    projector,
    startAnotherApi: async () => {
      const otherPort = await pickFreePort();
      const otherBaseUrl = `http://127.0.0.1:${otherPort}`;
      const child = spawnEntry(`api ${others.filter((other) => other.name.startsWith('api')).length + 2}`, serviceEntries.api.built, { ...env, PORT: String(otherPort), BASE_URL: options.proxy?.publicUrl ?? otherBaseUrl }, { profiled: true });
      others.push(child);
      await waitUntil(() => answersOk(`${otherBaseUrl}/readyz`), {
        what: `api ready at ${otherBaseUrl}/readyz`,
        timeoutMs: 60_000,
        children: [child, projector],
      });
      return { baseUrl: otherBaseUrl, authUrl: `${otherBaseUrl}/api/auth`, child };
    },
    startWorker: (kind) => {
      const child = spawnEntry(`${kind} ${others.filter((other) => other.name.startsWith(kind)).length + 2}`, serviceEntries[kind].built, env, { profiled: true });
      others.push(child);
      return child;
    },
    stop: async () => {
      await Promise.all([api.stop(), projector.stop(), ...others.map((child) => child.stop())]);
    },
  };
  try {
    await waitUntil(() => answersOk(`${baseUrl}/readyz`), {
      what: `api ready at ${baseUrl}/readyz`,
      timeoutMs: 60_000,
      children: [api, projector],
    });
  } catch (error) {
    await deployment.stop();
    throw error;
  }
  return deployment;
}

/**
 * Resolves once every read model has applied the whole log, as the api's /readyz reports it (`lag 0`):
 * after history was written straight to the log, before anything is measured on it.
 */
export async function waitForProjections(deployment: Deployment, timeoutMs: number): Promise<void> {
  await waitUntil(
    async () => {
      const response = await fetch(`${deployment.baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { checks?: { projections?: { detail?: string } } };
      return response.ok && body.checks?.projections?.detail === 'lag 0';
    },
    { what: 'the projections to apply the whole log', timeoutMs, intervalMs: 500, children: [deployment.api, deployment.projector] },
  );
}
