import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import kafkajs from 'kafkajs';
import { pickFreePort } from '@portcullis/platform/free-port';
import { processIsAlive, repoRoot, waitFor } from './processes.ts';

/**
 * A single-node KRaft Kafka for the test run: Apache Kafka's own broker from Maven Central (tests/kafka/pom.xml),
 * on spare loopback ports, its log in a temporary directory that goes with it.
 */
export interface TestKafkaBroker {
  /** `host:port`, what KAFKA_BROKERS takes. */
  readonly brokers: string;
  /** A second listener that wants SASL (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512), and the one user it knows. */
  readonly sasl: TestKafkaSasl;
  /** A third listener that speaks TLS, its certificate signed by a CA of the run's own; null without openssl. */
  readonly tls: TestKafkaTls | null;
  stop(): Promise<void>;
}

export interface TestKafkaTls {
  readonly brokers: string;
  /** PEM of the CA that signed the listener's certificate (for 127.0.0.1). */
  readonly caFile: string;
}

export interface TestKafkaSasl {
  readonly brokers: string;
  readonly username: string;
  readonly password: string;
}

/** Why no broker can be started here (no Java, no Maven), as a sentence for a notice. */
export class KafkaUnavailable extends Error {}

const POM = path.join(repoRoot, 'tests', 'kafka', 'pom.xml');
// Maven's first run downloads the plugins and ~60 MB of jars; a slow mirror must not fail the run.
const RESOLVE_TIMEOUT_MS = 10 * 60_000;
const READY_TIMEOUT_MS = 90_000;
const DIR_PREFIX = 'portcullis-kafka-';

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(path.join(dir, command)));
}

/** Null when Java and Maven are both there, else what is missing. */
export function kafkaToolsMissing(): string | null {
  const missing = ['java', 'mvn'].filter((command) => !onPath(command));
  return missing.length === 0 ? null : `${missing.join(' and ')} not found on PATH`;
}

