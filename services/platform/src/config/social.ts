import { createPrivateKey } from 'node:crypto';
import { z } from 'zod';
import { oidcDocumentation, parseOidcProviderNames, readOidcProviders, type OidcProviderSettings } from './social-oidc.ts';
import { flag, list, section, setting, settingFamily, type Environment } from './settings.ts';

export type { OidcProviderSettings } from './social-oidc.ts';

/** The providers better-auth 1.7 builds in and Portcullis offers, by the id clients name them with. */
export const socialProviderIds = [
  'apple',
  'discord',
  'dropbox',
  'facebook',
  'github',
  'gitlab',
  'google',
  'kick',
  'linkedin',
  'microsoft',
  'reddit',
  'roblox',
  'spotify',
  'tiktok',
  'twitch',
  'twitter',
  'vk',
  'zoom',
] as const;
export type SocialProviderId = (typeof socialProviderIds)[number];

/** The providers that verify id tokens (better-auth's id-token sign-in), so whose keys and issuer can move too. */
const idTokenProviderIds = ['apple', 'facebook', 'google', 'microsoft'] as const satisfies readonly SocialProviderId[];
type IdTokenProviderId = (typeof idTokenProviderIds)[number];

/** The providers whose profile is the id token alone: they call no user endpoint to move. */
const idTokenProfileIds = ['apple', 'google', 'twitch'] as const satisfies readonly SocialProviderId[];
type UserEndpointProviderId = Exclude<SocialProviderId, (typeof idTokenProfileIds)[number]>;

/** Microsoft Entra registrations may be public clients, and Apple's secret can be signed here. */
const providersWithoutSecret: readonly SocialProviderId[] = ['apple', 'microsoft'];

type Variable<Id extends string, Part extends string> = `AUTH_${Uppercase<Id>}_${Part}`;
const variable = <Id extends string, Part extends string>(id: Id, part: Part) => `AUTH_${id.toUpperCase()}_${part}` as Variable<Id, Part>;

const clientIdOf = settingFamily('AUTH_<PROVIDER>_CLIENT_ID', "the OAuth client id (TikTok's client key); a provider is offered only with one");
const clientSecretOf = settingFamily(
  'AUTH_<PROVIDER>_CLIENT_SECRET',
  "the OAuth client secret; required with the client id, except for Microsoft (public clients) and Apple (signed from its key below)",
);
const authorizationUrlOf = settingFamily(
  'AUTH_<PROVIDER>_AUTHORIZATION_URL',
  "replaces the provider's authorization endpoint (a self-hosted server, a local fake in tests)",
  "the provider's",
);
const tokenUrlOf = settingFamily('AUTH_<PROVIDER>_TOKEN_URL', "replaces the provider's token endpoint", "the provider's");
const userInfoUrlOf = settingFamily(
  'AUTH_<PROVIDER>_USERINFO_URL',
  "replaces the provider's user endpoint; the calls made beside it follow it (GitHub's `/emails` under it, Facebook's `/debug_token` on its origin, Microsoft's `/photos` under Graph's `me`)",
  "the provider's",
);
const jwksUrlOf = settingFamily('AUTH_<PROVIDER>_JWKS_URL', 'replaces where the keys that sign id tokens are fetched', "the provider's");
const issuerOf = settingFamily(
  'AUTH_<PROVIDER>_ISSUER',
  "the issuer id tokens must name (Microsoft's may hold `{tenantid}`, the token's own tenant)",
  "the provider's",
);

type ProviderShape = { [K in Variable<SocialProviderId, 'CLIENT_ID' | 'CLIENT_SECRET'>]: z.ZodOptional<z.ZodString> } & {
  [K in Variable<SocialProviderId, 'AUTHORIZATION_URL' | 'TOKEN_URL'>]: z.ZodOptional<z.ZodURL>;
} & { [K in Variable<UserEndpointProviderId, 'USERINFO_URL'>]: z.ZodOptional<z.ZodURL> } & {
  [K in Variable<IdTokenProviderId, 'JWKS_URL' | 'ISSUER'>]: z.ZodOptional<z.ZodURL>;
};

