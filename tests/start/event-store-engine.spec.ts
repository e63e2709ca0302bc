import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresLogReaders } from '@portcullis/platform';
import { fatalLinesOf, spawnService, type ServiceProcess } from '../support/processes.ts';
import { serviceEntries } from '../../scripts/build.ts';

/**
 * EVENTSTORE_URL puts the log on KurrentDB; a service with parts that still read the Postgres log itself
 * must refuse it at start (EX_CONFIG, the parts named) rather than serve from an empty `events` table. The
 * refusal comes before anything is connected to, so no server need be there.
 */
describe('a service started with EVENTSTORE_URL', () => {
  const started: ServiceProcess[] = [];

  afterAll(async () => {
    await Promise.all(started.map((service) => service.stop()));
  });

  for (const [name, entry] of [
    ['api', serviceEntries.api.built],
    ['projector', serviceEntries.projector.built],
    ['mailer', serviceEntries.mailer.built],
  ] as const) {
    it(`${name}: refuses to start, naming the setting and what still reads the Postgres log`, async () => {
      const service = spawnService({
        name,
        entry,
        env: {
          NODE_ENV: 'test',
          // Never reached: the refusal comes first.
          DATABASE_URL: 'postgres://postgres@127.0.0.1:9/never',
          EVENTSTORE_URL: 'kurrentdb://127.0.0.1:9?tls=false',
          AUTH_SECRET: randomBytes(32).toString('base64url'),
          HOST: '127.0.0.1',
          PORT: '0',
          LOG_FORMAT: 'json',
          REDIS_URL: '',
        },
      });
      started.push(service);
      const exit = await service.exited;
      const fatal = fatalLinesOf(service.output());
      expect(exit.code).toBe(78);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]).toContain('EVENTSTORE_URL');
      for (const reader of postgresLogReaders[name]) expect(fatal[0]).toContain(reader);
    });
  }
});
