import { DomainError, isValidEmail } from '@portcullis/contracts';
import { hashPassword, passwordHashIsCurrent, passwordLength, verifyAgainstDecoy, verifyPassword, type Argon2idCost, type Config } from '@portcullis/platform';

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

/** A presented password, checked against a hash or against the decoy. */
export interface PasswordCheck {
  /**
   * Verified once per hash: a command decided again (a conflict, a stale kept state) on the same hash gets
   * the same answer without another argon2 run; a changed hash is verified anew.
   */
  matches(hash: string): Promise<boolean>;
  /** The same work against a hash no account has, so an unknown account takes as long as a wrong password. */
  againstDecoy(): Promise<void>;
  /**
   * For a hash this password matched: null when it is current (argon2id at today's cost: no work at all),
   * else a new argon2id hash of the password to replace it (a better-auth scrypt hash, an older cost). Made
   * once per hash, like `matches`.
   */
  rehash(hash: string): Promise<string | null>;
}

export function passwordCheck(password: string, cost: Argon2idCost): PasswordCheck {
  let last: { hash: string; matches: Promise<boolean> } | null = null;
  let rehashed: { hash: string; replacement: Promise<string> } | null = null;
  return {
    matches: (hash) => {
      if (last?.hash !== hash) last = { hash, matches: verifyPassword(hash, password) };
      return last.matches;
    },
    againstDecoy: () => verifyAgainstDecoy(password, cost),
    rehash: async (hash) => {
      if (passwordHashIsCurrent(hash, cost)) return null;
      if (rehashed?.hash !== hash) rehashed = { hash, replacement: hashPassword(password, cost) };
      return rehashed.replacement;
    },
  };
}
