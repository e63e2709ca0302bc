import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { advertisedHost, authorityOf } from './advertised-host.ts';

describe('the host a process advertises to its peers', () => {
  it('is the configured one, whatever it listens on', () => {
    expect(advertisedHost('0.0.0.0', '10.1.2.3')).toBe('10.1.2.3');
    expect(advertisedHost('127.0.0.1', 'api-1')).toBe('api-1');
  });

  it('is the address it listens on when that is one address', () => {
    expect(advertisedHost('127.0.0.1', null)).toBe('127.0.0.1');
    expect(advertisedHost('::1', null)).toBe('::1');
  });

  it('is a routable address of this machine, never loopback when one exists, for a wildcard listener', () => {
    const external = Object.values(networkInterfaces()).flat().filter((a) => a !== undefined && a.family === 'IPv4' && !a.internal).map((a) => a!.address);
    for (const wildcard of ['0.0.0.0', '::']) {
      const host = advertisedHost(wildcard, null);
      if (external.length > 0) expect(external).toContain(host);
      else expect(host).toBe('127.0.0.1');
    }
  });

  it('brackets an IPv6 address in a URL authority', () => {
    expect(authorityOf('::1', 9464)).toBe('[::1]:9464');
    expect(authorityOf('10.0.0.7', 3000)).toBe('10.0.0.7:3000');
  });
});
