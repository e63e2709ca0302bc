import type { ClockPort, ConfigPort, OperatorPort, PersonalDataPort, PoolPort, StorePort } from '../ports.ts';

/** The audit trail reads the log, its index and the personal data keys, for operators. */
export type AuditPorts = ConfigPort & StorePort & PersonalDataPort & PoolPort & ClockPort & OperatorPort;
