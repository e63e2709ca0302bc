import { randomUUID } from 'node:crypto';
import { KurrentEventStore } from '@portcullis/platform';
import { inject } from 'vitest';
import { describeWithEngine } from '../support/engine-suites.ts';
import { createEventLogDatabase } from '../support/event-log.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { eventStoreContract } from './event-store.suite.ts';

/**
 * The KurrentDB adapter against a server of 25.1 or later: EVENTSTORE_URL's (for one on this machine:
 * `kurrentdb://127.0.0.1:2113?tls=false`), or, where Docker is, one the global setup started in a container.
 * Each test's log is a namespace of its own on that server, so the contract's global facts (an empty log,
 * its head) hold without a server per test.
 */
const url = inject('eventStoreUrl') ?? undefined;

function kurrentStore(snapshotsDatabaseUrl: string): KurrentEventStore {
  return new KurrentEventStore({ connectionString: url!, snapshotsDatabaseUrl, namespace: `test-${randomUUID()}`, listen: true });
}

describeWithEngine('EventStore contract: kurrentdb', url !== undefined, {
  reason: inject('eventStoreAbsence'),
  toRun: 'set EVENTSTORE_URL (a KurrentDB 25.1+ server) or run where Docker is to run it',
}, () => {
  // KurrentDB's positions are byte offsets of the log: increasing, never 1, 2, 3.
  eventStoreContract(
    'kurrentdb',
    async () => {
      // Snapshots are kept in Postgres beside the read models, whatever the log's engine.
      const db = await createTestDatabase('event_store_kurrentdb', { migrated: true });
      const store = kurrentStore(db.url);
      return {
        store,
        cleanup: async () => {
          await store.close();
          await db.drop();
        },
      };
    },
    { gapFreePositions: false },
  );

  // As the services use it: personal data sealed above the port, its keys in Postgres, the log on KurrentDB.
  eventStoreContract(
    'kurrentdb, personal data protected',
    async () => {
      const db = await createEventLogDatabase('event_store_kurrentdb', { engine: (databaseUrl) => kurrentStore(databaseUrl) });
      return { store: db.store, cleanup: () => db.close() };
    },
    { gapFreePositions: false },
  );
});
