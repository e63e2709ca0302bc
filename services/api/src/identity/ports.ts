import type { IdentityExtensionsPort } from '../ports.ts';
import type { SessionPorts } from '../session/ports.ts';

/** What users and their accounts are decided with: the session core's ports, and what other areas add to a deletion. */
export type IdentityPorts = SessionPorts & IdentityExtensionsPort;
