import type { EventStore } from './event-store.ts';
import { KurrentEventStore } from './kurrentdb.ts';
import { PostgresEventStore, type PostgresEventStoreOptions } from './postgres.ts';

/**
 * The processes that open the event log, each at its composition root. The `audit` CLI is two: its chain,
 * rebuild and import commands (`audit`) and its commands that run the api's audit trail (`audit-trail`).
 */
export type LogProcess = 'api' | 'projector' | 'mailer' | 'rebuild' | 'audit' | 'audit-trail';

/**
 * What of each process still reads the log in Postgres by SQL (the `events` table, `event_log_head`, the hash
 * chain's columns) rather than through the port. With the log on KurrentDB those tables stay empty, so each of
 * these would answer wrong without an error: a process with any of them refuses EVENTSTORE_URL at start. An
 * entry goes when its reader moves onto the port; a process whose list is empty runs on KurrentDB.
 */
export const postgresLogReaders: Readonly<Record<LogProcess, readonly string[]>> = {
  // The audit trail reads events through the port (`eventsAt`, stream reads), their hashes and links through
  // the log's chain, and what it searches and counts from the audit index.
  api: [],
  projector: [],
  mailer: [],
  rebuild: [],
  // verify and head go through the log's chain (`openLogChain`): the chain table on KurrentDB.
  audit: [],
  // export and replay run the api's audit trail.
  'audit-trail': [],
};

export interface EventLogSettings {
  readonly databaseUrl: string;
  readonly eventStoreUrl: string | null;
}

/** Why `process` may not run on the configured log, or null when it may. */
export function eventStoreRefusal(settings: EventLogSettings, process: LogProcess): string | null {
  if (settings.eventStoreUrl === null) return null;
  const readers = postgresLogReaders[process];
  if (readers.length === 0) return null;
  return (
    `EVENTSTORE_URL is set, but the ${process} cannot run on a KurrentDB log yet: these parts read the log in Postgres ` +
    `directly and would answer from an empty table: ${readers.join('; ')}. Unset EVENTSTORE_URL to keep the log in DATABASE_URL.`
  );
}

/** The exit code of a process refusing its configured log: EX_CONFIG, as for any configuration it refuses. */
export const EVENT_STORE_REFUSED_EXIT_CODE = 78;

/** Ends the process with the refusal, reported first, when it may not run on the configured log. */
export function exitUnlessEventStoreServes(settings: EventLogSettings, process: LogProcess, report: (message: string) => void): void {
  const refusal = eventStoreRefusal(settings, process);
  if (refusal === null) return;
  report(refusal);
  globalThis.process.exit(EVENT_STORE_REFUSED_EXIT_CODE);
}

export interface OpenEventStoreOptions extends Omit<PostgresEventStoreOptions, 'databaseUrl'> {
  /** For KurrentDB: whether this process follows the log (hears other processes' appends). */
  readonly follows?: boolean;
}

/**
 * The log a process runs on: KurrentDB when EVENTSTORE_URL is set (once `eventStoreRefusal` lets the process),
 * else the Postgres log in DATABASE_URL.
 */
export function openEventStore(settings: EventLogSettings, process: LogProcess, options: OpenEventStoreOptions = {}): EventStore {
  const refusal = eventStoreRefusal(settings, process);
  if (refusal !== null) throw new Error(refusal);
  if (settings.eventStoreUrl !== null) {
    return new KurrentEventStore({ connectionString: settings.eventStoreUrl, snapshotsDatabaseUrl: settings.databaseUrl, listen: options.follows ?? false, ...(options.log ? { log: options.log } : {}) });
  }
  const { follows: _follows, ...postgres } = options;
  return new PostgresEventStore({ ...postgres, databaseUrl: settings.databaseUrl });
}
