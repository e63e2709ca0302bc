import { EventLogMailBus } from '@portcullis/platform';
import { createEventLogDatabase } from '../support/event-log.ts';
import { mailBusContract } from './mail-bus.suite.ts';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

// The default transport: jobs are events in the log, groups follow it with checkpoints of their own.
mailBusContract('event log (default)', async () => {
  const db = await createEventLogDatabase('mail_bus');
  const bus = new EventLogMailBus({ store: db.store, pool: db.pool, databaseUrl: db.url, control: db.control, log: quiet, pollIntervalMs: 200, standbyIntervalMs: 100 });
  let groups = 0;
  return {
    bus,
    group: (label) => `${label}-${(groups += 1)}`,
    cleanup: async () => {
      await bus.close();
      await db.close();
    },
  };
});
