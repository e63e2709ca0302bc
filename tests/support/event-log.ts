import type { DomainEvent, EventMetadata } from '@portcullis/contracts';
import {
  createDatabasePool,
  NotificationListener,
  PostgresEventStore,
  ProjectionControl,
  protectPersonalData,
  projectedEvents,
  replayInto,
  type DatabasePool,
  type EventStore,
  type ExpectedVersion,
  type ProjectedEvent,
  type ProjectionTarget,
  type ProtectedLog,
  type StreamWrite,
} from '@portcullis/platform';
import { createTestDatabase } from './postgres.ts';

/** A fresh, migrated database with the Postgres event store on it: the log a projection spec is given. */
export interface EventLogDatabase {
  readonly url: string;
  readonly pool: DatabasePool;
  /** The log as the services see it: personal data encrypted on append, opened on read. */
  readonly store: ProtectedLog['store'];
  readonly personalData: ProtectedLog['personalData'];
  readonly eraser: ProtectedLog['eraser'];
  /** Rebuild requests for the runners a spec starts, heard on the same connection as appends, as in production. */
  readonly control: ProjectionControl;
  close(): Promise<void>;
}

/** The AUTH_SECRET of a spec that names none: the api of an in-process spec must be given the same. */
export const TEST_AUTH_SECRET = 'event-log-spec-secret-0123456789abcdefghij';

export interface EventLogOptions {
  readonly secret?: string;
  /** The log's engine, when not this database's Postgres (KurrentDB): keys, read models and the rest stay here. */
  readonly engine?: (databaseUrl: string, notifications: NotificationListener) => EventStore;
}

export async function createEventLogDatabase(prefix: string, options: EventLogOptions = {}): Promise<EventLogDatabase> {
  const db = await createTestDatabase(prefix, { migrated: true });
  try {
    const pool = await createDatabasePool(db.url, { maximumPoolSize: 10 });
    // The store listens, so followers in the test wake on appends as they do in production.
    const notifications = new NotificationListener(db.url);
    const engine = options.engine?.(db.url, notifications) ?? new PostgresEventStore({ databaseUrl: db.url, notifications });
    const protectedLog = await protectPersonalData(engine, {
      databaseUrl: db.url,
      secrets: options.secret ?? TEST_AUTH_SECRET,
      pool,
    });
    const store = protectedLog.store;
    const control = new ProjectionControl(notifications);
    await notifications.start();
    return {
      url: db.url,
      pool,
      store,
      personalData: protectedLog.personalData,
      eraser: protectedLog.eraser,
      control,
      close: async () => {
        await notifications.close();
        await store.close();
        await protectedLog.close();
        await pool.end();
        await db.drop();
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
}

export function metadataAt(occurredAt: Date | string, extra: Partial<EventMetadata> = {}): EventMetadata {
  return { occurredAt: typeof occurredAt === 'string' ? occurredAt : occurredAt.toISOString(), ...extra };
}

/** A write of domain events (built with the contracts' constructors) sharing one metadata, as the api appends them. */
export function domainWrite(
  streamId: string,
  expectedVersion: ExpectedVersion,
  events: readonly DomainEvent[],
  metadata: EventMetadata,
): StreamWrite {
  return { streamId, expectedVersion, events: events.map((e) => ({ type: e.type, data: e.data, metadata })) };
}

/**
 * Applies to `target` every event of the log after its checkpoint, batch by batch, exactly as a runner
 * holding the projection would (parse, skip unknown types, move the checkpoint to the batch's last
 * position). For specs that exercise a target on its own, with no runner and so no lock to take.
 */
export async function catchUp(
  store: Pick<PostgresEventStore, 'readAll' | 'headPosition' | 'eventIdAt'>,
  target: ProjectionTarget,
  batchSize = 100,
): Promise<number> {
  return replayInto(target, await target.readCheckpoint(), { store, batchSize });
}

export function toProjected(recorded: Awaited<ReturnType<PostgresEventStore['readAll']>>): ProjectedEvent[] {
  return projectedEvents(recorded, undefined);
}
