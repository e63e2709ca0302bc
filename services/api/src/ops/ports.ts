import type { ConfigPort, OperatorPort, PoolPort, ProgressPort, SessionCachePort } from '../ports.ts';

/** Probes and operators' endpoints read health and the mail tables. */
export type OpsPorts = ConfigPort & PoolPort & SessionCachePort & ProgressPort & OperatorPort;
