import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresLogReaders } from '@portcullis/platform';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { fatalLinesOf, spawnService, type ServiceProcess } from '../support/processes.ts';
import { nodeArgumentsFor, serviceEntries } from '../../scripts/build.ts';

/**
 * EVENTSTORE_URL puts the log on KurrentDB; a service with parts that still read the Postgres log itself
 * must refuse it at start (EX_CONFIG, the parts named) rather than serve from an empty `events` table. The
 * refusal comes before anything is connected to, so no server need be there. A service that reads the log
 * only through the port goes on past that check: to its database's schema, which here (an empty database)
 * it refuses in turn, so it stops before it would need a KurrentDB server.
 */
describe('a service started with EVENTSTORE_URL', () => {
  const started: ServiceProcess[] = [];
  let empty: TestDatabase | undefined;

  afterAll(async () => {
    await Promise.all(started.map((service) => service.stop()));
    await empty?.drop();
  });

  for (const [name, entry] of [
    ['api', serviceEntries.api.built],
    ['projector', serviceEntries.projector.built],
    ['mailer', serviceEntries.mailer.built],
  ] as const) {
    const readers = postgresLogReaders[name];
    it(
      readers.length > 0
        ? `${name}: refuses to start, naming the setting and what still reads the Postgres log`
        : `${name}: takes the KurrentDB log, and goes on to check its database`,
      async () => {
        empty ??= await createTestDatabase('engine_start');
        const service = spawnService({
          name,
          entry,
          env: {
            NODE_ENV: 'test',
            // Never reached by a refusing service: its refusal comes first.
            DATABASE_URL: empty.url,
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
        if (readers.length > 0) {
          expect(fatal[0]).toContain('EVENTSTORE_URL');
          for (const reader of readers) expect(fatal[0]).toContain(reader);
        } else {
          expect(fatal[0]).not.toContain('EVENTSTORE_URL');
          expect(fatal[0]).toContain('no schema yet');
        }
      },
    );
  }

  // The chain's commands read the log's chain (the chain table on KurrentDB), the trail's run the api's audit
  // views, which read the log through the port: each goes on.
  for (const [command, readers] of [
    ['verify', postgresLogReaders.audit],
    ['head', postgresLogReaders.audit],
    ['export', postgresLogReaders['audit-trail']],
    ['replay', postgresLogReaders['audit-trail']],
  ] as const) {
    it(`audit ${command}: ${readers.length > 0 ? 'refuses EVENTSTORE_URL, naming what still reads the Postgres log' : 'takes the KurrentDB log, and goes on to check its database'}`, async () => {
      empty ??= await createTestDatabase('engine_start');
      const entry = serviceEntries.audit.built;
      const env = { PATH: process.env.PATH, NODE_ENV: 'test', DATABASE_URL: empty.url, EVENTSTORE_URL: 'kurrentdb://127.0.0.1:9?tls=false', AUTH_SECRET: randomBytes(32).toString('base64url'), HOST: '127.0.0.1', PORT: '0', REDIS_URL: '' };
      const exit = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(process.execPath, [...nodeArgumentsFor(entry), entry, command], { env }, (error, _stdout, stderr) => {
          resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stderr });
        });
      });
      expect(exit.code).toBe(78);
      if (readers.length > 0) {
        expect(exit.stderr).toContain('EVENTSTORE_URL');
        for (const reader of readers) expect(exit.stderr).toContain(reader);
      } else {
        expect(exit.stderr).not.toContain('EVENTSTORE_URL');
        expect(exit.stderr).toContain('no schema yet');
      }
    });
  }
});
