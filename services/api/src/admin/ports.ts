import type { IdentityPorts } from '../identity/ports.ts';
import type { OperatorPort } from '../ports.ts';

/** The admin plugin acts on users and sessions as identity does. */
export type AdminPorts = IdentityPorts & OperatorPort;
