import { randomBytes } from 'node:crypto';
import { KafkaMailBus } from '@portcullis/platform';
import { describeWithKafka, testKafkaBrokers } from '../support/kafka.ts';
import { mailBusContract } from './mail-bus.suite.ts';

// The run's broker: started by global-setup from Maven's Apache Kafka, or KAFKA_BROKERS when given.
describeWithKafka('Kafka mail bus', () => {
  const log = { warn: () => {}, error: () => {} };
  // Each test gets topics and groups of its own (a prefix), so runs against a shared broker never meet.
  mailBusContract(
    'kafka',
    async () => {
      const run = randomBytes(4).toString('hex');
      const bus = new KafkaMailBus({
        brokers: testKafkaBrokers()!.split(','),
        clientId: `portcullis-test-${run}`,
        topicPrefix: `test-${run}.`,
        log,
        partitions: 2,
      });
      let groups = 0;
      return {
        bus,
        group: (label) => `test-${run}-${label}-${(groups += 1)}`,
        cleanup: () => bus.close(),
      };
    },
    { timeoutMs: 60_000 },
  );
});
