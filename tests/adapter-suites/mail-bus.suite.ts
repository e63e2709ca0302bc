import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mailKinds, type MailJob } from '@portcullis/contracts';
import type { MailBus, MailBusConsumer } from '@portcullis/platform';
import { waitFor } from '../support/processes.ts';

export interface MailBusFixture {
  readonly bus: MailBus;
  /** A consumer group name no other test uses. */
  group(label: string): string;
  cleanup(): Promise<void>;
}

function testJob(userId: string, n: number, overrides: Partial<MailJob> = {}): MailJob {
  const kind = mailKinds[n % mailKinds.length]!;
  return {
    jobId: randomUUID(),
    kind,
    userId,
    to: `${userId}@example.test`,
    name: `User ${userId}`,
    sealedToken: `v1.sealed-${n}`,
    callbackURL: n % 2 === 0 ? '/done' : null,
    expiresAt: '2030-01-01T01:00:00.000Z',
    newEmail: kind === 'change-email' ? `new-${userId}@example.test` : null,
    ...(kind === 'invitation'
      ? { invitation: { organizationName: `Org of ${userId}`, inviterName: `User ${userId}`, inviterEmail: `${userId}@example.test`, role: 'member' } }
      : {}),
    requestedAt: '2030-01-01T00:00:00.000Z',
    traceparent: n % 3 === 0 ? '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' : null,
    ...overrides,
  };
}

/**
 * What every MailBus adapter must do: deliver each published job, intact, to each consumer group, at least
 * once and in order per user and kind, resume after what a group consumed, and deliver again what a handler failed.
 */
export function mailBusContract(name: string, factory: () => Promise<MailBusFixture>, options: { timeoutMs?: number } = {}): void {
  const timeoutMs = options.timeoutMs ?? 20_000;

  describe(`MailBus contract: ${name}`, () => {
    let fixture: MailBusFixture;
    const consumers: MailBusConsumer[] = [];

    beforeEach(async () => {
      fixture = await factory();
    });

    afterEach(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.stop()));
      await fixture.cleanup();
    });

    async function consume(group: string, handle: (job: MailJob) => Promise<void>): Promise<MailBusConsumer> {
      const consumer = await fixture.bus.consume({ group, handle });
      consumers.push(consumer);
      return consumer;
    }

    function collector(): { seen: MailJob[]; handle: (job: MailJob) => Promise<void> } {
      const seen: MailJob[] = [];
      return { seen, handle: async (job) => void seen.push(job) };
    }

    async function until(condition: () => boolean, message: string): Promise<void> {
      await waitFor(condition, { timeoutMs, message });
    }

    it('delivers every published job, of every kind, field for field', async () => {
      const users = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'];
      const jobs = users.map((user, n) => testJob(user, n));
      expect(new Set(jobs.map((j) => j.kind))).toEqual(new Set(mailKinds));
      const { seen, handle } = collector();
      await consume(fixture.group('intact'), handle);
      await fixture.bus.publish(jobs);
      await until(() => seen.length >= jobs.length, 'all jobs');
      const byId = new Map(seen.map((j) => [j.jobId, j]));
      for (const job of jobs) expect(byId.get(job.jobId)).toEqual(job);
    });

    it("carries an invitation job's details (who invites to what) intact", async () => {
      const invitation = testJob('grace', 0, {
        kind: 'invitation',
        to: 'invited.person@example.test',
        name: '',
        callbackURL: null,
        newEmail: null,
        invitation: {
          organizationName: 'Ünïcode & <Sons> "Ltd"',
          inviterName: 'Grace Hopper',
          inviterEmail: 'grace@example.test',
          role: 'admin,member',
        },
      });
      const { seen, handle } = collector();
      await consume(fixture.group('invitation'), handle);
      await fixture.bus.publish([invitation]);
      await until(() => seen.length >= 1, 'the invitation job');
      expect(seen[0]).toEqual(invitation);
    });

    // Per kind: Kafka carries each kind on a topic of its own, and nothing orders two topics.
    it("keeps each user's jobs of a kind in the order they were published", async () => {
      const { seen, handle } = collector();
      await consume(fixture.group('order'), handle);
      const published: MailJob[] = [];
      for (let i = 0; i < 12; i += 1) {
        const job = testJob(i % 3 === 0 ? 'erin' : 'frank', i);
        published.push(job);
        await fixture.bus.publish([job]);
      }
      await until(() => new Set(seen.map((j) => j.jobId)).size >= published.length, 'all jobs');
      for (const user of ['erin', 'frank']) {
        for (const kind of mailKinds) {
          const order = (jobs: MailJob[]): string[] => [...new Set(jobs.filter((j) => j.userId === user && j.kind === kind).map((j) => j.jobId))];
          expect(order(seen)).toEqual(order(published));
        }
      }
    });

    it('resumes a group after what it consumed, and gives each group every job', async () => {
      const group = fixture.group('resume');
      const first = collector();
      const consumer = await consume(group, first.handle);
      const before = [testJob('gina', 0), testJob('gina', 1)];
      await fixture.bus.publish(before);
      await until(() => first.seen.length >= before.length, 'the first jobs');
      await consumer.stop();
      consumers.splice(consumers.indexOf(consumer), 1);

      const after = [testJob('gina', 2), testJob('hank', 3)];
      await fixture.bus.publish(after);
      const second = collector();
      await consume(group, second.handle);
      const other = collector();
      await consume(fixture.group('other'), other.handle);
      await until(() => second.seen.length >= after.length && other.seen.length >= 4, 'the later jobs');
      expect(second.seen.map((j) => j.jobId).sort()).toEqual(after.map((j) => j.jobId).sort());
      expect(new Set(other.seen.map((j) => j.jobId))).toEqual(new Set([...before, ...after].map((j) => j.jobId)));
    });

    it('delivers a job again when its handler failed, before the same user’s next job of its kind', async () => {
      const failing = testJob('ivan', 0);
      // Of the same kind: a user's jobs are ordered per kind (see the order test above).
      const next = testJob('ivan', mailKinds.length);
      expect(next.kind).toBe(failing.kind);
      const handled: string[] = [];
      let failures = 0;
      await consume(fixture.group('retry'), async (job) => {
        if (job.jobId === failing.jobId && failures === 0) {
          failures += 1;
          throw new Error('handler failed once');
        }
        handled.push(job.jobId);
      });
      await fixture.bus.publish([failing]);
      await fixture.bus.publish([next]);
      await until(() => handled.includes(next.jobId), 'the next job');
      expect(failures).toBe(1);
      expect(handled.indexOf(failing.jobId)).toBeGreaterThanOrEqual(0);
      expect(handled.indexOf(failing.jobId)).toBeLessThan(handled.indexOf(next.jobId));
    });
  });
}
