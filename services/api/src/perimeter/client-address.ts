import { isIPv4, isIPv6 } from 'node:net';

function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((group) => group.padStart(4, '0').toLowerCase());
}

/**
 * The rate-limit identity of a client address. An IPv4-mapped IPv6 address is its IPv4 address; an IPv6
 * client is its /64, because one subscriber usually holds a whole /64 and could otherwise rotate through
 * 2^64 addresses, each with a fresh bucket (better-auth's normalizeIP does the same).
 */
export function clientBucket(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (isIPv4(address)) return address;
  if (isIPv6(address) && !address.includes('.')) return `${expandIPv6(address.split('%')[0]!).slice(0, 4).join(':')}::/64`;
  return address.toLowerCase() || 'unknown';
}
