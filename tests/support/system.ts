import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPersonalDataCipher, PersonalData, PostgresDataKeys, type EventBody } from '@portcullis/platform';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { spawnService, waitFor, type ServiceProcess } from './processes.ts';
import { deleteRedisKeys, testRedisUrl, uniqueRedisPrefix } from './redis.ts';
import { serviceEntries } from '../../scripts/build.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

export interface StartSystemOptions {
  /** Run with the Redis session cache (the caller must skip when Redis is unreachable: describeWithRedis). */
  redis?: boolean;
  /** Extra environment for both processes; wins over the defaults below. */
  env?: Record<string, string>;
  /** The api's port, when something must know its URL before it starts (a test IdP's redirect URIs). */
  port?: number;
  /** Run on this database (a restored backup) instead of a fresh one; `stop()` drops it all the same. */
  database?: TestDatabase;
}

export interface System {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** `baseUrl` + the auth base path (`/api/auth`). */
  readonly authUrl: string;
  /** The environment both processes were started with (DATABASE_URL, AUTH_SECRET, ...). */
  readonly env: Readonly<Record<string, string>>;
  readonly api: ServiceProcess;
  readonly projector: ServiceProcess;
  readonly database: TestDatabase;
  /** Runs one query against the system's database (read models and the event log). */
  query<Row extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]>;
  /**
   * Runs a query of `events` rows (selecting at least `type`, `data` and `metadata`) and answers them with
   * their personal data opened, as the services read them (see `PersonalData`).
   */
  events<Row extends Partial<EventBody> & pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<Array<Row & EventBody>>;
  /** The id the log stores a stream under (an address's reservation or sign-in guard by its keyed name). */
  storedStreamId(streamId: string): string;
  /** Kills both processes, drops the database and deletes the Redis keys; safe to call twice. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;

/**
 * The environment a system's processes share: its database, a fresh secret, the api's port and public URL,
 * the Redis cache only when asked for, and what suites need (answers checked, no rate limit); `env` wins.
 */
export function systemEnvironment(options: {
  databaseUrl: string;
  port: number;
  baseUrl: string;
  redisUrl: string | null;
  redisPrefix: string | null;
  env?: Record<string, string> | undefined;
}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: options.databaseUrl,
    AUTH_SECRET: randomBytes(32).toString('base64url'),
    HOST: '127.0.0.1',
    PORT: String(options.port),
    BASE_URL: options.baseUrl,
    LOG_LEVEL: 'warn',
    // Every answer a suite provokes is held to its endpoint's declared schema (a stray one is a 500).
    AUTH_CHECK_ANSWERS: 'true',
    // A test machine has a REDIS_URL of its own at most by accident: only the redis option turns the cache on.
    REDIS_URL: options.redisUrl ?? '',
    REDIS_KEY_PREFIX: options.redisPrefix ?? '',
    // Likewise Kafka: the run's broker (KAFKA_BROKERS, or one global-setup started) carries mail only for
    // the specs that pass it in (isolatedKafkaEnv), on topics and a group of their own.
    KAFKA_BROKERS: '',
    // Suites sign in and up many times a test from one address; the rate limit has its own tests
    // (tests/http/rate-limit.http.spec.ts), which turn it back on.
    AUTH_RATE_LIMIT_ENABLED: 'false',
    // Several systems run at once: the workers' metrics ports are whatever is free.
    PROJECTOR_METRICS_PORT: '0',
    MAILER_METRICS_PORT: '0',
    ...options.env,
  };
}

/**
 * The whole system as production runs it: a fresh database, the real projector and api processes on a free
 * port, ready once GET /readyz says so (which needs the projector's checkpoints, so both are up).
 */
