import type { FastifyRequest } from 'fastify';
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ipv4OfMapped } from '@portcullis/contracts';

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * The client's address in one canonical form, or null when it is not an address. The socket's peer always
 * is one; an `X-Forwarded-For` entry a trusted proxy passes on is whatever the client wrote there, and
 * proxy-addr hands it over unparsed. Each way of writing one address must give that address, or a client
 * could mint rate-limit buckets by spelling itself differently: `ip:port` and `[v6]:port` (as some proxies
 * write them) lose the port, a zone index goes, and an IPv4-mapped IPv6 address in any notation
 * (`::ffff:192.0.2.1`, `::ffff:c000:201`, written out in full) is its IPv4 address.
 */
export function normalizeClientAddress(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (isIPv4(raw)) return raw;
  const withPort = IPV4_WITH_PORT.exec(raw);
  if (withPort) return isIPv4(withPort[1]!) ? withPort[1]! : null;
  const inner = BRACKETED_IPV6.exec(raw)?.[1] ?? raw;
  const address = inner.split('%')[0]!;
  if (!ipaddr.IPv6.isValid(address)) return null;
  // RFC 5952's one form: lower case, zeros compressed.
  return ipv4OfMapped(address) ?? ipaddr.IPv6.parse(address).toString();
}

/** The request's client address, normalized (see `normalizeClientAddress`), or null when it is not one. */
export function clientAddress(request: FastifyRequest): string | null {
  return normalizeClientAddress(request.ip);
}
