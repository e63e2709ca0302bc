import type { SessionPorts } from '../session/ports.ts';

/** A user's own profile changes, in their session. */
export type UserPorts = SessionPorts;