export async function startSystem(options: StartSystemOptions = {}): Promise<System> {
  const redisUrl = options.redis ? testRedisUrl() : null;
  if (options.redis && !redisUrl) throw new Error('startSystem({ redis: true }) needs a reachable Redis; use describeWithRedis');

  const database = options.database ?? (await createTestDatabase('http', { migrated: true }));
  const port = options.port ?? (await pickFreePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  const redisPrefix = redisUrl ? uniqueRedisPrefix() : null;
  const env = systemEnvironment({ databaseUrl: database.url, port, baseUrl, redisUrl, redisPrefix, env: options.env });

  const started: ServiceProcess[] = [];
  const pgPool = new pg.Pool({ connectionString: database.url, max: 2 });
  pgPool.on('error', () => {});
  // The ring the processes start with (AUTH_SECRETS, or AUTH_SECRET as a ring of one).
  const cipher = createPersonalDataCipher(env.AUTH_SECRETS ? env.AUTH_SECRETS.split(',') : env.AUTH_SECRET!);
  // Believed for no time at all: a spec reads an erasure at once.
  const keys = new PostgresDataKeys({ databaseUrl: database.url, cipher, cacheTtlMs: 0 });
  const personalData = new PersonalData(cipher, keys);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await Promise.all(started.map((p) => p.stop()));
      await keys.close().catch(() => {});
      await pgPool.end().catch(() => {});
      await database.drop();
      if (redisUrl && redisPrefix) await deleteRedisKeys(redisUrl, redisPrefix);
    })();
    return stopping;
  };

  try {
    const projector = spawnService({ name: 'projector', entry: serviceEntries.projector.built, env });
    started.push(projector);
    const api = spawnService({ name: 'api', entry: serviceEntries.api.built, env });
    started.push(api);

    // A process that dies while starting will never become ready: fail at once, with its output, rather
    // than at the timeout (waitFor treats a throwing condition as "not yet", so the race is done here).
    const died = Promise.race(
      started.map((service) =>
        service.exited.then((exit) => {
          throw new Error(`${service.name} exited (${exit.code ?? exit.signal}) while starting:\n${service.output()}`);
        }),
      ),
    );
    died.catch(() => {});
    const ready = waitFor(
      async () => {
        const response = await fetch(`${baseUrl}/readyz`);
        await response.body?.cancel();
        return response.status === 200;
      },
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: 100, message: `GET ${baseUrl}/readyz to answer 200` },
    ).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${outputs(started)}`);
    });
    await Promise.race([ready, died]);

    return {
      baseUrl,
      authUrl: `${baseUrl}${env.AUTH_BASE_PATH ?? '/api/auth'}`,
      env,
      api,
      projector,
      database,
      query: async (text, values) => (await pgPool.query(text, values)).rows,
      events: async <Row extends Partial<EventBody> & pg.QueryResultRow>(text: string, values?: unknown[]) => {
        const rows = (await pgPool.query<Row>(text, values)).rows;
        return personalData.decode(rows.map((row) => ({ ...row, type: row.type ?? '', data: row.data ?? null, metadata: row.metadata ?? { occurredAt: '' } })));
      },
      storedStreamId: (streamId) => personalData.storedStreamId(streamId),
      stop,
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

function outputs(services: readonly ServiceProcess[]): string {
  return services.map((s) => `--- ${s.name}\n${s.output().slice(-4000)}`).join('\n');
}

export interface HttpResponse<Json = unknown> {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed body when it is JSON (`null` for a JSON `null`), else undefined. */
  readonly json: Json;
  readonly text: string;
  /** The raw `Set-Cookie` lines of this response, one per cookie. */
  readonly setCookies: string[];
}

export interface RequestOptions {
  /** Sent as JSON unless `rawBody` is given. */
  body?: unknown;
  /** A body sent as is (set the content-type in `headers`). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Send this one request without the jar's cookies (the answer's Set-Cookie lines are still kept). */
  withoutCookies?: boolean;
}

/** One parsed `Set-Cookie` line: the value still URL-encoded as it went over the wire, attribute names lower-cased. */
export interface SetCookie {
  readonly name: string;
  readonly value: string;
  readonly attributes: ReadonlyMap<string, string | true>;
}

export function parseSetCookie(line: string): SetCookie {
  const [pair = '', ...rest] = line.split(';');
  const eq = pair.indexOf('=');
  const attributes = new Map<string, string | true>();
  for (const part of rest) {
    const trimmed = part.trim();
    if (!trimmed) continue;
    const i = trimmed.indexOf('=');
    if (i < 0) attributes.set(trimmed.toLowerCase(), true);
    else attributes.set(trimmed.slice(0, i).toLowerCase(), trimmed.slice(i + 1));
  }
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes };
}

/**
 * A browser in miniature over global fetch: it keeps the cookies servers set and sends them back, and forgets
 * a cookie set with Max-Age=0 (or an Expires in the past), the way better-auth clears its cookies. Paths,
 * domains and expiry times are not modelled: every test client talks to one server.
 */
export class HttpClient {
  private readonly jar = new Map<string, string>();

  constructor(
    readonly baseUrl: string,
    private readonly defaultHeaders: Record<string, string> = {},
  ) {}

  /** `path` is relative to `baseUrl` (`'get-session?disableRefresh=true'`); a leading '/' starts at the host root. */
  async request<Json = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<Json>> {
    const headers = new Headers(this.defaultHeaders);
    // A browser sends its page's Origin on every POST; this one's page is on the server's own origin, which
    // the origin check trusts. A test of the check itself sets or omits (`origin: ''`) it.
    if (method !== 'GET' && method !== 'HEAD' && !headers.has('origin')) headers.set('origin', new URL(this.baseUrl).origin);
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (name.toLowerCase() === 'origin' && value === '') headers.delete(name);
      else headers.set(name, value);
    }
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
    if (!options.withoutCookies && this.jar.size > 0 && !headers.has('cookie')) headers.set('cookie', this.cookieHeader());

    const response = await fetch(new URL(path, this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`), {
      method,
      headers,
      body,
      redirect: 'manual',
    });
    const text = await response.text();
    const setCookies = response.headers.getSetCookie();
    this.absorb(setCookies);
    let json: unknown;
    if ((response.headers.get('content-type') ?? '').includes('application/json') && text !== '') json = JSON.parse(text);
    return { status: response.status, headers: response.headers, json: json as Json, text, setCookies };
  }

  get<Json = unknown>(path: string, options?: RequestOptions): Promise<HttpResponse<Json>> {
    return this.request<Json>('GET', path, options);
  }

  post<Json = unknown>(path: string, body?: unknown, options?: RequestOptions): Promise<HttpResponse<Json>> {
    return this.request<Json>('POST', path, { ...options, ...(body !== undefined ? { body } : {}) });
  }

  /** The cookie's value as it travels (URL-encoded), or undefined. */
  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  cookieNames(): string[] {
    return [...this.jar.keys()];
  }

  cookieHeader(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  setCookie(name: string, value: string): void {
    this.jar.set(name, value);
  }

  clearCookies(): void {
    this.jar.clear();
  }

  /** Applies `Set-Cookie` lines the way a browser would (used by clients that fetch on their own, too). */
  absorb(lines: readonly string[]): void {
    for (const line of lines) {
      const cookie = parseSetCookie(line);
      const maxAge = cookie.attributes.get('max-age');
      const expires = cookie.attributes.get('expires');
      // Max-Age wins over Expires when both are given (RFC 6265, 5.3).
      const deleted =
        typeof maxAge === 'string'
          ? Number(maxAge) <= 0
          : typeof expires === 'string' && Date.parse(expires) <= Date.now();
      if (deleted) this.jar.delete(cookie.name);
      else this.jar.set(cookie.name, cookie.value);
    }
  }
}
