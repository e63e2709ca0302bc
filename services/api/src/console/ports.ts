import type { ClockPort, ConfigPort, LogPort, OperatorPort, PoolPort, ProgressPort, StorePort } from '../ports.ts';

/**
 * The ops console's admin views read the read models (and the audit index, for when things happened), for
 * operators; the id lookup reads the log, for what is gone from them.
 */
export type ConsolePorts = ConfigPort & PoolPort & StorePort & ProgressPort & ClockPort & LogPort & OperatorPort;
