import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEphemeralPostgres, type EphemeralPostgres } from '../../services/platform/src/embedded-postgres.ts';
import { migrate } from '../../services/platform/src/database/migrate.ts';
import { buildServices } from '../../scripts/build.ts';
import { buildConsole } from '../../scripts/build-console.ts';
import { reportSkippedEngines, startSkippedEnginesRecord } from './engine-suites.ts';
import { processIsAlive } from './processes.ts';
import { KafkaUnavailable, startTestKafkaBroker, type TestKafkaBroker, type TestKafkaSasl, type TestKafkaTls } from './kafka-broker.ts';
import { containerRuntimeProblem, startKafkaContainer, startKurrentDbContainer, type EngineContainer } from './engine-containers.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of a Postgres that tests may create and drop databases on. */
    postgresAdminUrl: string;
    /** Reachable Redis URL, or null when Redis-dependent tests should skip. */
    redisUrl: string | null;
    /** A database migrated once for the run, copied by `createTestDatabase({ migrated: true })`. */
    migratedTemplateDatabase: string;
    /** KAFKA_BROKERS of the run's broker (given, or started by this setup), or null when Kafka suites skip. */
    kafkaBrokers: string | null;
    /** The SASL listener of the broker this setup started (none with a given KAFKA_BROKERS), and its user. */
    kafkaSasl: TestKafkaSasl | null;
    /** The TLS listener of the broker this setup started, and the CA file that trusts it (none without openssl). */
    kafkaTls: TestKafkaTls | null;
    /** EVENTSTORE_URL of a KurrentDB server (given, or a container this setup started), or null when its suite skips. */
    eventStoreUrl: string | null;
    /** Why there is no KurrentDB server for the run (printed by the suite that skips). */
    eventStoreAbsence: string;
  }
}

const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const PROBE_TIMEOUT_MS = 2_000;

let embedded: EphemeralPostgres | undefined;
let template: { adminUrl: string; name: string } | undefined;
let kafkaBroker: TestKafkaBroker | undefined;
/** Engines this setup started in containers, stopped by the teardown. */
const containers: EngineContainer[] = [];

export async function setup(project: TestProject): Promise<void> {
  // Redis first: under CI it can fail the run, and that should not leave an embedded cluster behind.
  const redisUrl = await resolveRedisUrl();
  startSkippedEnginesRecord();
  // The broker (a JVM, seconds to start; a first Maven download) starts while the rest is built.
  const kafkaBrokers = resolveKafkaBrokers();
  kafkaBrokers.catch(() => {});
  const eventStore = resolveEventStore();
  eventStore.catch(() => {});
  try {
    const postgresAdminUrl = await resolvePostgresAdminUrl();
    // System tests run the services as production does: built, from the sources of this run.
    await buildServices();
    // The api serves the console it finds built; the console's tests and browser tests need this run's.
    await buildConsole({ quiet: true });

    const templateName = await createMigratedTemplate(postgresAdminUrl);
    const kafka = await kafkaBrokers;
    const { url: eventStoreUrl, absence: eventStoreAbsence } = await eventStore;

    project.provide('postgresAdminUrl', postgresAdminUrl);
    project.provide('redisUrl', redisUrl);
    project.provide('migratedTemplateDatabase', templateName);
    project.provide('kafkaBrokers', kafka);
    project.provide('kafkaSasl', kafkaBroker?.sasl ?? null);
    project.provide('kafkaTls', kafkaBroker?.tls ?? null);
    project.provide('eventStoreUrl', eventStoreUrl);
    project.provide('eventStoreAbsence', eventStoreAbsence);
    // Child processes spawned by system tests, and helpers used outside a test worker, cannot call inject().
    process.env.PORTCULLIS_TEST_PG_ADMIN_URL = postgresAdminUrl;
    process.env.PORTCULLIS_TEST_REDIS_URL = redisUrl ?? '';
    process.env.PORTCULLIS_TEST_PG_TEMPLATE = templateName;
    process.env.PORTCULLIS_TEST_KAFKA_BROKERS = kafka ?? '';
  } catch (error) {
    // A setup that throws gets no teardown: what it started must not outlive it.
    await kafkaBrokers.catch(() => {});
    await eventStore.catch(() => {});
    await teardown();
    throw error;
  }
}

/**
 * KAFKA_BROKERS when given; else a broker of the run's own (Apache Kafka from Maven, tests/kafka/pom.xml).
 * Without Java or Maven the Kafka suites skip with a notice, except under CI=true, where, like a missing
 * Redis, that fails the run.
 */
async function resolveKafkaBrokers(): Promise<string | null> {
  const given = process.env.KAFKA_BROKERS;
  if (given) return given;
  try {
    kafkaBroker = await startTestKafkaBroker({ log: (message) => console.warn(`[global-setup] ${message}`) });
    return kafkaBroker.brokers;
  } catch (error) {
    if (!(error instanceof KafkaUnavailable)) throw error;
    const noContainer = await containerRuntimeProblem();
    if (noContainer === null) {
      console.warn(`[global-setup] no Kafka broker from Maven (${error.message}); starting one in a container`);
      const container = await startKafkaContainer();
      containers.push(container);
      return container.address;
    }
    const why = `${error.message}; ${noContainer}`;
    if (process.env.CI === 'true') {
      throw new Error(`No Kafka broker can be started (${why}). CI=true requires the Kafka suites to run; install Java 17 and Maven, run where Docker is, or set KAFKA_BROKERS.`);
    }
    console.warn(`[global-setup] no Kafka broker for this run (${why}); the Kafka suites will be skipped. Install Java 17 and Maven, run where Docker is, or set KAFKA_BROKERS.`);
    return null;
  }
}

