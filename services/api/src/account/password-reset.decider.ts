import { PasswordResetLinkIssued, streamModel, type DomainEvent } from '@portcullis/contracts';

/**
 * A user's password-reset links, `password-reset-<userId>`: the latest one issued. Only the latest is
 * usable. Issuing one is decided on this stream's version and revokes the one before (on that token's own
 * stream) in the same append, so two requests racing each other, or a reset racing a new request, cannot
 * leave two links alive.
 */
export interface PasswordResetState {
  readonly latest: { readonly tokenHash: string; readonly expiresAt: string } | null;
}

export const initialPasswordReset = (): PasswordResetState => ({ latest: null });

export function evolvePasswordReset(state: PasswordResetState, event: DomainEvent): PasswordResetState {
  switch (event.type) {
    case 'verification.password_reset_link_issued.v1':
      return { latest: { tokenHash: event.data.tokenHash, expiresAt: event.data.expiresAt } };
    default:
      return state;
  }
}

export interface IssueResetLink {
  readonly userId: string;
  readonly tokenHash: string;
  readonly expiresAt: Date;
}

/** The new link becomes the latest; which token that ends is `state.latest` (revoked by the token decider). */
export function decidePasswordResetLink(command: IssueResetLink, _state: PasswordResetState): DomainEvent[] {
  return [PasswordResetLinkIssued({ userId: command.userId, tokenHash: command.tokenHash, expiresAt: command.expiresAt.toISOString() })];
}

export const passwordResetModel = streamModel('password-reset', 1, initialPasswordReset, evolvePasswordReset);