const isIdTokenProvider = (id: SocialProviderId): id is IdTokenProviderId => (idTokenProviderIds as readonly string[]).includes(id);
const hasUserEndpoint = (id: SocialProviderId): id is UserEndpointProviderId => !(idTokenProfileIds as readonly string[]).includes(id);

/** Family by family, so the README's rows come in this order. */
function providerShape(): ProviderShape {
  const shape: Record<string, z.ZodType> = {};
  for (const id of socialProviderIds) shape[variable(id, 'CLIENT_ID')] = clientIdOf(id, z.string().optional());
  for (const id of socialProviderIds) shape[variable(id, 'CLIENT_SECRET')] = clientSecretOf(id, z.string().optional());
  for (const id of socialProviderIds) shape[variable(id, 'AUTHORIZATION_URL')] = authorizationUrlOf(id, z.url().optional());
  for (const id of socialProviderIds) shape[variable(id, 'TOKEN_URL')] = tokenUrlOf(id, z.url().optional());
  for (const id of socialProviderIds.filter(hasUserEndpoint)) shape[variable(id, 'USERINFO_URL')] = userInfoUrlOf(id, z.url().optional());
  for (const id of socialProviderIds.filter(isIdTokenProvider)) shape[variable(id, 'JWKS_URL')] = jwksUrlOf(id, z.url().optional());
  for (const id of socialProviderIds.filter(isIdTokenProvider)) shape[variable(id, 'ISSUER')] = issuerOf(id, z.url().optional());
  return shape as ProviderShape;
}

/**
 * Apple's key as a PEM, or with its line breaks written `\n` (how one-line environment files carry it).
 * Checked here, so a bad key stops the start rather than the first Apple sign-in.
 */
const applePrivateKey = z
  .string()
  .transform((value) => value.replaceAll('\\n', '\n').trim())
  .refine(
    (pem) => {
      try {
        return createPrivateKey(pem).asymmetricKeyType === 'ec';
      } catch {
        return false;
      }
    },
    { message: 'must be the EC private key (PKCS#8 PEM, the .p8 file) Apple issued for Sign in with Apple' },
  );

/** Provider ids as they are listed; whether each names a provider is checked against the OIDC names too. */
const parseProviderIds = (value: string) => ({
  values: value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== ''),
  problems: [],
});

const socialShape = {
  ...providerShape(),
  AUTH_GITLAB_ISSUER: setting(z.url().optional(), "a self-hosted GitLab's base URL, under which its endpoints are found", '`https://gitlab.com`'),
  AUTH_MICROSOFT_TENANT_ID: setting(
    z
      .string()
      .regex(/^[A-Za-z0-9.-]+$/, 'must be a tenant id or domain, or common, organizations or consumers')
      .default('common'),
    'whose Microsoft accounts may sign in: `common` (any), `organizations` (work and school), `consumers` (personal), or one tenant\'s id',
  ),
  AUTH_APPLE_TEAM_ID: setting(z.string().optional(), 'the Apple developer team that signs the client secret'),
  AUTH_APPLE_KEY_ID: setting(z.string().optional(), 'the id of the Sign in with Apple key'),
  AUTH_APPLE_PRIVATE_KEY: setting(
    applePrivateKey.optional(),
    'that key (the .p8 file\'s PEM, newlines as `\\n` allowed); with the team and key ids it signs the client secret when `AUTH_APPLE_CLIENT_SECRET` is unset',
  ),
  AUTH_APPLE_APP_BUNDLE_IDENTIFIER: setting(z.string().optional(), "a native app's bundle id, accepted as the audience of Apple id tokens beside the client id"),
  AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS: setting(
    list(parseProviderIds),
    'comma-separated provider ids whose sign-in links to an existing user of the same email even when the provider does not say the email is verified',
  ),
  AUTH_ACCOUNT_LINKING_ALLOW_DIFFERENT_EMAILS: setting(flag(false), 'a signed-in user may link a provider account whose email differs from theirs'),
  AUTH_DISABLE_IMPLICIT_SIGN_UP: setting(
    list(parseProviderIds),
    'comma-separated provider ids that create a user only when the sign-in asks to (`requestSignUp: true`), as better-auth\'s `disableImplicitSignUp`',
  ),
  AUTH_SOCIAL_DISABLE_SIGN_UP: setting(
    list(parseProviderIds),
    'comma-separated provider ids whose sign-in never creates a user (their accounts of existing users still sign in and link), as better-auth\'s per-provider `disableSignUp`',
  ),
  AUTH_OIDC_PROVIDERS: setting(
    list((value) => parseOidcProviderNames(value, socialProviderIds)),
    'comma-separated names of generic OpenID Connect providers (each its provider id), each configured by the `AUTH_OIDC_<NAME>_…` variables below',
  ),
};

