import type {
  ActiveSelectionPort,
  ClockPort,
  CommandsPort,
  ConfigPort,
  CookiesPort,
  IdentityExtensionsPort,
  LogChainPort,
  LogPort,
  OperatorPort,
  PersonalDataPort,
  PoolPort,
  ProgressPort,
  SessionCachePort,
  SocialProvidersPort,
  StorePort,
} from './ports.ts';

/**
 * Every port the api's areas run on, assembled once by the composition root (`api-context.ts`, for the
 * server and for specs) and handed to `app.ts`; each area takes only the ports it declares (`<area>/ports.ts`).
 */
export interface ApiContext
  extends ConfigPort,
    StorePort,
    PersonalDataPort,
    PoolPort,
    SessionCachePort,
    ProgressPort,
    CommandsPort,
    LogPort,
    LogChainPort,
    CookiesPort,
    ClockPort,
    IdentityExtensionsPort,
    OperatorPort,
    ActiveSelectionPort,
    SocialProvidersPort {}
