import { z } from 'zod';
import { section, setting } from './settings.ts';

/**
 * Each program's pools as they were sized before they were settings: the api serves many requests at once;
 * the projector writes one batch at a time; the mailer holds a connection per delivery in flight (its job's
 * row, for as long as it talks to the SMTP server), so its pool follows `MAILER_CONCURRENCY`; the CLIs
 * (`rebuild-projection`, `audit`) do one thing at a time.
 */
const defaultSizes = {
  api: { readModels: 20, eventStore: 10 },
  projector: { readModels: 6, eventStore: 2 },
  mailer: { readModels: (mailerConcurrency: number) => mailerConcurrency + 4, eventStore: 4 },
  'rebuild-projection': { readModels: 4, eventStore: 2 },
  audit: { readModels: 2, eventStore: 2 },
} as const;

/** The programs that open pools, each with the sizes it needs when none is configured. */
export type PoolOwner = keyof typeof defaultSizes;

const DEFAULT_DATA_KEYS_POOL_MAX = 4;

const poolSize = z.coerce.number().int().min(1).max(1000);

/** A pool's default as the configuration table states it: every program's. */
function shownDefaults(of: 'readModels' | 'eventStore'): string {
  return Object.entries(defaultSizes)
    .map(([owner, sizes]) => `${owner} ${typeof sizes[of] === 'number' ? sizes[of] : '`MAILER_CONCURRENCY` + 4'}`)
    .join(', ');
}

/** How many Postgres connections each pool of a process may open (docs/operations.md counts them all). */
export const databasePoolSettings = section(
  'Database connections',
  {
    DATABASE_POOL_MAX: setting(
      poolSize.optional(),
      'connections of the pool each process reads and writes its read models through (slonik); every connection a process opens is counted in docs/operations.md',
      shownDefaults('readModels'),
    ),
    EVENT_STORE_POOL_MAX: setting(
      poolSize.optional(),
      "connections of the event store's own pool (appends and reads of the log, its statements prepared on each)",
      shownDefaults('eventStore'),
    ),
    DATA_KEYS_POOL_MAX: setting(
      poolSize.default(DEFAULT_DATA_KEYS_POOL_MAX),
      'connections of the pool each process reads and creates personal-data keys through',
    ),
  },
  (c) => ({
    databasePools: {
      readModels: c.DATABASE_POOL_MAX ?? null,
      eventStore: c.EVENT_STORE_POOL_MAX ?? null,
      dataKeys: c.DATA_KEYS_POOL_MAX,
    },
  }),
);

export interface PoolSizes {
  readonly readModels: number;
  readonly eventStore: number;
  readonly dataKeys: number;
}

/** The pool sizes `owner` opens: the configured ones, else its own defaults. */
export function poolSizesOf(
  config: { readonly databasePools: { readonly readModels: number | null; readonly eventStore: number | null; readonly dataKeys: number }; readonly mailer: { readonly concurrency: number } },
  owner: PoolOwner,
): PoolSizes {
  const defaults = defaultSizes[owner];
  const readModels = typeof defaults.readModels === 'number' ? defaults.readModels : defaults.readModels(config.mailer.concurrency);
  return {
    readModels: config.databasePools.readModels ?? readModels,
    eventStore: config.databasePools.eventStore ?? defaults.eventStore,
    dataKeys: config.databasePools.dataKeys,
  };
}
