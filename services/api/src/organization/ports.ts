import type { IdentityPorts } from '../identity/ports.ts';

/** Organizations, members, invitations and teams, and the session's active selection; a member is added on the user's stream too. */
export type OrganizationPorts = IdentityPorts;
