import type { MailJob } from '@portcullis/contracts';

/** A verification mail's job to Ada, for the template specs to vary. */
export const mailJob = (overrides: Partial<MailJob> = {}): MailJob => ({
  jobId: '00000000-0000-4000-8000-000000000001',
  kind: 'verification',
  userId: 'u1',
  to: 'ada@example.com',
  name: 'Ada',
  sealedToken: 'v1.x',
  callbackURL: null,
  expiresAt: '2026-01-01T01:00:00.000Z',
  newEmail: null,
  requestedAt: '2026-01-01T00:00:00.000Z',
  traceparent: null,
  ...overrides,
});
