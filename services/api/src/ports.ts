import type { CommandHandler, Config, DatabasePool, EventStore, Logger, LogChain, PersonalData, Redis, SessionCacheLayout } from '@portcullis/platform';
import type { OperatorSessionCheck } from './http/operator-access.ts';
import type { SessionCookieSettings } from './http/session-cookies.ts';
import type { IdentityExtensions } from './identity/extensions.ts';
import type { ReadModelProgress } from './read-models/read-model-progress.ts';
import type { LocalSessionCache } from './session/local-session-cache.ts';
import type { ActiveSelectionCheck } from './session/session-log.ts';
import type { SocialProvider } from './social/provider.ts';

/*
 * What the api's areas run on, one capability a port. Each area says which it uses (`<area>/ports.ts`), and
 * the composition root (`api-context.ts`) builds the one `ApiContext` that has them all.
 */

export interface ConfigPort {
  readonly config: Config;
}

export interface StorePort {
  /** The log, personal data encrypted on append and opened on read (see `protectPersonalData`). */
  readonly store: EventStore;
}

export interface PersonalDataPort {
  /** The keys personal data is sealed with (the audit trail: who is erased, what an address's stream is stored as). */
  readonly personalData: PersonalData;
}

export interface LogChainPort {
  /** The log's hash chain: in the log's own rows on Postgres, the chain table on KurrentDB (see `openLogChain`). */
  readonly chain: LogChain;
}

export interface PoolPort {
  /** The read models' database. */
  readonly pool: DatabasePool;
}

export interface SessionCachePort {
  /** The Redis session cache, when REDIS_URL is set. */
  readonly cache: {
    readonly redis: Redis;
    readonly layout: SessionCacheLayout;
    /** get-session's answers held in process, coherent through Redis's invalidation pushes. */
    readonly local: LocalSessionCache | null;
  } | null;
}

export interface ProgressPort {
  /** How far each read model has got: read-your-writes, and whether a read model is believed. */
  readonly progress: ReadModelProgress;
}

export interface CommandsPort {
  /** Every write goes through it. */
  readonly commands: CommandHandler;
}

export interface LogPort {
  readonly log: Logger;
}

export interface CookiesPort {
  readonly cookies: SessionCookieSettings;
}

export interface ClockPort {
  readonly clock: () => Date;
}

export interface IdentityExtensionsPort {
  /** What leaf areas add to identity's commands (see IdentityExtensions). */
  readonly identity: IdentityExtensions;
}

export interface OperatorPort {
  /** Whether a session is an operator's (see `operatorAccess`); absent: only server calls operate. */
  readonly operatorSession?: OperatorSessionCheck;
}

export interface ActiveSelectionPort {
  /** See `sessionFromLog`; absent where organizations are not served. */
  readonly activeSelectionCheck?: ActiveSelectionCheck;
}

export interface SocialProvidersPort {
  /** The providers with credentials configured, by id (a generic OIDC provider by its configured name). */
  readonly socialProviders: ReadonlyMap<string, SocialProvider>;
}
