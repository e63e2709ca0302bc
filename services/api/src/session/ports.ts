import type {
  ActiveSelectionPort,
  ClockPort,
  CommandsPort,
  ConfigPort,
  CookiesPort,
  LogPort,
  PoolPort,
  ProgressPort,
  SessionCachePort,
  StorePort,
} from '../ports.ts';

/** What resolving, opening and ending sessions runs on: the log, the read models and caches, the cookies. */
export type SessionPorts = ConfigPort &
  StorePort &
  PoolPort &
  SessionCachePort &
  ProgressPort &
  CommandsPort &
  CookiesPort &
  ClockPort &
  LogPort &
  ActiveSelectionPort;
