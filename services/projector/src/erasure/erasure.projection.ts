import { erasureProjectionName } from '@portcullis/contracts';
import type { Eraser, PostgresProjection } from '@portcullis/platform';

/**
 * Completes erasures (issue 25): the api erases a deleted user's keys and copies right after appending
 * `user.deleted.v1`, and this runs the same idempotent `Eraser` on that event again, with the checkpoint
 * moving only after it, so an api that died between its append and its erasure leaves nothing readable
 * for longer than the projector takes to reach the event. It owns no tables: a rebuild replays erasures.
 */
export function erasureProjection(eraser: Eraser): PostgresProjection {
  return {
    name: erasureProjectionName,
    tables: [],
    handles: new Set(['user.deleted.v1']),
    async apply(_tx, { event }) {
      await eraser.erase(event);
    },
  };
}
