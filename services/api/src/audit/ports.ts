import type { ClockPort, ConfigPort, LogChainPort, OperatorPort, PersonalDataPort, PoolPort, StorePort } from '../ports.ts';

/** The audit trail reads the log, its index, its chain's head and the personal data keys, for operators. */
export type AuditPorts = ConfigPort & StorePort & LogChainPort & PersonalDataPort & PoolPort & ClockPort & OperatorPort;
