import { streamModel } from '@portcullis/contracts';
import {
  DomainError,
  VerificationTokenConsumed,
  VerificationTokenIssued,
  VerificationTokenRevoked,
  type DomainEvent,
  type VerificationPurpose,
} from '@portcullis/contracts';

/** A single-use token's stream, `verification-<tokenHash>`: issued, then consumed or revoked, at most once. */
export type VerificationTokenState =
  | { status: 'none' }
  | { status: 'issued'; purpose: VerificationPurpose; tokenHash: string; userId: string; expiresAt: string }
  | { status: 'consumed'; purpose: VerificationPurpose; userId: string }
  | { status: 'revoked'; purpose: VerificationPurpose; userId: string };

export const initialVerificationToken = (): VerificationTokenState => ({ status: 'none' });

export function evolveVerificationToken(state: VerificationTokenState, event: DomainEvent): VerificationTokenState {
  switch (event.type) {
    case 'verification.token_issued.v1':
      return { status: 'issued', ...event.data };
    case 'verification.token_consumed.v1':
      return { status: 'consumed', purpose: event.data.purpose, userId: event.data.userId };
    case 'verification.token_revoked.v1':
      return { status: 'revoked', purpose: event.data.purpose, userId: event.data.userId };
    default:
      return state;
  }
}

export type VerificationTokenCommand =
  | {
      readonly type: 'issue';
      readonly purpose: VerificationPurpose;
      readonly tokenHash: string;
      readonly userId: string;
      readonly expiresAt: Date;
    }
  | {
      readonly type: 'consume';
      readonly purpose: VerificationPurpose;
      readonly now: Date;
      /** When given, the token must have been issued to this user. */
      readonly userId?: string;
    }
  /** A newer token for the same purpose replaced this one: it ends unused, unless it has ended already. */
  | { readonly type: 'revoke'; readonly reason: 'superseded' };

/** The user a token is good for right now, or null (unknown, used, expired, or for another purpose). */
export function usableBy(state: VerificationTokenState, purpose: VerificationPurpose, now: Date): string | null {
  if (state.status !== 'issued' || state.purpose !== purpose) return null;
  return Date.parse(state.expiresAt) > now.getTime() ? state.userId : null;
}

export function decideVerificationToken(command: VerificationTokenCommand, state: VerificationTokenState): DomainEvent[] {
  switch (command.type) {
    case 'issue':
      // A 190-bit token drawn twice is not a thing that happens; a second issue would be a bug.
      if (state.status !== 'none') throw new DomainError('FAILED_TO_CREATE_VERIFICATION');
      return [
        VerificationTokenIssued({
          purpose: command.purpose,
          tokenHash: command.tokenHash,
          userId: command.userId,
          expiresAt: command.expiresAt.toISOString(),
        }),
      ];
    case 'consume': {
      const userId = usableBy(state, command.purpose, command.now);
      if (userId === null || state.status !== 'issued') throw new DomainError('INVALID_TOKEN');
      if (command.userId !== undefined && command.userId !== userId) throw new DomainError('INVALID_TOKEN');
      return [VerificationTokenConsumed({ purpose: command.purpose, tokenHash: state.tokenHash, userId })];
    }
    case 'revoke':
      // Expired or not: revoking also takes it out of the read model now rather than never.
      if (state.status !== 'issued') return [];
      return [VerificationTokenRevoked({ purpose: state.purpose, tokenHash: state.tokenHash, userId: state.userId, reason: command.reason })];
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}

/** A single-use token's stream `verification-<tokenHash>`. */
export const verificationTokenModel = streamModel('verification-token', 2, initialVerificationToken, evolveVerificationToken);
