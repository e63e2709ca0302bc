const MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * The IPv4 address an IPv4-mapped IPv6 address stands for (`::ffff:192.0.2.1`, `::ffff:c000:201`, or written
 * out in full), or null for any other address. Without node:net, as contracts run in browsers too: the WHATWG
 * URL serializer gives an IPv6 address its one canonical form, in which a mapped one is `::ffff:` and two
 * hex groups.
 */
export function ipv4OfMapped(ipv6: string): string | null {
  let canonical: string;
  try {
    canonical = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const mapped = MAPPED.exec(canonical);
  if (!mapped) return null;
  const high = Number.parseInt(mapped[1]!, 16);
  const low = Number.parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}
