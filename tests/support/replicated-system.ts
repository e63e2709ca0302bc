import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pickFreePort } from '@portcullis/platform/free-port';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { spawnService, waitFor, type ServiceProcess } from './processes.ts';
import { deleteRedisKeys, uniqueRedisPrefix } from './redis.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from './round-robin-proxy.ts';
import { TestSmtpServer } from './smtp.ts';
import { systemEnvironment } from './system.ts';
import { serviceEntries } from '../../scripts/build.ts';

export interface ApiReplica {
  readonly name: string;
  /** `http://127.0.0.1:<its own port>`: past the proxy. */
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly process: ServiceProcess;
}

export interface ReplicatedSystem {
  /** The proxy's URL: the public one (every api's BASE_URL). */
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly proxy: RoundRobinProxy;
  readonly apis: readonly ApiReplica[];
  /** Every projector and mailer started so far, in order (a killed one stays listed). */
  readonly projectors: ServiceProcess[];
  readonly mailers: ServiceProcess[];
  readonly smtp: TestSmtpServer;
  readonly env: Readonly<Record<string, string>>;
  readonly database: TestDatabase;
  /** The `x-api-key` header of a server call: with a proxy in front, the ops endpoints answer operators only. */
  readonly operator: Readonly<Record<string, string>>;
  query<Row extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]>;
  /** Another projector (or mailer) on the same settings, registered when this resolves. */
  startProjector(): Promise<ServiceProcess>;
  startMailer(): Promise<ServiceProcess>;
  /** The OS pid of the projector process holding each projection (its lock connection names it). */
  projectionHolders(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

export interface ReplicatedSystemOptions {
  /** The Redis every process shares: the test's shared one, or a cluster (`redis+cluster://…`). */
  redisUrl: string;
  apis?: number;
  env?: Record<string, string>;
}

const READY_TIMEOUT_MS = 60_000;

/**
 * Several replicas as a deployment runs them: api processes behind a round-robin proxy (which they trust for
 * the client's address), and two projectors and two mailers on one Postgres and one Redis. The first
 * projector and mailer are started alone and hold everything once the apis are ready; the second of each
 * starts after, as the standby. Mail goes to an SMTP server in the test.
 */
export async function startReplicatedSystem(options: ReplicatedSystemOptions): Promise<ReplicatedSystem> {
  const apiCount = options.apis ?? 2;
  const database = await createTestDatabase('replicas', { migrated: true });
  const redisPrefix = uniqueRedisPrefix();
  const started: ServiceProcess[] = [];
  let smtp: TestSmtpServer | undefined;
  let proxy: RoundRobinProxy | undefined;
  const pool = new pg.Pool({ connectionString: database.url, max: 3 });
  pool.on('error', () => {});
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await Promise.all(started.map((p) => p.stop()));
      await proxy?.close();
      await smtp?.close();
      await pool.end().catch(() => {});
      await database.drop();
      await deleteRedisKeys(options.redisUrl, redisPrefix).catch(() => {});
    })();
    return stopping;
  };

  try {
    smtp = await TestSmtpServer.start();
    const ports = await Promise.all(Array.from({ length: apiCount }, () => pickFreePort()));
    proxy = await startRoundRobinProxy(ports.map((port) => `http://127.0.0.1:${port}`));
    const apiKey = randomBytes(24).toString('hex');
    const env = systemEnvironment({
      databaseUrl: database.url,
      port: ports[0]!,
      baseUrl: proxy.url,
      redisUrl: options.redisUrl,
      redisPrefix,
      env: {
        AUTH_TRUSTED_PROXIES: '127.0.0.1',
        AUTH_SERVER_API_KEY: apiKey,
        SMTP_URL: smtp.url,
        MAILER_POLL_INTERVAL_MS: '200',
        MAILER_RETRY_BASE_MS: '200',
        MAILER_RETRY_MAX_MS: '1000',
        ...options.env,
      },
    });
    const query = async <Row extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]> => (await pool.query<Row>(text, values)).rows;
    const registered = async (service: string, pid: number): Promise<boolean> =>
      (await query(`SELECT 1 FROM process_registry WHERE service = $1 AND pid = $2`, [service, pid])).length > 0;

    const projectors: ServiceProcess[] = [];
    const mailers: ServiceProcess[] = [];
    const startWorker = async (kind: 'projector' | 'mailer'): Promise<ServiceProcess> => {
      const list = kind === 'projector' ? projectors : mailers;
      const worker = spawnService({ name: `${kind}-${list.length + 1}`, entry: serviceEntries[kind].built, env });
      started.push(worker);
      list.push(worker);
      await untilReady(worker, () => registered(kind, worker.pid), `${worker.name} to register`);
      return worker;
    };

    await startWorker('projector');
    const apis = ports.map((port, i): ApiReplica => {
      const baseUrl = `http://127.0.0.1:${port}`;
      const process = spawnService({ name: `api-${i + 1}`, entry: serviceEntries.api.built, env: { ...env, PORT: String(port) } });
      started.push(process);
      return { name: process.name, baseUrl, authUrl: `${baseUrl}${env.AUTH_BASE_PATH ?? '/api/auth'}`, process };
    });
    for (const api of apis) {
      await untilReady(
        api.process,
        async () => {
          const response = await fetch(`${api.baseUrl}/readyz`);
          await response.body?.cancel();
          return response.status === 200;
        },
        `GET ${api.baseUrl}/readyz to answer 200`,
      );
    }
    await startWorker('mailer');
    await startWorker('projector');
    await startWorker('mailer');

    return {
      baseUrl: proxy.url,
      authUrl: `${proxy.url}${env.AUTH_BASE_PATH ?? '/api/auth'}`,
      proxy,
      apis,
      projectors,
      mailers,
      smtp,
      env,
      database,
      operator: { 'x-api-key': apiKey },
      query,
      startProjector: () => startWorker('projector'),
      startMailer: () => startWorker('mailer'),
      projectionHolders: async () => {
        // As an operator sees it (GET /ops/projections): each projector names its connections with its pid.
        const response = await fetch(`${apis[0]!.baseUrl}/ops/projections`, { headers: { 'x-api-key': apiKey } });
        if (!response.ok) throw new Error(`GET /ops/projections answered ${response.status}: ${await response.text()}`);
        const { projections } = (await response.json()) as { projections: { name: string; holder: { applicationName: string } | null }[] };
        const holders = new Map<string, number>();
        for (const { name, holder } of projections) {
          const pid = /^portcullis-projector pid (\d+)$/.exec(holder?.applicationName ?? '')?.[1];
          if (pid) holders.set(name, Number(pid));
        }
        return holders;
      },
      stop,
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

/** Waits for `condition`, failing at once (with its output) if the process dies first. */
async function untilReady(service: ServiceProcess, condition: () => Promise<boolean>, message: string): Promise<void> {
  const died = service.exited.then((exit) => {
    throw new Error(`${service.name} exited (${exit.code ?? exit.signal}) while starting:\n${service.output()}`);
  });
  died.catch(() => {});
  const ready = waitFor(condition, { timeoutMs: READY_TIMEOUT_MS, intervalMs: 100, message }).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- ${service.name}\n${service.output().slice(-4000)}`);
  });
  await Promise.race([ready, died]);
}
