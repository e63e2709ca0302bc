import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { SessionActiveOrganizationChanged, streamModel, streams, type DomainEvent, type StreamModel } from '@portcullis/contracts';
import {
  BackgroundSnapshotter,
  CommandHandler,
  createDatabasePool,
  migrate,
  PostgresEventStore,
  protectPersonalData,
  systemRequest,
  type EventStore,
  type SnapshotReadRequest,
} from '@portcullis/platform';
import { createBenchDatabase } from '../lib/database.ts';
import { appendActiveOrganizationToggles } from '../lib/log-prefill.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';
import { log } from '../lib/progress.ts';
import { formatMs, markdownTable } from '../lib/report.ts';

const SECRET = 'bench-first-fold-secret-0123456789abcdefghij';

interface ActiveOrganization {
  readonly active: string | null;
  readonly changes: number;
}

/**
 * The session's fold of set-active, under a revision per figure: each starts with no snapshot of its kind,
 * whatever the one before left.
 */
function sessionFold(revision: number): StreamModel<ActiveOrganization> {
  return streamModel<ActiveOrganization>('bench-first-fold', revision, () => ({ active: null, changes: 0 }), (state, event: DomainEvent) =>
    event.type === 'session.active_organization_changed.v1' ? { active: event.data.activeOrganizationId, changes: state.changes + 1 } : state,
  );
}

/** What loading before issue 46's chunks did: every event after the snapshot in one read (no limit asked). */
function readingWhole(store: EventStore): EventStore {
  const whole: EventStore = Object.create(store) as EventStore;
  whole.readStreamsFromSnapshots = (requests: readonly SnapshotReadRequest[]) =>
    store.readStreamsFromSnapshots(requests.map(({ streamId, model }) => ({ streamId, model })));
  return whole;
}

interface CommandFigure {
  readonly ms: number;
  readonly eventsRead: number;
  /** The most heap the process held above where it started, sampled as the command ran. */
  readonly heapMb: number;
  /** Why the command failed, if it did (the read of a whole long stream can outlast the statement timeout). */
  readonly failure: string | null;
}

/** One set-active on the stream through the command handler, as the api runs it, timed and its reads counted. */
async function firstCommand(store: EventStore, model: StreamModel<ActiveOrganization>, sessionId: string, organizationId: string): Promise<CommandFigure> {
  let eventsRead = 0;
  const counted: EventStore = Object.create(store) as EventStore;
  counted.readStreamsFromSnapshots = async (requests: readonly SnapshotReadRequest[]) => {
    const answer = await store.readStreamsFromSnapshots(requests);
    for (const read of answer.values()) eventsRead += read.read.events.length;
    return answer;
  };
  const commands = new CommandHandler({ store: counted, clock: () => new Date(), settle: async () => {}, stateCacheSize: 0 });
  const streamId = streams.session(sessionId);
  global.gc?.();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
  const started = performance.now();
  let failure: string | null = null;
  try {
    await commands.handle({ name: 'bench.set-active', request: systemRequest, actorId: null, settle: 'none' }, async (unit) => {
      const { state } = await unit.load(streamId, model);
      const next = state.active === null ? organizationId : null;
      unit.append(streamId, [SessionActiveOrganizationChanged({ sessionId, userId: 'bench-first-fold', activeOrganizationId: next, activeTeamId: null })]);
    });
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  } finally {
    clearInterval(sampler);
  }
  const ms = performance.now() - started;
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  return { ms, eventsRead, heapMb: (peak - baseline) / 1024 / 1024, failure };
}

/**
 * The first command on a session stream of `length` events written straight to the log (as an import or a
 * bulk load would leave it: no snapshot): before issue 46 it read and folded all of it at once; now the
 * load reads it a chunk at a time, and once the background snapshotter has been, the command folds from
 * its snapshot.
 */
export async function firstFoldFigures(teardown: Teardown, length: number): Promise<string[]> {
  const db = await createBenchDatabase(settings.adminUrl);
  teardown.add('drop the first-fold database', () => db.drop());
  await migrate(db.url);
  const pool = await createDatabasePool(db.url, { maximumPoolSize: 2 });
  teardown.add('close the first-fold pool', () => pool.end());
  const inner = new PostgresEventStore({ databaseUrl: db.url, maximumPoolSize: 2 });
  const protectedLog = await protectPersonalData(inner, { databaseUrl: db.url, secrets: SECRET, pool });
  teardown.add('close the first-fold log', async () => {
    await protectedLog.store.close();
    await protectedLog.close();
  });
  const options = { store: protectedLog.store, inner, pool, length };
  const sessionId = randomUUID();
  const organizationId = randomUUID();
  log(`growth: a session stream of ${options.length} events`);
  const writing = performance.now();
  await appendActiveOrganizationToggles(options.inner, { sessionId, userId: 'bench-first-fold', organizationId, activeNow: null, count: options.length });
  const writtenS = (performance.now() - writing) / 1000;

  log('growth: the first command, chunked, no snapshot yet');
  const chunked = await firstCommand(options.store, sessionFold(2), sessionId, organizationId);
  log('growth: the background snapshotter');
  const snapshotting = performance.now();
  const snapshotter = new BackgroundSnapshotter({
    pool: options.pool,
    store: options.store,
    modelsOf: (streamId) => (streamId.startsWith('session-') ? [sessionFold(3)] : []),
    onError: (error) => {
      throw error;
    },
  });
  const snapshotted = await snapshotter.drain();
  const snapshotterS = (performance.now() - snapshotting) / 1000;
  const after = await firstCommand(options.store, sessionFold(3), sessionId, organizationId);
  // Last: its heap is the largest, and the figures before it are not taken beside what it leaves.
  log('growth: the first command as before: the whole stream in one read');
  const before = await firstCommand(readingWhole(options.store), sessionFold(1), sessionId, organizationId);

  const row = (label: string, figure: CommandFigure): string[] => [
    figure.failure ? `${label}: failed (${figure.failure})` : label,
    formatMs(figure.ms),
    figure.failure ? '' : figure.eventsRead.toLocaleString('en'),
    formatMs(figure.heapMb),
  ];
  // The chunked command and the snapshotter must work: only the old whole read may fail (and is shown).
  for (const figure of [chunked, after]) if (figure.failure) throw new Error(`the first command failed: ${figure.failure}`);
  return [
    `The first set-active on a session stream of ${options.length.toLocaleString('en')} events written straight to the log (${formatMs(writtenS)} s to write), no snapshot of its fold yet; one command through the handler, in the bench process:`,
    '',
    markdownTable(
      ['first command', 'ms', 'events read', 'heap peak MB'],
      [
        row('before: the whole stream in one read', before),
        row('now, before the snapshotter: chunks of 10,000, a snapshot each', chunked),
        row(`after the snapshotter (${snapshotted} stream, ${formatMs(snapshotterS)} s)`, after),
      ],
      new Set([1, 2, 3]),
    ),
    '',
  ];
}
