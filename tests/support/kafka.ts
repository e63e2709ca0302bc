import { describeWithEngine } from './engine-suites.ts';
import { randomBytes } from 'node:crypto';
import kafkajs from 'kafkajs';
import { inject } from 'vitest';
import type { TestKafkaSasl, TestKafkaTls } from './kafka-broker.ts';

/** KAFKA_BROKERS of the run's broker (given, or started by global-setup), or null when Kafka suites skip. */
export function testKafkaBrokers(): string | null {
  try {
    return inject('kafkaBrokers') ?? null;
  } catch {
    // Outside a vitest worker: global-setup exported the same decision via env ('' meaning none).
    return process.env.PORTCULLIS_TEST_KAFKA_BROKERS || null;
  }
}

/** The SASL listener of the broker the run started, and its user; null with a given KAFKA_BROKERS. */
export function testKafkaSasl(): TestKafkaSasl | null {
  return inject('kafkaSasl') ?? null;
}

/** The TLS listener of the broker the run started, and its CA file; null with a given KAFKA_BROKERS or without openssl. */
export function testKafkaTls(): TestKafkaTls | null {
  return inject('kafkaTls') ?? null;
}

/** `describe` when the run has a broker; otherwise a visible skip naming what would run it. */
export function describeWithKafka(name: string, fn: () => void): void {
  describeWithEngine(name, testKafkaBrokers() !== null, {
    reason: 'no Kafka broker',
    toRun: 'install Java 17 and Maven for a broker of the run\'s own, or set KAFKA_BROKERS',
  }, fn);
}

/**
 * Settings that give a test topics and a consumer group of its own on the shared broker: KAFKA_TOPIC_PREFIX,
 * KAFKA_MAILER_GROUP and KAFKA_CLIENT_ID, all unique to the call.
 */
export function isolatedKafkaEnv(label: string): Record<string, string> {
  const run = `${label}-${randomBytes(4).toString('hex')}`;
  return {
    KAFKA_BROKERS: testKafkaBrokers() ?? '',
    KAFKA_TOPIC_PREFIX: `test-${run}.`,
    KAFKA_MAILER_GROUP: `test-${run}-mailer`,
    KAFKA_CLIENT_ID: `test-${run}`,
  };
}

/** How many members the consumer group has now, as the broker's group coordinator sees it. */
export async function consumerGroupMembers(group: string): Promise<number> {
  const kafka = new kafkajs.Kafka({ clientId: 'portcullis-test-observer', brokers: (testKafkaBrokers() ?? '').split(','), logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([group]);
    return groups[0]?.state === 'Stable' ? groups[0].members.length : 0;
  } finally {
    await admin.disconnect();
  }
}
