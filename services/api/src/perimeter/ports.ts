import type { CommandsPort, ConfigPort, LogPort, PoolPort, SessionCachePort } from '../ports.ts';

/** The perimeter counts in Redis or Postgres and records refusals on the log. */
export type PerimeterPorts = ConfigPort & CommandsPort & LogPort & PoolPort & SessionCachePort;
