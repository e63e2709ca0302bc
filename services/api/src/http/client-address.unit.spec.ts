import { describe, expect, it } from 'vitest';
import { normalizeClientAddress } from './client-address.ts';

describe('client address', () => {
  it('keeps an IPv4 address, and gives IPv6 one canonical form', () => {
    expect(normalizeClientAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeClientAddress('2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(normalizeClientAddress('2001:0db8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(normalizeClientAddress('::1')).toBe('::1');
  });

  it('reads every way a proxy or client may write one address as that address', () => {
    for (const written of ['203.0.113.7:51234', '::ffff:203.0.113.7', '::ffff:cb00:7107', '::FFFF:CB00:7107', '0:0:0:0:0:ffff:cb00:7107', '[::ffff:203.0.113.7]:443']) {
      expect(normalizeClientAddress(written), written).toBe('203.0.113.7');
    }
    for (const written of ['[2001:db8::1]', '[2001:db8::1]:8080', '2001:db8::1%eth0', '[2001:db8::1%25eth0]']) {
      expect(normalizeClientAddress(written), written).toBe('2001:db8::1');
    }
  });

  it('refuses what is no address', () => {
    for (const written of ['', 'unknown', 'garbage', 'example.com', '203.0.113', '203.0.113.256', '203.0.113.7:port', '01.2.3.4', '[203.0.113.7]', '1.2.3.4, 5.6.7.8', ' 203.0.113.7', '2001:db8::g', undefined]) {
      expect(normalizeClientAddress(written), String(written)).toBeNull();
    }
  });
});
