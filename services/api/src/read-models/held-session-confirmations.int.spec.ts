import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRedisClient, sessionCacheLayout, type Redis } from '@portcullis/platform';
import { waitFor } from '../../../../tests/support/processes.ts';
import { deleteRedisKeys, describeWithRedis, testRedisUrl, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';
import { HeldSessionConfirmations, type HeldSessions } from './held-session-confirmations.ts';

const quietLog = { warn: () => {} };

/** An in-process cache that is live and heard everything sent to it: what matters here is what each process says it heard. */
const liveCache: HeldSessions = { isLive: true, clear: () => {}, roundTrip: async () => true, listen: async () => {} };

describeWithRedis('revocations confirmed by the processes holding sessions', () => {
  const prefix = uniqueRedisPrefix();
  const layout = sessionCacheLayout(prefix, 'held-confirmations');
  const clients: Redis[] = [];
  let subscriber: Redis;
  const processes: HeldSessionConfirmations[] = [];
  /** Every notice, once each process has been handed it. */
  const notices: string[] = [];

  beforeAll(async () => {
    subscriber = createRedisClient(testRedisUrl()!, { name: 'held-confirmations-spec-notices', protocol: 2 });
    subscriber.on('message', (_channel: string, payload: string) => {
      for (const process of processes) process.onNotice(payload);
      notices.push(payload);
    });
    await subscriber.subscribe(layout.checkpointChannel);
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.close()));
    for (const client of [subscriber, ...clients]) client.disconnect();
    await deleteRedisKeys(testRedisUrl()!, prefix);
  });

  function holdingProcess(): HeldSessionConfirmations {
    const client = createRedisClient(testRedisUrl()!, { name: 'held-confirmations-spec' });
    clients.push(client);
    const held = new HeldSessionConfirmations({ redis: { client, layout, held: liveCache }, maxLagMs: 5000, pollIntervalMs: 200, now: () => performance.now(), log: quietLog });
    processes.push(held);
    return held;
  }

  it('answers a revocation once the others have heard its own position, not a later one announced meanwhile', async () => {
    const [answering, other] = [holdingProcess(), holdingProcess()];
    await Promise.all([answering.renew(), other.renew()]);
    // Two revocations appended, at 10 and at 20; both announced at once.
    answering.announce(10);
    answering.announce(20);
    await waitFor(() => notices.includes('held-wanted:20'), { timeoutMs: 5000, message: 'both announcements heard' });
    // Both have heard up to 10 only: the revocation at 20 is not applied yet.
    answering.heard(10);
    other.heard(10);
    // Well inside the bound: a confirmation held back until 20 was heard would leave this waiting it out.
    const bound = performance.now() + 3000;
    expect(await answering.heardEverywhere(10, bound)).toBe(true);
    expect(performance.now()).toBeLessThan(bound);
  });
});
