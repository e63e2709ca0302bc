import { evolveUserAnswer, parseDomainEvent, streams, type User } from '@portcullis/contracts';
import type { EventStore } from '@portcullis/platform';
import type { UserHistory } from './session-cache.projection.ts';

/** A user folded from its own stream, as the session cache folds it, up to a log position. */
export function userHistoryFrom(store: Pick<EventStore, 'readStream'>): UserHistory {
  return {
    async asOf(userId, position) {
      let user: User | null = null;
      for (const recorded of (await store.readStream(streams.user(userId))).events) {
        if (recorded.position > position) break;
        const event = parseDomainEvent(recorded.type, recorded.data);
        if (event) user = evolveUserAnswer(user, event, recorded.metadata.occurredAt);
      }
      return user;
    },
  };
}
