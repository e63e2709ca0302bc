import type { SocialProvidersPort } from '../ports.ts';
import type { IdentityPorts } from '../identity/ports.ts';

/** Social sign-in decides on users, their accounts and sessions as identity does, with the providers beside. */
export type SocialPorts = IdentityPorts & SocialProvidersPort;
