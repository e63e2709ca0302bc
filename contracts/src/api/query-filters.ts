import { z } from 'zod';
import { ipv4OfMapped } from '../ip-address.ts';

// Filters several operator endpoints share (the audit search, the ops console's lists), so that an address,
// a range or an instant is taken the same way wherever it is typed.

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** 4, 6, or 0 for no address; without node:net, since contracts run in browsers too. */
function ipFamily(value: string): 0 | 4 | 6 {
  if (IPV4.test(value)) return 4;
  if (!value.includes(':') || !/^[0-9a-fA-F:.]+$/.test(value)) return 0;
  try {
    new URL(`http://[${value}]/`);
    return 6;
  } catch {
    return 0;
  }
}

/**
 * An address (`203.0.113.7`) or a CIDR range (`203.0.113.0/24`, `2001:db8::/32`). An IPv4-mapped IPv6 one
 * (`::ffff:203.0.113.7`, `::ffff:203.0.113.0/120`) is taken as the IPv4 address or range it is: the log holds
 * every client address in that form (see `ipv4OfMapped`).
 */
export const ipOrCidrSchema = z
  .string()
  .max(64)
  .refine((value) => {
    const [address = '', bits, extra] = value.split('/');
    const family = ipFamily(address);
    if (family === 0 || extra !== undefined) return false;
    if (bits === undefined) return true;
    const n = Number(bits);
    return /^\d+$/.test(bits) && n <= (family === 4 ? 32 : 128);
  }, 'must be an IP address or a CIDR range')
  .transform((value) => {
    const [address = '', bits] = value.split('/');
    const ipv4 = ipFamily(address) === 6 ? ipv4OfMapped(address) : null;
    if (ipv4 === null) return value;
    if (bits === undefined) return ipv4;
    return Number(bits) >= 96 ? `${ipv4}/${Number(bits) - 96}` : value;
  });

/** An ISO instant with its offset, or a date alone, taken as that day's midnight UTC. */
export const instantSchema = z.union([
  z.iso.datetime({ offset: true }),
  z.iso.date().transform((day) => `${day}T00:00:00.000Z`),
]);

/**
 * Several ids in one query parameter: comma-separated (`user=a,b`), repeated (`user=a&user=b`), or both;
 * blanks dropped, duplicates kept once. At most `max`.
 */
export function idListSchema(max: number) {
  return z
    .union([z.string().max(8192), z.array(z.string().max(8192)).max(max)])
    .transform((value) => [...new Set((Array.isArray(value) ? value : [value]).flatMap((part) => part.split(',')).map((id) => id.trim()).filter((id) => id !== ''))])
    .pipe(z.array(z.string().max(255)).max(max));
}

/** A yes/no query flag (`true`/`false`), or a boolean where the query is built as an object. */
export const queryFlagSchema = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);
