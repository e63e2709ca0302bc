import { describe, expect, it } from 'vitest';
import { normalizeClientAddress } from '../http/client-address.ts';
import { clientBucket } from './client-address.ts';

const bucketOf = (written: string): string => clientBucket(normalizeClientAddress(written)!);

describe('rate-limit client identity', () => {
  it('keeps IPv4, unwraps IPv4-mapped IPv6 in any notation, and groups IPv6 by /64', () => {
    expect(bucketOf('203.0.113.7')).toBe('203.0.113.7');
    expect(bucketOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(bucketOf('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(bucketOf('203.0.113.7:443')).toBe('203.0.113.7');
    expect(bucketOf('2001:db8:1:2:aaaa::1')).toBe('2001:0db8:0001:0002::/64');
    expect(bucketOf('2001:DB8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:0db8:0001:0002::/64');
    expect(bucketOf('[2001:db8:1:2::9]:8443')).toBe('2001:0db8:0001:0002::/64');
    expect(bucketOf('::1')).toBe('0000:0000:0000:0000::/64');
  });

  it('gives distinct IPv4-mapped clients distinct buckets, not one /64 of zeros', () => {
    expect(bucketOf('::ffff:c000:201')).not.toBe(bucketOf('::ffff:c000:202'));
  });
});
