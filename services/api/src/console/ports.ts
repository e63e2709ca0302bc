import type { ClockPort, ConfigPort, LogPort, OperatorPort, PoolPort, ProgressPort } from '../ports.ts';

/** The ops console's admin views read the read models (and the audit index, for when things happened), for operators. */
export type ConsolePorts = ConfigPort & PoolPort & ProgressPort & ClockPort & LogPort & OperatorPort;
