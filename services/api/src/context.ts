import type { CommandHandler, Config, DatabasePool, EventStore, Logger, PersonalData, Redis, SessionCacheLayout } from '@portcullis/platform';
import type { OperatorSessionCheck } from './http/operator-access.ts';
import type { SessionCookieSettings } from './http/session-cookies.ts';
import type { IdentityExtensions } from './identity/extensions.ts';
import type { ReadModelProgress } from './read-models/read-model-progress.ts';
import type { LocalSessionCache } from './session/local-session-cache.ts';
import type { ActiveSelectionCheck } from './session/session-log.ts';

/** What route plugins are built with; assembled once in server.ts (or by a test). */
export interface ApiContext {
  readonly config: Config;
  /** The log, personal data encrypted on append and opened on read (see `protectPersonalData`). */
  readonly store: EventStore;
  /** Opens personal data in events read around the store (the audit search reads `events` itself). */
  readonly personalData: PersonalData;
  readonly pool: DatabasePool;
  readonly cache: {
    readonly redis: Redis;
    readonly layout: SessionCacheLayout;
    /** get-session's answers held in process, coherent through Redis's invalidation pushes. */
    readonly local: LocalSessionCache | null;
  } | null;
  /** How far each read model has got: read-your-writes, and whether a read model may be believed. */
  readonly progress: ReadModelProgress;
  /** Every write goes through it. */
  readonly commands: CommandHandler;
  readonly log: Logger;
  readonly cookies: SessionCookieSettings;
  readonly clock: () => Date;
  /** What leaf areas add to identity's commands (see IdentityExtensions). */
  readonly identity: IdentityExtensions;
  /** Whether a session is an operator's (see `operatorAccess`); absent: only server calls operate. */
  readonly operatorSession?: OperatorSessionCheck;
  /** See `sessionFromLog`; absent where organizations are not served. */
  readonly activeSelectionCheck?: ActiveSelectionCheck;
}