/**
 * EVENTSTORE_URL when given; else, where a container runtime answers, a KurrentDB server in a container.
 * Elsewhere (these machines: no Docker, and KurrentDB has no build that runs without one) its suite skips,
 * CI included: it is listed in the run's last lines.
 */
async function resolveEventStore(): Promise<{ url: string | null; absence: string }> {
  const given = process.env.EVENTSTORE_URL;
  if (given) return { url: given, absence: '' };
  const noContainer = await containerRuntimeProblem();
  if (noContainer !== null) return { url: null, absence: `no KurrentDB server given, and ${noContainer}` };
  console.warn('[global-setup] starting KurrentDB in a container for its contract suite');
  const container = await startKurrentDbContainer();
  containers.push(container);
  return { url: container.address, absence: '' };
}

/**
 * The services refuse a database whose schema is not their build's, so every system test migrates first:
 * once here, into a database each spec's `createTestDatabase({ migrated: true })` copies (`CREATE DATABASE …
 * TEMPLATE`, a tenth of the time of migrating). Named per run: runs sharing a server do not share it.
 */
async function createMigratedTemplate(adminUrl: string): Promise<string> {
  const name = `portcullis_template_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // A run killed before its teardown left its template behind: drop those whose run is gone.
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'portcullis\\_template\\_%'`);
    for (const { datname } of rows) {
      const pid = Number(/^portcullis_template_(\d+)_/.exec(datname)?.[1]);
      if (Number.isInteger(pid) && !processIsAlive(pid)) await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(datname)} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  template = { adminUrl, name };
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return name;
}

export async function teardown(): Promise<void> {
  try {
    await stopKafkaDropTemplateAndStopEmbedded();
  } finally {
    // Last, so the run's final lines name every engine suite that did not run.
    reportSkippedEngines();
  }
}

async function stopKafkaDropTemplateAndStopEmbedded(): Promise<void> {
  const broker = kafkaBroker;
  kafkaBroker = undefined;
  await broker?.stop();
  for (const container of containers.splice(0)) await container.stop();
  if (template) {
    const admin = new pg.Client({ connectionString: template.adminUrl });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(template.name)} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
    template = undefined;
  }
  const running = embedded;
  embedded = undefined;
  await running?.stop();
}

async function resolvePostgresAdminUrl(): Promise<string> {
  const forceEmbedded = ['1', 'true'].includes(process.env.PORTCULLIS_TEST_FORCE_EMBEDDED ?? '');
  const configured = process.env.TEST_DATABASE_URL;

  if (!forceEmbedded && configured) {
    const problem = await probePostgres(configured, 10_000);
    // An explicit URL that does not work is a configuration mistake, not a cue to silently use something else.
    if (problem) throw new Error(`TEST_DATABASE_URL is set but unusable for tests: ${problem}`);
    return configured;
  }

  if (!forceEmbedded) {
    const problem = await probePostgres(LOCAL_POSTGRES_URL, PROBE_TIMEOUT_MS);
    if (!problem) return LOCAL_POSTGRES_URL;
    console.warn(`[global-setup] no usable Postgres at ${redact(LOCAL_POSTGRES_URL)} (${problem}); starting embedded Postgres`);
  } else {
    console.warn('[global-setup] PORTCULLIS_TEST_FORCE_EMBEDDED is set; starting embedded Postgres');
  }

  embedded = await startEphemeralPostgres();
  console.warn(`[global-setup] embedded Postgres listening on 127.0.0.1:${embedded.port} (data in ${embedded.dataDir})`);
  if (embedded.staging) {
    console.warn(`[global-setup] running as root: the ${embedded.staging.user} user cannot enter ${embedded.staging.privateDir}, so Postgres runs from ${embedded.staging.folder}`);
  }
  return embedded.url;
}

/** Returns why the server cannot be used for creating test databases, or null when it can. */
async function probePostgres(url: string, timeoutMs: number): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    const result = await client.query<{ allowed: boolean }>(
      'select rolsuper or rolcreatedb as allowed from pg_roles where rolname = current_user',
    );
    return result.rows[0]?.allowed ? null : 'role may not create databases';
  } catch (err) {
    return err instanceof Error ? err.message || err.constructor.name : String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

async function resolveRedisUrl(): Promise<string | null> {
  const url = process.env.TEST_REDIS_URL || DEFAULT_REDIS_URL;
  const problem = await probeRedis(url);
  if (!problem) return url;
  if (process.env.CI === 'true') {
    throw new Error(
      `Redis is not reachable at ${redact(url)} (${problem}). CI=true requires Redis for the test run; ` +
        'start Redis or point TEST_REDIS_URL at one.',
    );
  }
  console.warn(`[global-setup] Redis not reachable at ${redact(url)} (${problem}); Redis-dependent tests will be skipped`);
  return null;
}

async function probeRedis(url: string): Promise<string | null> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // Without a listener ioredis reports connection failures as unhandled 'error' events; the socket error
  // (e.g. ECONNREFUSED) is also a better explanation than the generic rejection of connect().
  let socketError: Error | undefined;
  client.on('error', (err: Error) => {
    socketError ??= err;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no PONG within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    });
    await Promise.race([client.connect().then(() => client.ping()), timeout]);
    return null;
  } catch (err) {
    const reason = socketError ?? err;
    return reason instanceof Error ? reason.message : String(reason);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
