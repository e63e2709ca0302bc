import { describe, expect, it } from 'vitest';
import { idListSchema, ipOrCidrSchema, queryFlagSchema } from './query-filters.ts';

describe('query filters', () => {
  it('takes several ids comma-separated, repeated, or both, once each and without blanks', () => {
    const ids = idListSchema(3);
    expect(ids.parse('a,b')).toEqual(['a', 'b']);
    expect(ids.parse(['a', 'b,c'])).toEqual(['a', 'b', 'c']);
    expect(ids.parse(' a , ,a,b ')).toEqual(['a', 'b']);
    expect(ids.safeParse('a,b,c,d').success).toBe(false);
  });

  it('takes an address or a CIDR range, an IPv4-mapped one as the IPv4 it is', () => {
    expect(ipOrCidrSchema.parse('203.0.113.0/24')).toBe('203.0.113.0/24');
    expect(ipOrCidrSchema.parse('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(ipOrCidrSchema.parse('::ffff:192.0.2.0/120')).toBe('192.0.2.0/24');
    expect(ipOrCidrSchema.parse('2001:db8::/32')).toBe('2001:db8::/32');
    for (const bad of ['203.0.113.0/33', '2001:db8::/129', 'example.com', '1.2.3.4/8/8']) expect(ipOrCidrSchema.safeParse(bad).success, bad).toBe(false);
  });

  it('takes a flag as true or false, and nothing else', () => {
    expect(queryFlagSchema.parse('true')).toBe(true);
    expect(queryFlagSchema.parse('false')).toBe(false);
    expect(queryFlagSchema.safeParse('yes').success).toBe(false);
  });
});
