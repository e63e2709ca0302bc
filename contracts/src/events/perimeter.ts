import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/**
 * Stream `perimeter-<client bucket>` (an IPv4 address, or an IPv6 /64): a sign-in or sign-up refused by the
 * rate limit. Only the first refusal of each window is recorded, so a flood cannot grow the log faster
 * than the limit's windows pass. The address itself rides in the metadata, as for every event.
 */
export const SignInRateLimited = defineEvent(
  'perimeter.sign_in_rate_limited.v1',
  z.object({
    route: z.string(),
    max: z.number().int().positive(),
    windowSeconds: z.number().int().positive(),
  }),
);

/**
 * Stream `perimeter-<client bucket>`: a request to a captcha-guarded route refused for its captcha (never
 * the captcha token). `missing`: no token sent; `failed`: the vendor refused it or scored it too low;
 * `unavailable`: the vendor could not be asked, and the request was refused to fail closed.
 */
export const CaptchaRefused = defineEvent(
  'perimeter.captcha_refused.v1',
  z.object({
    route: z.string(),
    reason: z.enum(['missing', 'failed', 'unavailable']),
  }),
);
