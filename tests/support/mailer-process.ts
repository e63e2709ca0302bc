import { randomUUID } from 'node:crypto';
import type { MailJob } from '@portcullis/contracts';
import { createTokenSealer } from '@portcullis/platform';
import { TEST_AUTH_SECRET } from './event-log.ts';
import { spawnService, type ServiceProcess } from './processes.ts';
import { serviceEntries } from '../../scripts/build.ts';

/** The environment a mailer process needs, for specs that run it without the api and the projector. */
export function mailerEnv(databaseUrl: string, smtpUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    // The one an event-log spec database encrypts personal data with, so the mailer opens recipients.
    AUTH_SECRET: TEST_AUTH_SECRET,
    BASE_URL: 'http://127.0.0.1:3999',
    SMTP_URL: smtpUrl,
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    KAFKA_BROKERS: '',
    MAILER_POLL_INTERVAL_MS: '100',
    // Two mailers on one machine each need a port of their own.
    MAILER_METRICS_PORT: '0',
    ...extra,
  };
}

let started = 0;
export function startMailer(env: Record<string, string>): ServiceProcess {
  started += 1;
  return spawnService({ name: `mailer-${started}`, entry: serviceEntries.mailer.built, env });
}

/** A job as the api would queue it: its token sealed with the environment's AUTH_SECRET, bound to its id. */
export function sealedJob(env: Record<string, string>, to: string, overrides: Partial<MailJob> = {}): MailJob {
  const jobId = overrides.jobId ?? randomUUID();
  const now = Date.now();
  return {
    jobId,
    kind: 'password-reset',
    userId: `user-${to}`,
    to,
    name: 'Test',
    sealedToken: createTokenSealer(env.AUTH_SECRET!).seal(`token-for-${jobId}`, jobId),
    callbackURL: '/reset',
    expiresAt: new Date(now + 3600_000).toISOString(),
    newEmail: null,
    requestedAt: new Date(now).toISOString(),
    traceparent: null,
    ...overrides,
  };
}
