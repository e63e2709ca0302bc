import { z } from 'zod';
import { section, setting } from './settings.ts';

/**
 * A rebuild writes a shadow nobody reads, so its batches may be as large as memory allows: fewer, larger
 * statements and transactions.
 */
const DEFAULT_REBUILD_BATCH_SIZE = 10_000;

/** How projectors follow the log, hand projections over, and rebuild them. */
export const projectorSettings = section(
  'Projector',
  {
    PROJECTOR_BATCH_SIZE: setting(z.coerce.number().int().positive().default(500), 'events per projector batch'),
    PROJECTOR_POLL_INTERVAL_MS: setting(z.coerce.number().int().positive().default(1000), 'how often a follower re-reads the log without a notification'),
    PROJECTOR_LINGER_MS: setting(
      z.coerce.number().int().min(0).max(1000).default(50),
      'at most how long the projector waits for the appends that the one waking it said were coming (its api\'s other commands whose passwords are being checked or hashed), to project them in one batch (group commit); other writes never wait; `0` turns it off',
    ),
    PROJECTOR_SESSION_TABLE_GATHER_MS: setting(
      z.coerce.number().int().min(0).max(250).default(100),
      'with Redis: how long the projector may hold new sessions to write several to the session table at once (get-session finds them in the cache meanwhile, and the session listings hurry them); 0 writes each at once',
    ),
    PROJECTOR_LEASE_MS: setting(
      z.coerce.number().int().min(1000).max(600_000).default(5000),
      'a projector that stops heartbeating (dead, frozen, cut off) loses its projections to a standby after this long',
    ),
    PROJECTOR_REBUILD_BATCH_SIZE: setting(
      z.coerce.number().int().positive().default(DEFAULT_REBUILD_BATCH_SIZE),
      'events per batch when `rebuild-projection` replays the log (of the types the read model is built from); two batches are in memory at once',
    ),
    PROJECTOR_METRICS_PORT: setting(
      z.coerce.number().int().min(0).max(65535).default(9464),
      "the projector's own port for `/metrics`, `/healthz` and `/readyz` (on `HOST`); `0` picks a free one (several projectors on one machine)",
    ),
  },
  (c) => ({
    projector: {
      batchSize: c.PROJECTOR_BATCH_SIZE,
      pollIntervalMs: c.PROJECTOR_POLL_INTERVAL_MS,
      lingerMs: c.PROJECTOR_LINGER_MS,
      sessionTableGatherMs: c.PROJECTOR_SESSION_TABLE_GATHER_MS,
      /** A holder that stops heartbeating loses its projections' locks after this long (failover bound). */
      leaseMs: c.PROJECTOR_LEASE_MS,
      rebuildBatchSize: c.PROJECTOR_REBUILD_BATCH_SIZE,
    },
    projectorMetricsPort: c.PROJECTOR_METRICS_PORT,
  }),
);
