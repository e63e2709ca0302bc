import ipaddr from 'ipaddr.js';
import { DomainError } from '@portcullis/contracts';
import { clientAddress } from '../http/client-address.ts';
import type { AdmissionCheck } from './perimeter.ts';

/**
 * The perimeter's first check: a request to the auth API must come from an address. Behind a trusted proxy,
 * an `X-Forwarded-For` entry that is no address (garbage, a host name) is refused rather than given a bucket
 * of its own, or kept on a session as where the client signed in from.
 */
export const requireClientAddress: AdmissionCheck = (request, _reply, guarded) => {
  if (guarded === null || clientAddress(request) !== null) return;
  request.log.info({ forwardedFor: String(request.headers['x-forwarded-for'] ?? '').slice(0, 200) }, 'refused a request without a client address');
  throw new DomainError('INVALID_CLIENT_ADDRESS');
};

/**
 * The rate-limit identity of a (normalized) client address: an IPv4 address is itself; an IPv6 client is its
 * /64, because one subscriber usually holds a whole /64 and could otherwise rotate through 2^64 addresses,
 * each with a fresh bucket (better-auth's normalizeIP does the same).
 */
export function clientBucket(address: string): string {
  if (!ipaddr.IPv6.isValid(address)) return address;
  const groups = ipaddr.IPv6.parse(address).toNormalizedString().split(':').slice(0, 4);
  return `${groups.map((group) => group.padStart(4, '0')).join(':')}::/64`;
}
