import { pickFreePort } from '@portcullis/platform/free-port';
import { answersOk, spawnEntry, waitUntil, type Child } from '../lib/children.ts';

export interface BetterAuthPeer {
  readonly authUrl: string;
  readonly child: Child;
  stop(): Promise<void>;
}

export interface PeerOptions {
  readonly databaseUrl: string;
  readonly secret: string;
  readonly redis: { readonly url: string; readonly keyPrefix: string };
  readonly rateLimit: 'counting' | 'off';
  readonly membershipLimit: number;
  /** With better-auth's admin plugin (its roles, bans and admin routes). */
  readonly admin?: boolean;
}

/** Starts better-auth (`better-auth-server.ts`) as a child on a free port; resolves once it answers /ok. */
export async function startBetterAuthPeer(options: PeerOptions): Promise<BetterAuthPeer> {
  const port = await pickFreePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // As the api runs: better-auth turns rate limiting on and trusts no forwarded address in production.
    NODE_ENV: 'production',
    PORT: String(port),
    BASE_URL: baseUrl,
    DATABASE_URL: options.databaseUrl,
    AUTH_SECRET: options.secret,
    REDIS_URL: options.redis.url,
    REDIS_KEY_PREFIX: options.redis.keyPrefix,
    BENCH_RATE_LIMIT: options.rateLimit,
    BENCH_MEMBERSHIP_LIMIT: String(options.membershipLimit),
    BENCH_ADMIN_PLUGIN: options.admin ? '1' : '0',
  };
  const child = spawnEntry('better-auth', 'bench/src/peer/better-auth-server.ts', env, { profiled: true });
  const authUrl = `${baseUrl}/api/auth`;
  try {
    await waitUntil(() => answersOk(`${authUrl}/ok`), { what: `better-auth ready at ${authUrl}/ok`, timeoutMs: 60_000, children: [child] });
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { authUrl, child, stop: () => child.stop() };
}
