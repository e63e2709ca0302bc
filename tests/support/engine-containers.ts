/**
 * Engines the test run starts in containers (testcontainers) where a container runtime answers and no URL
 * names one: KurrentDB always (no other way to run it), Kafka only where the Maven broker cannot start (no
 * Java or Maven). testcontainers is loaded only then: a run with URLs given, or a broker from Maven, pays
 * nothing for it.
 */

/** KurrentDB 25.1 or later: its `multiStreamAppend` is what reservations need. `TEST_KURRENTDB_IMAGE` picks another. */
const KURRENTDB_IMAGE = process.env.TEST_KURRENTDB_IMAGE || 'kurrentplatform/kurrentdb:25.1';
/** A KRaft broker (testcontainers' Kafka module speaks Confluent's images). `TEST_KAFKA_IMAGE` picks another. */
const KAFKA_IMAGE = process.env.TEST_KAFKA_IMAGE || 'confluentinc/cp-kafka:7.9.0';

export interface EngineContainer {
  /** The connection string (EVENTSTORE_URL) or broker list (KAFKA_BROKERS) the suites use. */
  readonly address: string;
  stop(): Promise<void>;
}

/** Why no container can be started here, or null when a container runtime answers. */
export async function containerRuntimeProblem(): Promise<string | null> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return null;
  } catch (error) {
    return `no container runtime: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * A single insecure node. testcontainers' own KurrentDB module needs testcontainers 12.1, which needs Node
 * 22.22 (its undici), while the suites run on Node 20 too: this is that module's container, on 11.
 */
export async function startKurrentDbContainer(): Promise<EngineContainer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const started = await new GenericContainer(KURRENTDB_IMAGE)
    .withExposedPorts(2113)
    .withEnvironment({ KURRENTDB_CLUSTER_SIZE: '1', KURRENTDB_INSECURE: 'true', KURRENTDB_RUN_PROJECTIONS: 'None' })
    .withStartupTimeout(120_000)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
    .start();
  return {
    address: `kurrentdb://${started.getHost()}:${started.getMappedPort(2113)}?tls=false`,
    stop: async () => void (await started.stop()),
  };
}

export async function startKafkaContainer(): Promise<EngineContainer> {
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const started = await new KafkaContainer(KAFKA_IMAGE).withKraft().start();
  // The module's plaintext listener for clients outside the container network.
  return { address: `${started.getHost()}:${started.getMappedPort(9093)}`, stop: async () => void (await started.stop()) };
}
