import type { MailJob } from '@portcullis/contracts';
import { DeferredMailError, PermanentMailError, type Logger, type MailTransport, type TokenSealer } from '@portcullis/platform';
import type { DeliveryLog, DeliveryOutcome, DueDelivery } from './delivery-log.ts';
import { inSpanContinuing } from '@portcullis/platform/telemetry/telemetry';
import { mailLink, type LinkSettings } from './links.ts';
import { countMail, mailOutcomeOf } from './mail-metrics.ts';
import { afterTemporaryFailure, type RetrySettings } from './retry-schedule.ts';
import type { MailTemplates } from './templates/mail-templates.ts';

export interface DeliverySettings extends LinkSettings, RetrySettings {
  readonly from: string;
  readonly productName: string;
  readonly concurrency: number;
  readonly pollIntervalMs: number;
}

/**
 * Delivers the delivery log's due jobs with `concurrency` workers: renders each (opening its sealed
 * token), hands it to the transport, and records sent, a retry with backoff, or a dead letter once the
 * retry window is over, the refusal is permanent, or the link expired before it could go out. A mail
 * that goes through makes the jobs waiting for the relay due at once (see releaseWaitingForRelay): the
 * earliest of them to come due is the probe that finds the relay back, and the rest follow it.
 */
export class DeliveryWorker {
  private stopped = false;
  private loops: Promise<void>[] = [];
  private wakeUps = new Set<() => void>();

  constructor(
    private readonly deliveries: DeliveryLog,
    private readonly transport: MailTransport,
    private readonly sealer: TokenSealer,
    private readonly settings: DeliverySettings,
    private readonly templates: MailTemplates,
    private readonly log: Logger,
  ) {}

  start(): void {
    for (let i = 0; i < this.settings.concurrency; i += 1) this.loops.push(this.loop());
  }

  /** New jobs arrived: idle workers look at once instead of at their next poll. */
  wake(): void {
    const waiting = [...this.wakeUps];
    this.wakeUps.clear();
    for (const wake of waiting) wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let worked = false;
      try {
        const outcome = await this.deliveries.deliverNext((due) => this.deliverTraced(due));
        worked = outcome !== null;
        if (outcome?.status === 'sent' && (await this.deliveries.releaseWaitingForRelay()) > 0) this.wake();
      } catch (error) {
        this.log.error({ err: error }, 'delivery round failed; retrying');
      }
      if (!worked && !this.stopped) await this.idle();
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakeUps.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.settings.pollIntervalMs);
      this.wakeUps.add(done);
    });
  }

  /** A delivery continues the trace of the request that asked for the mail (the job's traceparent). */
  private deliverTraced(due: DueDelivery): Promise<DeliveryOutcome> {
    const attributes = { 'portcullis.mail.kind': due.job.kind, 'portcullis.mail.attempt': due.attempts + 1 };
    return inSpanContinuing(due.job.traceparent, 'mail delivery', attributes, async (span) => {
      const outcome = await this.deliver(due);
      const counted = mailOutcomeOf(outcome);
      span.setAttribute('portcullis.mail.outcome', counted);
      countMail(counted, due.job.kind);
      return outcome;
    });
  }

  private async deliver({ job, attempts, firstAttemptedAt }: DueDelivery): Promise<DeliveryOutcome> {
    const attempt = attempts + 1;
    const context = { jobId: job.jobId, kind: job.kind, attempt };
    if (Date.parse(job.expiresAt) <= Date.now()) {
      this.log.error(context, 'mail job dead-lettered: its link expired before it could be delivered');
      return { status: 'dead', error: 'link expired before delivery' };
    }
    let token: string;
    try {
      token = this.sealer.open(job.sealedToken, job.jobId);
    } catch {
      this.log.error(context, 'mail job dead-lettered: its token does not open under any secret of the ring (AUTH_SECRETS)');
      return { status: 'dead', error: 'sealed token does not open under any secret of the ring' };
    }
    const mail = this.templates.render(job, mailLink(job, token, this.settings), this.settings.productName);
    try {
      const sent = await this.transport.send({
        jobId: job.jobId,
        from: this.settings.from,
        to: job.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        headers: traceHeaders(job),
      });
      this.log.info({ ...context, transport: this.transport.name }, 'mail delivered');
      return { status: 'sent', transport: this.transport.name, messageId: sent.messageId, response: sent.response };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof PermanentMailError) {
        this.log.error({ ...context, err: error }, 'mail job dead-lettered: the relay refused it for good');
        return { status: 'dead', error: message };
      }
      const next = afterTemporaryFailure({ attempt, failedAt: new Date(), firstAttemptedAt, linkExpiresAt: new Date(job.expiresAt) }, this.settings);
      if (!next.retry) {
        this.log.error({ ...context, err: error, firstAttemptedAt }, `mail job dead-lettered: ${next.reason}`);
        return { status: 'dead', error: `${next.reason}: ${message}` };
      }
      const waitingForRelay = !(error instanceof DeferredMailError);
      this.log.warn({ ...context, err: error, nextAttemptAt: next.nextAttemptAt, waitingForRelay }, 'mail delivery failed; will retry');
      return { status: 'retry', error: message, nextAttemptAt: next.nextAttemptAt, waitingForRelay };
    }
  }
}

function traceHeaders(job: MailJob): Record<string, string> {
  return job.traceparent ? { 'X-Portcullis-Traceparent': job.traceparent } : {};
}
