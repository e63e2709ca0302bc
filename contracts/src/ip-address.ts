import ipaddr from 'ipaddr.js';

/**
 * The IPv4 address an IPv4-mapped IPv6 address stands for (`::ffff:192.0.2.1`, `::ffff:c000:201`, or written
 * out in full), or null for any other address (ipaddr.js, which runs in browsers too).
 */
export function ipv4OfMapped(ipv6: string): string | null {
  if (!ipaddr.IPv6.isValid(ipv6)) return null;
  const address = ipaddr.IPv6.parse(ipv6);
  return address.isIPv4MappedAddress() ? address.toIPv4Address().toString() : null;
}
