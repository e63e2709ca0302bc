import { adminClient, organizationClient, usernameClient } from 'better-auth/client/plugins';

/**
 * The better-auth client plugins for what Portcullis serves besides email and password: organizations
 * with teams, usernames, and the admin plugin. better-auth's own client needs nothing else to talk to it.
 */
export function portcullisPlugins() {
  const organization = organizationClient({ teams: { enabled: true } });
  const username = usernameClient();
  const admin = adminClient();
  // A tuple, so the client's type has each plugin's methods (an array would merge them away).
  return [organization, username, admin] as [typeof organization, typeof username, typeof admin];
}

export type PortcullisPlugins = ReturnType<typeof portcullisPlugins>;
