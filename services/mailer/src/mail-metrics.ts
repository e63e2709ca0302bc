import type { DatabasePool } from '@portcullis/platform';
import { sql } from '@portcullis/platform';
import { instruments } from '@portcullis/platform/telemetry/telemetry';
import type { DeliveryOutcome } from './delivery-log.ts';

/** Mail outcomes: `queued` (a new job in the delivery log), `sent`, `retried` (a failed attempt, backed off), `dead`. */
export type MailOutcome = 'queued' | 'sent' | 'retried' | 'dead';

const mailMetrics = instruments((meter) => ({
  outcomes: meter.createCounter('portcullis.mail.deliveries', { description: 'Mail jobs queued, sent, retried (an attempt failed) and dead-lettered' }),
}));

export function countMail(outcome: MailOutcome, kind: string): void {
  mailMetrics().outcomes.add(1, { outcome, kind });
}

export function mailOutcomeOf(outcome: DeliveryOutcome): MailOutcome {
  return outcome.status === 'retry' ? 'retried' : outcome.status;
}

interface QueueRow {
  readonly pending: number;
  readonly waiting_for_relay: number;
  readonly oldest_seconds: number | null;
}

/**
 * The delivery log's queue, read on each collection: pending jobs, those of them waiting for the relay to come
 * back (above zero for more than a backoff or two: the relay is down, the alert to raise), and how long the
 * oldest has waited. Every mailer reports the same shared queue (the `max` over processes is the figure).
 */
export function observeMailQueue(pool: DatabasePool): void {
  instruments((meter) => {
    const depth = meter.createObservableGauge('portcullis.mail.queue.depth', { description: 'Mail jobs pending delivery (shared by every mailer)' });
    const waitingForRelay = meter.createObservableGauge('portcullis.mail.queue.waiting_for_relay', {
      description: 'Pending mail jobs whose last attempt found the relay unusable (down, unreachable, refusing sessions)',
    });
    const oldest = meter.createObservableGauge('portcullis.mail.queue.oldest', { unit: 's', description: 'How long the oldest pending mail job has waited' });
    meter.addBatchObservableCallback(async (observer) => {
      const row = (await pool.one(sql.unsafe`
        SELECT count(*)::int AS pending, (count(*) FILTER (WHERE waiting_for_relay))::int AS waiting_for_relay,
               extract(epoch FROM now() - min(received_at))::float8 AS oldest_seconds
        FROM mail_delivery WHERE status = 'pending'`)) as QueueRow;
      observer.observe(depth, row.pending);
      observer.observe(waitingForRelay, row.waiting_for_relay);
      observer.observe(oldest, row.oldest_seconds ?? 0);
    }, [depth, waitingForRelay, oldest]);
  })();
}
