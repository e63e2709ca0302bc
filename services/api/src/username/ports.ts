import type { IdentityPorts } from '../identity/ports.ts';

/** Sign-in by username and its availability check. */
export type UsernamePorts = IdentityPorts;