type SocialValues = z.infer<z.ZodObject<typeof socialShape>>;

/** What every configured provider has: its client, and where its endpoints are when not where the provider says. */
export interface SocialProviderSettings {
  readonly clientId: string;
  /** Null for Microsoft public clients and for Apple signing its own. */
  readonly clientSecret: string | null;
  readonly authorizationUrl: string | null;
  readonly tokenUrl: string | null;
  /** Null for the providers whose profile is the id token (Apple, Google, Twitch). */
  readonly userInfoUrl: string | null;
  /** Only providers that verify id tokens. */
  readonly jwksUrl: string | null;
  /** The id tokens' issuer; GitLab's base URL for a self-hosted GitLab. */
  readonly issuer: string | null;
}

export interface AppleProviderSettings extends SocialProviderSettings {
  /** With the key id and private key, signs the client secret when none is configured. */
  readonly teamId: string | null;
  readonly keyId: string | null;
  /** PKCS#8 PEM. */
  readonly privateKey: string | null;
  /** A native app's bundle id, a second accepted audience of id tokens. */
  readonly appBundleIdentifier: string | null;
}

export interface MicrosoftProviderSettings extends SocialProviderSettings {
  /** `common`, `organizations`, `consumers` or a tenant id: part of every endpoint. */
  readonly tenantId: string;
}

export type SocialProvidersSettings = { readonly apple?: AppleProviderSettings; readonly microsoft?: MicrosoftProviderSettings } & {
  readonly [Id in Exclude<SocialProviderId, 'apple' | 'microsoft'>]?: SocialProviderSettings;
};

export interface SocialSettings {
  /** Only the providers with a client id; any other is absent ('Provider not found'). */
  readonly providers: SocialProvidersSettings;
  readonly oidc: readonly OidcProviderSettings[];
  /** Provider ids whose sign-in links to an existing user of the same email, verified or not. */
  readonly trustedProviders: readonly string[];
  readonly allowDifferentEmails: boolean;
  /** Provider ids that create a user only for a sign-in that asks to (`requestSignUp`). */
  readonly disableImplicitSignUp: readonly string[];
  /** Provider ids that never create a user. */
  readonly disableSignUp: readonly string[];
}

function baseSettings(c: SocialValues, id: SocialProviderId, clientId: string): SocialProviderSettings {
  return {
    clientId,
    clientSecret: c[variable(id, 'CLIENT_SECRET')] ?? null,
    authorizationUrl: c[variable(id, 'AUTHORIZATION_URL')] ?? null,
    tokenUrl: c[variable(id, 'TOKEN_URL')] ?? null,
    userInfoUrl: hasUserEndpoint(id) ? (c[variable(id, 'USERINFO_URL')] ?? null) : null,
    jwksUrl: isIdTokenProvider(id) ? (c[variable(id, 'JWKS_URL')] ?? null) : null,
    issuer: isIdTokenProvider(id) ? (c[variable(id, 'ISSUER')] ?? null) : id === 'gitlab' ? (c.AUTH_GITLAB_ISSUER ?? null) : null,
  };
}

