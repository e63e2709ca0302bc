import { adminClient, organizationClient, usernameClient, type AdminClientOptions, type UsernameClientOptions } from 'better-auth/client/plugins';

// Each instantiated with the options it is called with: a generic factory's bare ReturnType loses its methods.
type OrganizationClientPlugin = ReturnType<typeof organizationClient<{ teams: { enabled: true } }>>;
type UsernameClientPlugin = ReturnType<typeof usernameClient<UsernameClientOptions>>;
type AdminClientPlugin = ReturnType<typeof adminClient<AdminClientOptions>>;

/**
 * The plugins, as a tuple so the client's type has each plugin's methods (an array would merge them away),
 * and named by better-auth's own types so the published declarations refer to them rather than spell them out.
 */
export type PortcullisPlugins = [OrganizationClientPlugin, UsernameClientPlugin, AdminClientPlugin];

/**
 * The better-auth client plugins for what Portcullis serves besides email and password: organizations
 * with teams, usernames, and the admin plugin. better-auth's own client needs nothing else to talk to it.
 */
export function portcullisPlugins(): PortcullisPlugins {
  return [organizationClient({ teams: { enabled: true } }), usernameClient(), adminClient()];
}
