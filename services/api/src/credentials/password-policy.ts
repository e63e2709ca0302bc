import { DomainError, isValidEmail } from '@portcullis/contracts';
import type { Config } from '@portcullis/platform';

/** Emails are compared and stored lower-cased (spec section 3). */
export function normalizeEmail(raw: string): string {
  const email = raw.toLowerCase();
  if (!isValidEmail(email)) throw new DomainError('INVALID_EMAIL');
  return email;
}

export function checkNewPassword(config: Config, password: string): void {
  if (password.length < config.password.minLength) throw new DomainError('PASSWORD_TOO_SHORT');
  if (password.length > config.password.maxLength) throw new DomainError('PASSWORD_TOO_LONG');
}
