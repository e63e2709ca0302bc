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

  it('opens KurrentDB for a process that reads the log only through the port', async () => {
    const onPort = processes.filter((p) => postgresLogReaders[p].length === 0);
    // The workers: the projector (and its rebuilds) and the mailer read the log through the port alone; the
    // audit CLI's chain commands read the chain table and the log through the port.
    expect(onPort).toEqual(expect.arrayContaining(['projector', 'rebuild', 'mailer', 'audit']));
    for (const process of onPort) {
      expect(eventStoreRefusal(onKurrent, process), process).toBeNull();
      // Nothing connects until the store is first asked something.
      const store = openEventStore(onKurrent, process);
      expect(store).toBeInstanceOf(KurrentEventStore);
      await store.close();
    }
  });

  it("keeps the api on Postgres for its audit trail alone: progress, start-up upgrades, the console's views read through the port", () => {
    const refusal = eventStoreRefusal(onKurrent, 'api')!;
    expect(refusal).toContain('audit');
    for (const moved of ['read-model-progress', 'slug-reservation', 'address-streams', 'ops/', 'console/', 'chain']) expect(refusal).not.toContain(moved);
  });

  it("refuses the audit CLI's trail commands alone: its chain's verification and head export go through the chain of the log", () => {
    expect(eventStoreRefusal(onKurrent, 'audit')).toBeNull();
    const refusal = eventStoreRefusal(onKurrent, 'audit-trail')!;
    for (const command of ['audit export', 'audit replay']) expect(refusal).toContain(command);
    expect(refusal).not.toContain('chain');
  });
});
