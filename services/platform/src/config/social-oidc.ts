import type { ParsedList } from '../perimeter-settings.ts';
import type { Environment } from './settings.ts';

/**
 * Generic OpenID Connect providers: `AUTH_OIDC_PROVIDERS` names them, and each name's settings are variables
 * whose names hold it (`AUTH_OIDC_<NAME>_CLIENT_ID`), so no fixed schema can; they are read and checked here.
 */

export interface OidcProviderSettings {
  /** The provider id clients name (`/sign-in/social` `provider`, `/callback/<id>`). */
  readonly id: string;
  /** The provider's `/.well-known/openid-configuration`. */
  readonly discoveryUrl: string;
  readonly clientId: string;
  /** Null: a public client, which PKCE alone protects. */
  readonly clientSecret: string | null;
  readonly scopes: readonly string[];
}

const namePattern = /^[a-z][a-z0-9-]*$/;
const defaultScopes = ['openid', 'email', 'profile'];
const wellKnownPath = '/.well-known/openid-configuration';

function names(value: string): string[] {
  return value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** AUTH_OIDC_PROVIDERS: names that can be provider ids and variable names, none shadowing a built-in provider. */
export function parseOidcProviderNames(value: string, builtInIds: readonly string[]): ParsedList<string> {
  const listed = names(value);
  const values: string[] = [];
  const problems: string[] = [];
  for (const name of listed) {
    if (!namePattern.test(name)) problems.push(`'${name}' must be lowercase letters, digits and dashes, starting with a letter`);
    else if (builtInIds.includes(name)) problems.push(`'${name}' is a built-in provider's id`);
    else if (values.includes(name)) problems.push(`'${name}' is listed twice`);
    else values.push(name);
  }
  return { values, problems };
}

/** `AUTH_OIDC_<NAME>_…` for a name: uppercase, dashes as underscores. */
export function oidcVariable(name: string, part: string): string {
  return `AUTH_OIDC_${name.toUpperCase().replaceAll('-', '_')}_${part}`;
}

/** The discovery document's URL: the one given, or the well-known path under an issuer given instead. */
function discoveryUrlOf(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.pathname.includes('/.well-known/')) return url.href;
  return `${url.href.replace(/\/+$/, '')}${wellKnownPath}`;
}

/** Each named provider's settings, and what is missing or wrong (each message naming its variable). */
export function readOidcProviders(providerNames: readonly string[], environment: Environment): ParsedList<OidcProviderSettings> {
  const values: OidcProviderSettings[] = [];
  const problems: string[] = [];
  for (const id of providerNames) {
    const discovery = environment[oidcVariable(id, 'DISCOVERY_URL')];
    const clientId = environment[oidcVariable(id, 'CLIENT_ID')];
    const discoveryUrl = discovery === undefined ? null : discoveryUrlOf(discovery);
    if (discovery === undefined) problems.push(`${oidcVariable(id, 'DISCOVERY_URL')}: is required for '${id}' in AUTH_OIDC_PROVIDERS`);
    else if (discoveryUrl === null) problems.push(`${oidcVariable(id, 'DISCOVERY_URL')}: must be an http(s) URL`);
    if (clientId === undefined) problems.push(`${oidcVariable(id, 'CLIENT_ID')}: is required for '${id}' in AUTH_OIDC_PROVIDERS`);
    if (discoveryUrl === null || clientId === undefined) continue;
    const scopes = environment[oidcVariable(id, 'SCOPES')]?.split(/[\s,]+/).filter((scope) => scope !== '');
    values.push({
      id,
      discoveryUrl,
      clientId,
      clientSecret: environment[oidcVariable(id, 'CLIENT_SECRET')] ?? null,
      scopes: scopes && scopes.length > 0 ? scopes : defaultScopes,
    });
  }
  return { values, problems };
}

/** The README's rows for the variables each name brings. */
export const oidcDocumentation = [
  {
    pattern: 'AUTH_OIDC_<NAME>_DISCOVERY_URL',
    shownDefault: 'none',
    description: 'required for each name: its `/.well-known/openid-configuration` URL (or its issuer URL, to which that path is added); read on first use',
  },
  { pattern: 'AUTH_OIDC_<NAME>_CLIENT_ID', shownDefault: 'none', description: 'required for each name: the client id registered with it' },
  { pattern: 'AUTH_OIDC_<NAME>_CLIENT_SECRET', shownDefault: 'none', description: 'its client secret; without one it is a public client (PKCE)' },
  { pattern: 'AUTH_OIDC_<NAME>_SCOPES', shownDefault: '`openid email profile`', description: 'the scopes it is asked for, space- or comma-separated' },
] as const;
