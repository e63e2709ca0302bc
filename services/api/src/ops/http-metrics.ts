import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@portcullis/contracts';
import { instruments } from '@portcullis/platform/telemetry/telemetry';

/** Seconds: get-session answers in well under a millisecond, a sign-in in tens of them (argon2). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const HTTP_DURATION_METRIC = 'http.server.request.duration';
export const SIGN_IN_METRIC = 'portcullis.sign_ins';
export const REFUSAL_METRIC = 'portcullis.refusals';

const httpMetrics = instruments((meter) => ({
  duration: meter.createHistogram(HTTP_DURATION_METRIC, {
    unit: 's',
    description: 'HTTP requests by route template, method and status class: their count and how long they took',
    advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
  }),
  signIns: meter.createCounter(SIGN_IN_METRIC, { description: 'Sign-ins by method (email, username, social) and outcome (success, failure, locked)' }),
  refusals: meter.createCounter(REFUSAL_METRIC, { description: 'Requests refused at the perimeter: the rate limit (429) and captcha' }),
}));

type SignInMethod = 'email' | 'username' | 'social';

/** Codes that refuse a request before it is a sign-in attempt at all: counted as refusals, not sign-ins. */
const PERIMETER_REFUSALS: Readonly<Record<string, 'rate_limit' | 'captcha'>> = {
  TOO_MANY_REQUESTS: 'rate_limit',
  MISSING_RESPONSE: 'captcha',
  VERIFICATION_FAILED: 'captcha',
};

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/**
 * The api's request figures, from two root hooks: every answer's route, method, status class and time
 * (the route's template, never the path, so ids and tokens make no series), and what the answers of the
 * sign-in routes say about the attempt (sign-ups are counted where they are decided: identity/sign-up-count.ts). Refusals are read from the error the answer was made
 * from (the error handler's DomainError), so no route needs to count anything itself.
 */
export function installHttpMetrics(app: FastifyInstance, basePath: string): void {
  const signInRoutes = new Map<string, SignInMethod>([
    [`${basePath}/sign-in/email`, 'email'],
    [`${basePath}/sign-in/username`, 'username'],
    [`${basePath}/sign-in/social`, 'social'],
    [`${basePath}/callback/:id`, 'social'],
  ]);
  const errorCodes = new WeakMap<FastifyRequest, string>();

  app.addHook('onError', (request, _reply, error, done) => {
    if (error instanceof DomainError) errorCodes.set(request, error.code);
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const made = httpMetrics();
    made.duration.record(reply.elapsedTime / 1000, { 'http.route': route, 'http.request.method': request.method, status_class: statusClass(status) });
    const code = status >= 400 ? errorCodes.get(request) : undefined;
    const refusal = code ? PERIMETER_REFUSALS[code] : undefined;
    if (refusal) made.refusals.add(1, { reason: refusal, 'http.route': route });
    else {
      const method = signInRoutes.get(route);
      if (method) countSignIn(request, reply, route, method, code);
    }
    done();
  });

  function countSignIn(request: FastifyRequest, reply: FastifyReply, route: string, method: SignInMethod, code: string | undefined): void {
    const status = reply.statusCode;
    if (route.endsWith('/sign-in/social')) {
      // Only a sign-in with an id token ends here; the others are redirects to the provider, ended by the callback.
      const body = request.body as { idToken?: unknown } | undefined;
      if (!body?.idToken) return;
    }
    let outcome: 'success' | 'failure' | 'locked';
    if (code === 'TOO_MANY_FAILED_SIGN_INS') outcome = 'locked';
    else if (status >= 400) outcome = 'failure';
    else if (route.endsWith('/callback/:id')) {
      // The callback answers a browser with a redirect either way: to the callback URL, or with `?error=`.
      const location = reply.getHeader('location');
      outcome = typeof location === 'string' && /[?&]error=/.test(location) ? 'failure' : 'success';
    } else outcome = 'success';
    httpMetrics().signIns.add(1, { method, outcome });
  }
}
