import type { ErrorCode } from '../errors/index.ts';

export interface UsernameBounds {
  readonly minLength: number;
  readonly maxLength: number;
}

/** better-auth's default username validator: letters, digits, underscore and dot. */
const USERNAME_ALPHABET = /^[a-zA-Z0-9_.]+$/;

/**
 * What is wrong with a username as typed, or null: length first, then alphabet, as better-auth's username
 * plugin checks them (its default validation order, before lower-casing).
 */
export function usernameProblem(username: string, bounds: UsernameBounds): ErrorCode | null {
  if (username.length < bounds.minLength) return 'USERNAME_TOO_SHORT';
  if (username.length > bounds.maxLength) return 'USERNAME_TOO_LONG';
  if (!USERNAME_ALPHABET.test(username)) return 'INVALID_USERNAME';
  return null;
}

/** Usernames are stored and compared lower-cased (spec section 3); the typed form survives as displayUsername. */
export function normalizeUsername(username: string): string {
  return username.toLowerCase();
}
