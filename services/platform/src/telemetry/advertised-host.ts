import { networkInterfaces } from 'node:os';

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The host other processes reach this one on, for the process registry (where the api's overview scrapes
 * every process' figures). A process listening on one address is reached there. A wildcard listener is
 * reached on the configured `ADVERTISED_HOST`, else on this machine's first non-loopback IPv4 address: in a
 * container or a pod that is the address its peers route to, where loopback would name the peer itself.
 */
export function advertisedHost(listeningHost: string, configured: string | null): string {
  if (configured) return configured;
  if (!WILDCARDS.has(listeningHost)) return listeningHost;
  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal);
  return external?.address ?? '127.0.0.1';
}

/** `host:port` as a URL's authority (an IPv6 address in brackets). */
export function authorityOf(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}
