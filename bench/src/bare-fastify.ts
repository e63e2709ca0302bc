import Fastify from 'fastify';

// The ceiling: the same framework, node version and loopback path as the api, with no work per request.
const port = Number(process.env.PORT ?? 0);
const app = Fastify({ logger: false });
app.get('/', async () => ({ ok: true }));
await app.listen({ host: '127.0.0.1', port });

const stop = (): void => {
  void app.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
