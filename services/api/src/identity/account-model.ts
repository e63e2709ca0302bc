import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import {
  DomainError,
  MailJobQueued,
  streams,
  type EventMetadata,
  type InvitationMailDetails,
  type MailKind,
  type User,
} from '@portcullis/contracts';
import {
  createTokenSealer,
  generateId,
  hashPassword,
  signEmailVerificationToken,
  type StreamWrite,
  type TokenSealer,
} from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { evolveEmailReservation, initialEmailReservation, type EmailReservationState } from './email-reservation.decider.ts';
import { eventMetadata } from '../http/request-context.ts';
import { loadStream, streamWrite, type Loaded } from '../write-model.ts';
import {
  decideAccount,
  decideEmailMove,
  evolveAccount,
  initialAccountState,
  type AccountState,
  type ActiveAccount,
} from './account.decider.ts';

export function loadAccount(ctx: ApiContext, userId: string): Promise<Loaded<AccountState>> {
  return loadStream(ctx.store, streams.user(userId), evolveAccount, initialAccountState);
}

export function loadReservation(ctx: ApiContext, email: string): Promise<Loaded<EmailReservationState>> {
  return loadStream(ctx.store, streams.email(email), evolveEmailReservation, initialEmailReservation);
}

export interface AccountByEmail {
  readonly reservation: Loaded<EmailReservationState>;
  readonly account: Loaded<AccountState> & { readonly state: ActiveAccount };
}

/** The active account holding `email` (lower-cased), from the log itself: never behind a projection. */
export async function loadAccountByEmail(ctx: ApiContext, email: string): Promise<AccountByEmail | null> {
  const reservation = await loadReservation(ctx, email);
  if (reservation.state.status !== 'reserved') return null;
  const account = await loadAccount(ctx, reservation.state.userId);
  if (account.state.status !== 'active') return null;
  return { reservation, account: account as AccountByEmail['account'] };
}

const sealers = new WeakMap<object, TokenSealer>();
function sealerFor(ctx: ApiContext): TokenSealer {
  let sealer = sealers.get(ctx.config);
  if (!sealer) {
    sealer = createTokenSealer(ctx.config.secret);
    sealers.set(ctx.config, sealer);
  }
  return sealer;
}

export interface MailRequest {
  readonly kind: MailKind;
  readonly userId: string;
  readonly to: string;
  readonly name: string;
  /** The raw token; it leaves this function sealed. */
  readonly token: string;
  readonly callbackURL: string | null;
  readonly expiresAt: Date;
  readonly newEmail?: string;
  /** For `invitation` mail (the token being the invitation id): who invites to what. */
  readonly invitation?: InvitationMailDetails;
}

/** A mail job for the mailer, as a write of its own stream to append beside the fact it announces. */
export function mailJobWrite(ctx: ApiContext, mail: MailRequest, metadata: EventMetadata): StreamWrite {
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
  return streamWrite(streams.mail(jobId), 'no_stream', [event], metadata);
}

/**
 * Moving an account to another address, in one atomic write: the user's change, the old reservation
 * released, the new one taken (a race for the address fails the append), and, unless the new address counts
 * as verified, a verification mail to it.
 */
export async function emailMoveWrites(
  ctx: ApiContext,
  account: Loaded<AccountState> & { readonly state: ActiveAccount },
  to: string,
  options: { verified: boolean; callbackURL: string | undefined; now: Date; metadata: EventMetadata },
): Promise<StreamWrite[]> {
  const { userId, email: from, name } = account.state;
  const [fromReservation, toReservation] = await Promise.all([loadReservation(ctx, from), loadReservation(ctx, to)]);
  const move = decideEmailMove({ userId, from, to }, fromReservation.state, toReservation.state);
  const writes = [
    streamWrite(
      streams.user(userId),
      account.version,
      decideAccount({ type: 'change-email', newEmail: to, verified: options.verified }, account.state),
      options.metadata,
    ),
    streamWrite(streams.email(from), fromReservation.version, move.released, options.metadata),
    streamWrite(streams.email(to), toReservation.version, move.reserved, options.metadata),
  ];
  if (!options.verified && ctx.config.emailVerification.enabled) {
    writes.push(await verificationMailWrite(ctx, { userId, email: to, name }, options.callbackURL, options.now, options.metadata));
  }
  return writes;
}

/** A verification mail for the account's current address (a JWT as better-auth signs it). */
export async function verificationMailWrite(
  ctx: ApiContext,
  account: { userId: string; email: string; name: string },
  callbackURL: string | undefined,
  now: Date,
  metadata: EventMetadata,
): Promise<StreamWrite> {
  const expiresIn = ctx.config.emailVerification.expiresInSeconds;
  const token = await signEmailVerificationToken({ email: account.email, userId: account.userId }, ctx.config.secret, expiresIn, now);
  return mailJobWrite(
    ctx,
    {
      kind: 'verification',
      userId: account.userId,
      to: account.email,
      name: account.name,
      token,
      callbackURL: callbackURL ?? null,
      expiresAt: new Date(now.getTime() + expiresIn * 1000),
    },
    metadata,
  );
}

/**
 * Sign-in with AUTH_REQUIRE_EMAIL_VERIFICATION: an unverified email is refused with 403, and (verification
 * mail being on) a fresh verification mail is sent, as better-auth's sendOnSignIn. `account` is the one the
 * password was just checked against.
 */
export async function enforceVerifiedEmail(
  ctx: ApiContext,
  request: FastifyRequest,
  account: ActiveAccount,
  callbackURL: string | undefined,
): Promise<void> {
  if (!ctx.config.emailVerification.required || account.emailVerified) return;
  if (ctx.config.emailVerification.enabled) {
    const now = ctx.clock();
    await ctx.store.append([await verificationMailWrite(ctx, account, callbackURL, now, eventMetadata(request, now, account.userId))]);
  }
  throw new DomainError('EMAIL_NOT_VERIFIED');
}

/**
 * Sign-up of an address that is taken, while verification is required: better-auth answers as for a new
 * account (a user with a fresh id, no token), after the same password hashing, so neither the answer nor
 * its timing tells that the address has an account. Nothing is written and no mail is sent.
 */
export async function undisclosedSignUp(
  body: { name: string; password: string; image?: string | undefined },
  email: string,
  now: Date,
  options: { hashed?: boolean } = {},
): Promise<{ token: null; user: User }> {
  if (!options.hashed) await hashPassword(body.password);
  const at = now.toISOString();
  return {
    token: null,
    user: { id: generateId(), email, name: body.name, image: body.image ?? null, emailVerified: false, createdAt: at, updatedAt: at },
  };
}
