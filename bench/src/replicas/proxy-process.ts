import { startRoundRobinProxy } from '../../../tests/support/round-robin-proxy.ts';

/**
 * The round-robin proxy as a process of its own (`proxy-process.ts <port> <upstream>…`), so that what it
 * costs is not taken from the load generator's thread: a load balancer runs beside the apis, not in the client.
 */
const [port, ...upstreams] = process.argv.slice(2);
const proxy = await startRoundRobinProxy(upstreams, Number(port));
console.log(`proxy listening at ${proxy.url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void proxy.close().finally(() => process.exit(0));
  });
}