function providersOf(c: SocialValues): SocialProvidersSettings {
  // Keyed by the provider ids, Apple's and Microsoft's with their own settings.
  const providers: Record<string, SocialProviderSettings> = {};
  for (const id of socialProviderIds) {
    const clientId = c[variable(id, 'CLIENT_ID')];
    if (clientId === undefined) continue;
    const base = baseSettings(c, id, clientId);
    if (id === 'apple') {
      const apple: AppleProviderSettings = {
        ...base,
        teamId: c.AUTH_APPLE_TEAM_ID ?? null,
        keyId: c.AUTH_APPLE_KEY_ID ?? null,
        privateKey: c.AUTH_APPLE_PRIVATE_KEY ?? null,
        appBundleIdentifier: c.AUTH_APPLE_APP_BUNDLE_IDENTIFIER ?? null,
      };
      providers[id] = apple;
    } else if (id === 'microsoft') {
      const microsoft: MicrosoftProviderSettings = { ...base, tenantId: c.AUTH_MICROSOFT_TENANT_ID };
      providers[id] = microsoft;
    } else {
      providers[id] = base;
    }
  }
  return providers;
}

/** Rules across the providers' settings, each reported on the variable to set. */
export function checkSocialSettings(c: SocialValues, ctx: z.RefinementCtx): void {
  for (const id of socialProviderIds) {
    const clientId = c[variable(id, 'CLIENT_ID')];
    const secret = c[variable(id, 'CLIENT_SECRET')];
    if (clientId === undefined && secret !== undefined) {
      ctx.addIssue({ code: 'custom', path: [variable(id, 'CLIENT_ID')], message: `is required with ${variable(id, 'CLIENT_SECRET')}` });
    }
    if (clientId !== undefined && secret === undefined && !providersWithoutSecret.includes(id)) {
      ctx.addIssue({ code: 'custom', path: [variable(id, 'CLIENT_SECRET')], message: `is required with ${variable(id, 'CLIENT_ID')}` });
    }
  }
  const appleKey = [c.AUTH_APPLE_TEAM_ID, c.AUTH_APPLE_KEY_ID, c.AUTH_APPLE_PRIVATE_KEY];
  if (c.AUTH_APPLE_CLIENT_ID !== undefined && c.AUTH_APPLE_CLIENT_SECRET === undefined && appleKey.includes(undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_APPLE_CLIENT_SECRET'],
      message: 'is required with AUTH_APPLE_CLIENT_ID, unless AUTH_APPLE_TEAM_ID, AUTH_APPLE_KEY_ID and AUTH_APPLE_PRIVATE_KEY sign it',
    });
  }
}

function oidcNamesIn(environment: Environment): string[] {
  return parseOidcProviderNames(environment.AUTH_OIDC_PROVIDERS ?? '', socialProviderIds).values;
}

/** A trusted provider that is none (a typo) would silently trust nothing it was meant to: refused at start. */
/** The settings that name providers: a typo in one would silently leave a provider out of a rule. */
const PROVIDER_LISTS = ['AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS', 'AUTH_DISABLE_IMPLICIT_SIGN_UP', 'AUTH_SOCIAL_DISABLE_SIGN_UP'] as const;

function unknownProviders(environment: Environment): string[] {
  const known = new Set<string>([...socialProviderIds, ...oidcNamesIn(environment)]);
  return PROVIDER_LISTS.flatMap((name) => {
    const unknown = parseProviderIds(environment[name] ?? '').values.filter((id) => !known.has(id));
    return unknown.length === 0 ? [] : [`${name}: ${unknown.map((id) => `'${id}'`).join(', ')} names no provider (built in or in AUTH_OIDC_PROVIDERS)`];
  });
}

/** Social sign-in: the providers, generic OpenID Connect providers, and how their users meet existing ones. */
export const socialSettings = section(
  'Social sign-in',
  socialShape,
  (c, _core, environment): { social: SocialSettings } => ({
    social: {
      providers: providersOf(c),
      oidc: readOidcProviders(c.AUTH_OIDC_PROVIDERS, environment).values,
      trustedProviders: Object.freeze(c.AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS),
      allowDifferentEmails: c.AUTH_ACCOUNT_LINKING_ALLOW_DIFFERENT_EMAILS,
      disableImplicitSignUp: Object.freeze(c.AUTH_DISABLE_IMPLICIT_SIGN_UP),
      disableSignUp: Object.freeze(c.AUTH_SOCIAL_DISABLE_SIGN_UP),
    },
  }),
  {
    documentation: oidcDocumentation,
    problems: (environment) => [...readOidcProviders(oidcNamesIn(environment), environment).problems, ...unknownProviders(environment)],
  },
);
