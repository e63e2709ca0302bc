import type { IdentityPorts } from '../identity/ports.ts';

/** The account lifecycle's commands decide on users and sessions, as identity's do. */
export type AccountPorts = IdentityPorts;
