import { randomUUID } from 'node:crypto';
import { MailJobQueued, streams, type InvitationMailDetails, type MailKind } from '@portcullis/contracts';
import { createTokenSealer, type TokenSealer, type UnitOfWork } from '@portcullis/platform';
import type { MailPorts } from './ports.ts';

export interface MailRequest {
  readonly kind: MailKind;
  readonly userId: string;
  readonly to: string;
  readonly name: string;
  /** The raw token; it leaves this module sealed. */
  readonly token: string;
  readonly callbackURL: string | null;
  readonly expiresAt: Date;
  readonly newEmail?: string;
  /** For `invitation` mail (the token being the invitation id): who invites to what. */
  readonly invitation?: InvitationMailDetails;
}

const sealers = new WeakMap<object, TokenSealer>();
function sealerFor(ctx: Pick<MailPorts, 'config'>): TokenSealer {
  let sealer = sealers.get(ctx.config);
  if (!sealer) {
    sealer = createTokenSealer(ctx.config.secrets);
    sealers.set(ctx.config, sealer);
  }
  return sealer;
}

/**
 * A mail job for the mailer, on a stream of its own, in the same append as the fact it announces: the mail
 * goes out exactly when that fact is on the log. Its token travels sealed (AES-256-GCM under AUTH_SECRET).
 */
export function queueMail(unit: UnitOfWork, ctx: Pick<MailPorts, 'config'>, mail: MailRequest): void {
  const jobId = randomUUID();
  const event = MailJobQueued({
    jobId,
    kind: mail.kind,
    userId: mail.userId,
    to: mail.to,
    name: mail.name,
    sealedToken: sealerFor(ctx).seal(mail.token, jobId),
    callbackURL: mail.callbackURL,
    expiresAt: mail.expiresAt.toISOString(),
    newEmail: mail.newEmail ?? null,
    // Only invitation jobs carry the field, so every other job's event stays as it was before it existed.
    ...(mail.invitation ? { invitation: mail.invitation } : {}),
  });
  unit.append(streams.mail(jobId), [event], { expected: 'no_stream' });
}
