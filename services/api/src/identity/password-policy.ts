import { DomainError, isValidEmail } from '@portcullis/contracts';
import { passwordLength, type Config } from '@portcullis/platform';

/** Emails are compared and stored lower-cased (spec section 3). */
export function normalizeEmail(raw: string): string {
  const email = raw.toLowerCase();
  if (!isValidEmail(email)) throw new DomainError('INVALID_EMAIL');
  return email;
}

/**
 * The bounds count code points of the normalized password (see `normalizePassword`), what a user sees as
 * characters: in UTF-16 units an emoji counted twice, so 64 of them were "too long" for a bound of 128.
 */
export function checkNewPassword(config: Config, password: string): void {
  const length = passwordLength(password);
  if (length < config.password.minLength) throw new DomainError('PASSWORD_TOO_SHORT');
  if (length > config.password.maxLength) throw new DomainError('PASSWORD_TOO_LONG');
}

/** A password presented to be checked (not set) longer than any that can be set is refused unhashed. */
export function checkPresentedPassword(config: Config, password: string): void {
  if (passwordLength(password) > config.password.maxLength) throw new DomainError('PASSWORD_TOO_LONG');
}
