import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { MailJob } from '@portcullis/contracts';
import { KafkaMailBus, loadConfig } from '@portcullis/platform';
import { testKafkaSasl, testKafkaTls } from '../support/kafka.ts';
import { waitFor } from '../support/processes.ts';
import { describeWithEngine } from '../support/engine-suites.ts';

const quiet = { warn: () => {}, error: () => {} };

function job(userId: string): MailJob {
  return {
    jobId: randomUUID(),
    kind: 'verification',
    userId,
    to: `${userId}@example.test`,
    name: userId,
    sealedToken: 'v1.sealed',
    callbackURL: null,
    expiresAt: '2030-01-01T01:00:00.000Z',
    newEmail: null,
    requestedAt: '2030-01-01T00:00:00.000Z',
    traceparent: null,
  };
}

/** A bus built the way the services build theirs: from the settings, through loadConfig. */
function busFrom(env: Record<string, string>): KafkaMailBus {
  const run = randomUUID().slice(0, 8);
  const config = loadConfig({
    DATABASE_URL: 'postgres://localhost/unused',
    AUTH_SECRET: 'x'.repeat(32),
    KAFKA_TOPIC_PREFIX: `test-security-${run}.`,
    KAFKA_CLIENT_ID: `test-security-${run}`,
    KAFKA_TOPIC_PARTITIONS: '1',
    ...env,
  });
  return new KafkaMailBus({ ...config.kafka!, log: quiet });
}

async function carriesAJob(bus: KafkaMailBus, label: string): Promise<void> {
  try {
    const seen: MailJob[] = [];
    await bus.consume({ group: `test-${label}-${randomUUID().slice(0, 8)}`, handle: async (received) => void seen.push(received) });
    const sent = job(label);
    await bus.publish([sent]);
    await waitFor(() => seen.length > 0, { timeoutMs: 30_000, message: `the job over ${label}` });
    expect(seen).toEqual([sent]);
  } finally {
    await bus.close();
  }
}

const tls = testKafkaTls();

// The run's broker has an SSL listener whose certificate (for 127.0.0.1) a CA of the run's own signed.
describeWithEngine('Kafka mail bus over TLS (KAFKA_SSL, KAFKA_SSL_CA_FILE)', tls !== null, {
  reason: 'no TLS listener: only the broker the test setup starts has one, its certificate made with openssl',
  toRun: 'unset KAFKA_BROKERS, with Java, Maven and openssl here',
}, () => {
  it("trusts the brokers' CA from KAFKA_SSL_CA_FILE, creates its topics and carries a job", async () => {
    await carriesAJob(busFrom({ KAFKA_BROKERS: tls!.brokers, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: tls!.caFile }), 'tls');
  });

  it('refuses a broker whose certificate no CA it trusts signed', async () => {
    const untrusting = busFrom({ KAFKA_BROKERS: tls!.brokers, KAFKA_SSL: 'true' });
    try {
      await expect(untrusting.publish([job('untrusted')])).rejects.toThrow(/certificate|self.signed|issuer/i);
    } finally {
      await untrusting.close();
    }
  });
});

const sasl = testKafkaSasl();

// The run's broker has a SASL_PLAINTEXT listener whose one user has a PLAIN password and SCRAM credentials.
describeWithEngine('Kafka mail bus over SASL (KAFKA_SASL_MECHANISM, _USERNAME, _PASSWORD)', sasl !== null, {
  reason: 'no SASL listener: only the broker the test setup starts has one',
  toRun: 'unset KAFKA_BROKERS, with Java and Maven here',
}, () => {
  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512']) {
    it(`logs in with ${mechanism}, creates its topics and carries a job`, async () => {
      const bus = busFrom({ KAFKA_BROKERS: sasl!.brokers, KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: sasl!.username, KAFKA_SASL_PASSWORD: sasl!.password });
      await carriesAJob(bus, `sasl-${mechanism}`);
    });
  }

  it('is refused with a wrong password', async () => {
    const wrong = busFrom({ KAFKA_BROKERS: sasl!.brokers, KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: sasl!.username, KAFKA_SASL_PASSWORD: 'not-the-password' });
    try {
      await expect(wrong.publish([job('wrong')])).rejects.toThrow(/SASL|authentication/i);
    } finally {
      await wrong.close();
    }
  });
});
