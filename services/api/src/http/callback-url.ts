import { DomainError, type ErrorCode } from '@portcullis/contracts';
import { isTrustedRedirect } from './trusted-origins.ts';

/**
 * Spec section 5: redirect and callback URLs must be relative paths or on a trusted origin, else the
 * request is refused as forbidden; without this an answer's `url` or `Location` is an open redirect.
 *
 * The perimeter (perimeter/origin-check.ts) already checks callbackURL, redirectTo, errorCallbackURL and
 * newUserCallbackURL in every body and query; this is for a handler that redirects to a URL from
 * somewhere else (a stored flow state, say). Pass `ctx.config.trustedOrigins`.
 */
export function checkCallbackURL(
  url: string | undefined,
  trustedOrigins: readonly string[],
  code: ErrorCode = 'INVALID_CALLBACK_URL',
): void {
  if (url && !isTrustedRedirect(url, trustedOrigins)) throw new DomainError(code);
}
