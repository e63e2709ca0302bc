import type { EventStore } from '../event-store/event-store.ts';
import { secondsWaitingAfter } from '../projection/waiting.ts';
import { instruments } from './telemetry.ts';

export interface ObservedProjection {
  readonly name: string;
  /** The checkpoint while this process holds the projection; null while another does (it reports it). */
  readonly checkpointPosition: number | null;
}

/**
 * How many events of a projection's lag are counted at most where counting reads them (a KurrentDB log): a
 * projection further behind reports this many, and its lag in seconds tells how far.
 */
export const COUNTED_LAG_EVENTS = 10_000;

/**
 * Each projection this process holds: its checkpoint, how many events of the log it trails, and how long
 * the oldest of them has waited (seconds), read from the log's head on each collection. A standby reports
 * nothing for a projection it does not hold, so a sum over processes counts each projection once. The log
 * is read through the port (the stored log: nothing is decrypted), once for the head and once for each
 * checkpoint the projections held are at.
 */
export function observeProjections(store: Pick<EventStore, 'headPosition' | 'readAll' | 'countEvents'>, runners: readonly ObservedProjection[]): void {
  instruments((meter) => {
    const checkpoint = meter.createObservableGauge('portcullis.projection.checkpoint', { description: 'The log position a projection has applied up to' });
    const lagEvents = meter.createObservableGauge('portcullis.projection.lag.events', { description: 'Events of the log a projection has not applied yet' });
    const lagSeconds = meter.createObservableGauge('portcullis.projection.lag.seconds', {
      unit: 's',
      description: 'How long the oldest event a projection has not applied has been in the log',
    });
    // One read of the head per collection serves the three gauges.
    meter.addBatchObservableCallback(async (observer) => {
      const held = runners.flatMap((runner) => (runner.checkpointPosition === null ? [] : [{ name: runner.name, position: runner.checkpointPosition }]));
      if (held.length === 0) return;
      const head = await store.headPosition();
      // Projections mostly stand at one checkpoint (the head): each position is read once.
      const lags = new Map<number, Promise<{ events: number; seconds: number }>>();
      const lagAt = async (position: number): Promise<{ events: number; seconds: number }> => {
        if (position >= head) return { events: 0, seconds: 0 };
        const [events, seconds] = await Promise.all([store.countEvents({ after: position, until: head, atMost: COUNTED_LAG_EVENTS }), secondsWaitingAfter(store, position, head)]);
        return { events, seconds };
      };
      for (const { position } of held) if (!lags.has(position)) lags.set(position, lagAt(position));
      for (const { name, position } of held) {
        const lag = await lags.get(position)!;
        const attributes = { projection: name };
        observer.observe(checkpoint, position, attributes);
        observer.observe(lagEvents, lag.events, attributes);
        observer.observe(lagSeconds, lag.seconds, attributes);
      }
    }, [checkpoint, lagEvents, lagSeconds]);
  })();
}
