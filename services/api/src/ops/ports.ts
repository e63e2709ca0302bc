import type { ConfigPort, OperatorPort, PoolPort, ProgressPort, SessionCachePort, StorePort } from '../ports.ts';

/** Probes and operators' endpoints read health, the log's head and the mail tables. */
export type OpsPorts = ConfigPort & PoolPort & StorePort & SessionCachePort & ProgressPort & OperatorPort;
