import type { FastifyRequest } from 'fastify';
import { CaptchaRefused, DomainError } from '@portcullis/contracts';
import type { PerimeterPorts } from './ports.ts';
import { clientAddress } from '../http/client-address.ts';
import { captchaVerdict, siteVerify, type CaptchaSettings } from './captcha-verify.ts';
import type { AdmissionCheck } from './perimeter.ts';
import type { RefusalLog } from './refusal-log.ts';

/**
 * A glob over auth routes, as better-auth's captcha endpoints: `*` within one segment, `**` across segments,
 * everything else literally. It is matched against the route the router dispatched to (its pattern under
 * the base path, `/reset-password/:token`), so no spelling of an endpoint's path gets past it.
 */
function endpointMatcher(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    if (char === '*' && pattern[i + 1] === '*') {
      source += '.*';
      i += 1;
    } else if (char === '*') source += '[^/]*';
    else source += char.replace(/[\\^$.+?()[\]{}|/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/**
 * Captcha on the configured endpoints (better-auth's captcha plugin): the token comes in the
 * `x-captcha-response` header, as better-auth's client sends it, and is checked with the vendor's siteverify
 * service before anything else of the request is looked at. Missing: 400; refused by the vendor (or a
 * reCAPTCHA v3 score under the threshold): 403; the vendor failing or not answering within the time-out:
 * 500, so an outage fails closed rather than opening the endpoints to bots.
 *
 * The perimeter runs it right after the rate limit, before the body is read: better-auth's order (rate
 * limit, then plugins' onRequest, then the body, the origin check and the handler), so a flood is limited
 * before it can make the api call the vendor, and a bot never gets its body parsed.
 */
export function captcha(ctx: PerimeterPorts, refusals: RefusalLog | null = null): AdmissionCheck | null {
  const settings: CaptchaSettings | null = ctx.config.captcha;
  if (!settings) return null;
  const endpoints = settings.endpoints.map(endpointMatcher);
  // Decided once per route: keyed by the app's route patterns, so no request can grow it.
  const guardedRoutes = new Map<string, boolean>();
  const needsCaptcha = (route: string): boolean => {
    let guarded = guardedRoutes.get(route);
    if (guarded === undefined) {
      guarded = endpoints.some((endpoint) => endpoint.test(route));
      guardedRoutes.set(route, guarded);
    }
    return guarded;
  };

  const verify = async (request: FastifyRequest, route: string): Promise<void> => {
    const token = request.headers['x-captcha-response'];
    const refuse = (reason: 'missing' | 'failed' | 'unavailable'): void => refusals?.record(request, CaptchaRefused({ route, reason }));
    if (typeof token !== 'string' || token === '') {
      refuse('missing');
      throw new DomainError('MISSING_RESPONSE');
    }

    let answer;
    try {
      answer = await siteVerify(settings, token, clientAddress(request) ?? undefined);
    } catch (error) {
      // Never the token or the secret: the vendor's failure only.
      request.log.error({ provider: settings.provider, err: error }, 'captcha verification unavailable; request refused');
      refuse('unavailable');
      throw new DomainError('UNKNOWN_ERROR');
    }
    const verdict = captchaVerdict(settings, answer);
    if (verdict.passed) return;
    request.log.warn({ provider: settings.provider, reason: verdict.reason, route }, 'captcha verification failed');
    refuse('failed');
    throw new DomainError('VERIFICATION_FAILED');
  };

  // Synchronous for every request that is not on a captcha endpoint: no promise for those.
  return (request, _reply, guarded) => {
    if (guarded?.kind !== 'route' || !needsCaptcha(guarded.path)) return;
    return verify(request, guarded.path);
  };
}
