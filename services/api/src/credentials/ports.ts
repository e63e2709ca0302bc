import type { IdentityPorts } from '../identity/ports.ts';

/** Sign-up and sign-in register users and open sessions, as identity does. */
export type CredentialsPorts = IdentityPorts;
