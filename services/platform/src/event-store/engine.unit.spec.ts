import { describe, expect, it } from 'vitest';
import { eventStoreRefusal, openEventStore, postgresLogReaders, type LogProcess } from './engine.ts';
import { KurrentEventStore } from './kurrentdb.ts';
import { PostgresEventStore } from './postgres.ts';

const processes = Object.keys(postgresLogReaders) as LogProcess[];
const onPostgres = { databaseUrl: 'postgres://postgres@127.0.0.1:5432/unused', eventStoreUrl: null };
const onKurrent = { ...onPostgres, eventStoreUrl: 'kurrentdb://127.0.0.1:2113?tls=false' };

describe('choosing the event log', () => {
  it('keeps the log in Postgres when EVENTSTORE_URL is not set', async () => {
    for (const process of processes) expect(eventStoreRefusal(onPostgres, process)).toBeNull();
    const store = openEventStore(onPostgres, 'projector', { maximumPoolSize: 1 });
    expect(store).toBeInstanceOf(PostgresEventStore);
    await store.close();
  });

  it('refuses EVENTSTORE_URL in a process that still reads the Postgres log itself, naming the setting and each such part', () => {
    for (const process of processes.filter((p) => postgresLogReaders[p].length > 0)) {
      const refusal = eventStoreRefusal(onKurrent, process);
      expect(refusal, process).toContain('EVENTSTORE_URL');
      for (const reader of postgresLogReaders[process]) expect(refusal).toContain(reader);
      // Refused before anything connects: no store half-built on a log the process would misread.
      expect(() => openEventStore(onKurrent, process)).toThrow(refusal!);
    }
  });

  it('opens KurrentDB for every process: each reads the log only through the port', async () => {
    // The workers, the api (its audit trail too: events through the port, hashes through the log's chain)
    // and the audit CLI, its chain's commands and its trail's (export, replay).
    expect(processes.filter((p) => postgresLogReaders[p].length > 0)).toEqual([]);
    expect(processes).toEqual(expect.arrayContaining(['api', 'projector', 'rebuild', 'mailer', 'audit', 'audit-trail']));
    for (const process of processes) {
      expect(eventStoreRefusal(onKurrent, process), process).toBeNull();
      // Nothing connects until the store is first asked something.
      const store = openEventStore(onKurrent, process);
      expect(store).toBeInstanceOf(KurrentEventStore);
      await store.close();
    }
  });
});
