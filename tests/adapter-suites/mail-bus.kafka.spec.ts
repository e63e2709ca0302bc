import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { describe, it } from 'vitest';
import { KafkaMailBus } from '@portcullis/platform';
import { mailBusContract } from './mail-bus.suite.ts';

/** KAFKA_BROKERS of the test machine, when the first broker answers a TCP connect. */
async function reachableBrokers(): Promise<string[] | null> {
  const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  const [host, port] = (brokers[0] ?? '').split(':');
  if (!host || !port) return null;
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port: Number(port), timeout: 2000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
  return reachable ? brokers : null;
}

const brokers = await reachableBrokers();
if (brokers) {
  const log = { warn: () => {}, error: () => {} };
  // Each test gets topics and groups of its own (a prefix), so runs against a shared broker never meet.
  mailBusContract(
    'kafka',
    async () => {
      const run = randomBytes(4).toString('hex');
      const bus = new KafkaMailBus({ brokers, clientId: `portcullis-test-${run}`, topicPrefix: `test-${run}.`, log, partitions: 2 });
      let groups = 0;
      return {
        bus,
        group: (label) => `test-${run}-${label}-${(groups += 1)}`,
        cleanup: () => bus.close(),
      };
    },
    { timeoutMs: 60_000 },
  );
} else {
  console.warn(`[skip] MailBus contract: kafka: KAFKA_BROKERS ${process.env.KAFKA_BROKERS ? 'not reachable' : 'not set'}`);
  describe.skip('MailBus contract: kafka (KAFKA_BROKERS not reachable)', () => {
    it('runs when a broker is reachable', () => {});
  });
}
