import type { Config, DatabasePool, EventStore, Logger, Redis, SessionCacheKeys } from '@portcullis/platform';
import type { SessionCookieSettings } from './http/session-cookies.ts';
import type { RememberedSignIns } from './credentials/password-sign-in.ts';
import type { ProjectionWaiter } from './projection-waiter.ts';
import type { LocalSessionCache } from './session/local-session-cache.ts';

/** What route plugins are built with; assembled once in server.ts (or by a test). */
export interface ApiContext {
  readonly config: Config;
  readonly store: EventStore;
  readonly pool: DatabasePool;
  readonly cache: {
    readonly redis: Redis;
    readonly keys: SessionCacheKeys;
    /** get-session's answers held in process, coherent through Redis's invalidation pushes. */
    readonly local: LocalSessionCache | null;
  } | null;
  readonly waiter: ProjectionWaiter;
  readonly rememberedSignIns: RememberedSignIns;
  readonly log: Logger;
  readonly cookies: SessionCookieSettings;
  readonly clock: () => Date;
}
