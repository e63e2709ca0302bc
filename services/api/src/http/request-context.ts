import type { FastifyRequest } from 'fastify';
import { validTraceparent, type RequestMetadata } from '@portcullis/platform';
import { clientAddress } from './client-address.ts';
import { requestTraceparent } from './request-trace.ts';

interface ClientInfo {
  readonly ipAddress: string;
  readonly userAgent: string;
}

function clientInfo(request: FastifyRequest): ClientInfo {
  return { ipAddress: clientAddress(request) ?? '', userAgent: String(request.headers['user-agent'] ?? '').slice(0, 512) };
}

function headerValue(request: FastifyRequest, name: string): string | null {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : null;
}

/** Requests that presented the server key and had it accepted: their commands' actor is `server`. */
const serverCalls = new WeakSet<FastifyRequest>();

export function markServerCall(request: FastifyRequest): void {
  serverCalls.add(request);
}

/** Requests presenting an impersonation session, with the admin behind it (see `markImpersonated`). */
const impersonators = new WeakMap<FastifyRequest, string>();

/**
 * The request acts through a session an admin opened by impersonation: the metadata of whatever it writes
 * names that admin beside the user, so the audit trail tells who really did it.
 */
export function markImpersonated(request: FastifyRequest, adminId: string): void {
  impersonators.set(request, adminId);
}

/** Where a request comes from, as the plain value commands take (see CommandHandler). */
export function requestMetadataOf(request: FastifyRequest): RequestMetadata {
  const client = clientInfo(request);
  return {
    ...(serverCalls.has(request) ? { serverCall: true } : {}),
    ipAddress: client.ipAddress || null,
    userAgent: client.userAgent || null,
    requestId: request.id,
    correlationId: headerValue(request, 'x-correlation-id') ?? request.id,
    traceparent: requestTraceparent(request) ?? validTraceparent(headerValue(request, 'traceparent')),
    impersonatedBy: impersonators.get(request) ?? null,
  };
}
