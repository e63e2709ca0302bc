import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '@portcullis/contracts';
import type { ConfigPort, OperatorPort } from '../ports.ts';
import { serverCall } from './server-call.ts';
import { isTrustedOrigin } from './trusted-origins.ts';
import { headerText as header, SAFE_METHODS } from './request-headers.ts';

/**
 * The ops writes (a rebuild, a mail retry, a bulk ban) stand outside the auth API's perimeter, so they hold
 * its origin rule themselves: a browser sends cookies, and on a developer's loopback api no credential at
 * all, whoever made the page. A write that names an origin must name a trusted one; one admitted by its
 * cookies must name one. A caller without cookies or Origin (curl, a script) carries no ambient authority.
 */
function refuseForeignWrite(ctx: ConfigPort, request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const claimed = header(request, 'origin') || header(request, 'referer');
  if (claimed === '' || claimed === 'null') {
    if (header(request, 'cookie') !== '') throw new DomainError('MISSING_OR_NULL_ORIGIN');
    return;
  }
  if (!isTrustedOrigin(claimed, ctx.config.trustedOrigins)) throw new DomainError('INVALID_ORIGIN');
}

/** Hosts that only this machine can reach the api on. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

/** What a proxy adds to a request it relays: one relayed to a loopback api may come from anywhere. */
const RELAY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const;

function relayed(request: FastifyRequest): boolean {
  return RELAY_HEADERS.some((name) => request.headers[name] !== undefined);
}

/**
 * Whether the request named this machine in its Host header. A page of another site can rebind its own
 * name to 127.0.0.1 (DNS rebinding) and then read a loopback api as same-origin: its requests still carry
 * that name, never a loopback one, so only those naming loopback (or a `.localhost` name, which browsers
 * resolve to loopback themselves) reach the ops endpoints without a credential.
 */
function namesLoopback(request: FastifyRequest): boolean {
  const host = header(request, 'host').toLowerCase();
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
  return LOOPBACK_HOSTS.has(name) || name.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(name);
}

/**
 * Whether the caller's session is an operator's: `none` without a session, `refused` for a session whose
 * user may not operate. Registered by the composition root (the admin plugin knows who is an admin).
 */
export type OperatorSessionCheck = (request: FastifyRequest, reply: FastifyReply) => Promise<'operator' | 'refused' | 'none'>;

export type OperatorCheck = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The ops endpoints (mail, audit trail, projections, metrics) answer only operators: server calls with
 * x-api-key, except while the api listens on loopback alone, where whoever can reach it is on this machine.
 * Where it listens decides, not NODE_ENV: a deployment that leaves NODE_ENV unset (development) on a public
 * address is as closed as one that says production. A proxy on the same machine would make a loopback api
 * reachable from anywhere, so with proxies configured (AUTH_TRUSTED_PROXIES), or for a request a proxy
 * relayed (its forwarding headers), or one naming another host than this machine (DNS rebinding), only
 * operators pass. With `sessions`, an admin's session too (the audit
 * trail, read from a browser). Returns the check a route runs first.
 */
export function operatorAccess(
  ctx: ConfigPort & OperatorPort,
  /** `refusal`: what a signed-in non-operator is answered (the audit trail's own code unless said). */
  options: { sessions?: boolean; refusal?: ErrorCode } = {},
): OperatorCheck {
  const refusal = options.refusal ?? 'YOU_ARE_NOT_ALLOWED_TO_READ_THE_AUDIT_TRAIL';
  const openToLocalCallers = LOOPBACK_HOSTS.has(ctx.config.host) && ctx.config.trustedProxies.length === 0;
  const sessionCheck = options.sessions ? ctx.operatorSession : undefined;
  return async (request, reply) => {
    const call = serverCall(ctx, request);
    if (call === 'accepted') return;
    if (call === 'absent') refuseForeignWrite(ctx, request);
    if (call === 'absent' && openToLocalCallers && !relayed(request) && namesLoopback(request)) return;
    if (call === 'absent' && sessionCheck) {
      const verdict = await sessionCheck(request, reply);
      if (verdict === 'operator') return;
      if (verdict === 'refused') throw new DomainError(refusal);
    }
    throw new DomainError('UNAUTHORIZED');
  };
}
