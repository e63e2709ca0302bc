import type { ApiContext } from '../context.ts';

/**
 * Origins a callbackURL may point to: the base URL's and TRUSTED_ORIGINS. The perimeter checks the request's
 * redirect parameters before any handler runs; the handlers check again where they redirect.
 */
export function trustedOrigins(ctx: ApiContext): readonly string[] {
  return ctx.config.trustedOrigins;
}