function run(command: string, args: readonly string[], options: { timeoutMs: number; onLine?: (line: string) => void }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString();
      output += text;
      if (options.onLine) for (const line of text.split('\n')) if (line.trim() !== '') options.onLine(line);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (error) => (clearTimeout(timer), reject(error)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output.trimEnd().split('\n').slice(-40).join('\n')}`));
    });
  });
}

/**
 * The broker's classpath, from Maven. Asking Maven costs seconds even when everything is cached, so the answer
 * is kept beside the temporary directories, named by the pom's hash, and used while every jar it names exists.
 */
async function brokerClasspath(log: (message: string) => void): Promise<string> {
  const pom = await readFile(POM);
  const cached = path.join(os.tmpdir(), `portcullis-kafka-classpath-${createHash('sha256').update(pom).digest('hex').slice(0, 16)}.txt`);
  const known = await readFile(cached, 'utf8').catch(() => null);
  if (known && known.split(path.delimiter).every((jar) => existsSync(jar))) return known;

  const started = Date.now();
  log('resolving Apache Kafka with Maven (tests/kafka/pom.xml; a first run downloads about 60 MB into ~/.m2)');
  let downloaded = 0;
  const progress = setInterval(() => log(`still resolving: ${downloaded} files downloaded, ${Math.round((Date.now() - started) / 1000)} s`), 15_000);
  const output = `${cached}.${process.pid}`;
  try {
    await run('mvn', ['-B', '-f', POM, 'dependency:build-classpath', `-Dmdep.outputFile=${output}`], {
      timeoutMs: RESOLVE_TIMEOUT_MS,
      onLine: (line) => {
        if (line.includes('Downloaded from')) downloaded += 1;
      },
    });
  } finally {
    clearInterval(progress);
  }
  const classpath = (await readFile(output, 'utf8')).trim();
  await writeFile(cached, classpath);
  await rm(output, { force: true });
  log(`Kafka resolved in ${((Date.now() - started) / 1000).toFixed(1)} s (${downloaded} files downloaded)`);
  return classpath;
}

/**
 * A run killed before its teardown leaves its broker running (a JVM does not die with its parent) and its
 * directory behind: the directory names the run's pid and holds the broker's, so the next run ends both.
 */
export async function removeAbandonedBrokers(): Promise<void> {
  for (const name of await readdir(os.tmpdir())) {
    const owner = Number(new RegExp(`^${DIR_PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!Number.isInteger(owner) || processIsAlive(owner)) continue;
    const dir = path.join(os.tmpdir(), name);
    const brokerPid = Number(await readFile(path.join(dir, 'broker.pid'), 'utf8').catch(() => ''));
    if (Number.isInteger(brokerPid) && brokerPid > 0) {
      const commandLine = await readFile(`/proc/${brokerPid}/cmdline`, 'utf8').catch(() => '');
      // The pid may have been reused since: only a process running this directory's broker is ended.
      if (commandLine.includes(dir)) process.kill(brokerPid, 'SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  }
}

const SASL_USER = 'portcullis';

/**
 * A CA of the run's own and a certificate for 127.0.0.1 it signed, as PEM files: the CA's for the client
 * (KAFKA_SSL_CA_FILE), the key and chain in one file for the broker (a PEM key store). Null without openssl.
 */
async function makeCertificates(dir: string): Promise<{ caFile: string; keyStore: string } | null> {
  if (!onPath('openssl')) return null;
  const file = (name: string): string => path.join(dir, name);
  const openssl = (...args: string[]): Promise<string> => run('openssl', args, { timeoutMs: 30_000 });
  await openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Portcullis test CA');
  await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('broker.key'), '-out', file('broker.csr'), '-subj', '/CN=127.0.0.1');
  await writeFile(file('broker.ext'), 'subjectAltName=IP:127.0.0.1\n');
  await openssl('x509', '-req', '-in', file('broker.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('broker.pem'), '-days', '2', '-extfile', file('broker.ext'));
  await writeFile(file('broker-keystore.pem'), (await readFile(file('broker.key'), 'utf8')) + (await readFile(file('broker.pem'), 'utf8')));
  return { caFile: file('ca.pem'), keyStore: file('broker-keystore.pem') };
}

interface ListenerPorts {
  readonly broker: number;
  readonly controller: number;
  readonly sasl: number;
  readonly tls: number | null;
}

function serverProperties(dir: string, ports: ListenerPorts, saslPassword: string, keyStore: string | null): string {
  const tls = ports.tls !== null && keyStore !== null;
  const listeners = [`PLAINTEXT://127.0.0.1:${ports.broker}`, `SASL_PLAINTEXT://127.0.0.1:${ports.sasl}`, ...(tls ? [`SSL://127.0.0.1:${ports.tls}`] : [])];
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${ports.controller}`,
    `listeners=${[...listeners, `CONTROLLER://127.0.0.1:${ports.controller}`].join(',')}`,
    `advertised.listeners=${listeners.join(',')}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL',
    ...(tls ? ['listener.name.ssl.ssl.keystore.type=PEM', `listener.name.ssl.ssl.keystore.location=${keyStore}`] : []),
    // What KAFKA_SASL_MECHANISM offers, each with the same user: PLAIN's from here, SCRAM's written at format.
    'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
    `listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${SASL_USER}="${saslPassword}";`,
    'listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    `log.dirs=${path.join(dir, 'data')}`,
    // One node: every internal topic has one replica. Few offset partitions make the first group join quick.
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=4',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    // The product creates its topics itself (KafkaMailBus); a broker that made them on first use would hide it if it did not.
    'auto.create.topics.enable=false',
    '',
  ].join('\n');
}

/**
 * Resolves Kafka with Maven, formats a KRaft log directory and starts the broker as a child process; resolves
 * once the broker answers a metadata request. Throws KafkaUnavailable without Java or Maven.
 */
export async function startTestKafkaBroker(options: { log: (message: string) => void }): Promise<TestKafkaBroker> {
  const missing = kafkaToolsMissing();
  if (missing) throw new KafkaUnavailable(missing);
  const started = Date.now();
  await removeAbandonedBrokers();
  const classpath = await brokerClasspath(options.log);

  const dir = await mkdtemp(path.join(os.tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  let broker: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    if (broker && broker.exitCode === null && broker.signalCode === null) {
      const exited = new Promise((resolve) => broker!.once('exit', resolve));
      // Nothing of the broker's is kept: no need to wait for a controlled shutdown.
      broker.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const certificates = await makeCertificates(dir);
    const ports = { broker: await pickFreePort(), controller: await pickFreePort(), sasl: await pickFreePort(), tls: certificates ? await pickFreePort() : null };
    const saslPassword = randomBytes(12).toString('hex');
    const properties = path.join(dir, 'server.properties');
    await writeFile(properties, serverProperties(dir, ports, saslPassword, certificates?.keyStore ?? null));
    await mkdir(path.join(dir, 'data'));
    // A short-lived JVM: the C1 compiler alone starts it sooner, and a test broker never gets hot enough to miss C2.
    const jvm = ['-Xms256m', '-Xmx512m', '-XX:TieredStopAtLevel=1', '-Djava.awt.headless=true', '-cp', classpath];
    const clusterId = randomBytes(16).toString('base64url');
    const scram = ['SCRAM-SHA-256', 'SCRAM-SHA-512'].flatMap((mechanism) => ['--add-scram', `${mechanism}=[name=${SASL_USER},password=${saslPassword}]`]);
    await run('java', [...jvm, 'kafka.tools.StorageTool', 'format', '--cluster-id', clusterId, '--config', properties, ...scram], { timeoutMs: 60_000 });

    const child = spawn('java', [...jvm, 'kafka.Kafka', properties], { stdio: ['ignore', 'pipe', 'pipe'] });
    broker = child;
    await writeFile(path.join(dir, 'broker.pid'), String(child.pid));
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-64 * 1024);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const brokers = `127.0.0.1:${ports.broker}`;
    await waitUntilServing(brokers, child, () => output);
    options.log(`Kafka broker on ${brokers}, ready ${((Date.now() - started) / 1000).toFixed(1)} s after setup asked for it`);
    return {
      brokers,
      sasl: { brokers: `127.0.0.1:${ports.sasl}`, username: SASL_USER, password: saslPassword },
      tls: certificates && ports.tls !== null ? { brokers: `127.0.0.1:${ports.tls}`, caFile: certificates.caFile } : null,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Until the broker answers a metadata request with itself as the controller: then topics can be created. */
async function waitUntilServing(brokers: string, child: ChildProcess, output: () => string): Promise<void> {
  const kafka = new kafkajs.Kafka({ clientId: 'portcullis-test-setup', brokers: [brokers], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 0 } });
  const admin = kafka.admin();
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`the Kafka broker exited (${signal ?? code}) before it was ready:\n${output()}`))),
  );
  exited.catch(() => {});
  try {
    await Promise.race([
      exited,
      waitFor(
        async () => {
          await admin.connect();
          const cluster = await admin.describeCluster();
          return cluster.brokers.length > 0 && cluster.controller !== null;
        },
        { timeoutMs: READY_TIMEOUT_MS, intervalMs: 200, message: `the Kafka broker on ${brokers} to answer a metadata request` },
      ),
    ]);
  } finally {
    await admin.disconnect().catch(() => {});
  }
}
