import type { MicrosoftProviderSettings } from '@portcullis/platform';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { idTokenClaims, providerFetch, remoteKeys, verifyIdToken } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const authority = 'https://login.microsoftonline.com';
/** The tenant of personal Microsoft accounts. */
const consumerTenantId = '9188040d-6c67-4c5b-b112-36a304b66dad';
/** The endpoints that take users of many tenants, whose tokens each name their own tenant's issuer. */
const multiTenant = ['common', 'organizations', 'consumers'];
const defaultScopes = ['openid', 'profile', 'email', 'User.Read', 'offline_access'];

const microsoftClaims = z.object({
  oid: z.string().trim().min(1),
  email: optionalText,
  // Entra sends it only as a configured optional claim; the verified address lists say so otherwise.
  email_verified: z.boolean().optional(),
  verified_primary_email: z.array(z.string()).optional(),
  verified_secondary_email: z.array(z.string()).optional(),
  name: optionalText,
});

/**
 * The issuer a token must name: the configured template (Microsoft's discovery document writes it with
 * `{tenantid}`) for the token's own tenant; the tenant must be the configured one unless the endpoints
 * take many, and `organizations` and `consumers` take only work or only personal accounts.
 */
function tenantAllowed(tenant: string, issuerTemplate: string, claims: JWTPayload): boolean {
  const tid = claims.tid;
  if (typeof tid !== 'string' || claims.iss !== issuerTemplate.replaceAll('{tenantid}', tid)) return false;
  if (tenant === 'organizations') return tid !== consumerTenantId;
  if (tenant === 'consumers') return tid === consumerTenantId;
  return tenant === 'common' || tid === tenant;
}

/** The user's photo as a data URL; a user without one (404) or a failed call keeps the profile photo-less. */
async function profilePhoto(graphMe: string, accessToken: string): Promise<string | null> {
  try {
    const response = await providerFetch(`${graphMe}/photos/48x48/$value`, { headers: { authorization: `Bearer ${accessToken}` } });
    const type = response.headers.get('content-type') ?? 'image/jpeg';
    return `data:${type};base64,${Buffer.from(await response.arrayBuffer()).toString('base64')}`;
  } catch {
    return null;
  }
}

export function microsoftProvider(settings: MicrosoftProviderSettings): SocialProvider {
  const tenant = settings.tenantId;
  const issuerTemplate = settings.issuer ?? `${authority}/{tenantid}/v2.0`;
  const keys = remoteKeys(settings.jwksUrl ?? `${authority}/${tenant}/discovery/v2.0/keys`);
  const graphMe = settings.userInfoUrl ?? 'https://graph.microsoft.com/v1.0/me';
  return oauth2Provider({
    id: 'microsoft',
    name: 'Microsoft EntraID',
    authorization: {
      endpoint: settings.authorizationUrl ?? `${authority}/${tenant}/oauth2/v2.0/authorize`,
      clientId: settings.clientId,
      defaultScopes,
      pkce: true,
      loginHint: true,
    },
    token: { url: settings.tokenUrl ?? `${authority}/${tenant}/oauth2/v2.0/token`, client: postedClient(settings) },
    // Entra issues the refreshed token for the scopes named in the refresh, so they are named again.
    refresh: { extra: { scope: defaultScopes.join(' ') } },
    // The id token Entra's token endpoint answered says who; `oid` is the user's id across the tenant's apps.
    async userInfo({ tokens }) {
      const decoded = idTokenClaims(tokens.idToken);
      const claims = microsoftClaims.safeParse(decoded);
      if (!claims.success) return null;
      const c = claims.data;
      const listedVerified = c.email !== null && [...(c.verified_primary_email ?? []), ...(c.verified_secondary_email ?? [])].includes(c.email);
      return {
        id: c.oid,
        email: c.email,
        emailVerified: c.email_verified ?? listedVerified,
        name: c.name ?? '',
        image: tokens.accessToken === null ? null : await profilePhoto(graphMe, tokens.accessToken),
        // The id token's claims; Graph gives only the photo.
        raw: rawAnswer(decoded),
      };
    },
    verifyIdToken: ({ token, nonce }) =>
      verifyIdToken(token, nonce, {
        keys,
        issuer: multiTenant.includes(tenant) ? undefined : issuerTemplate.replaceAll('{tenantid}', tenant),
        audience: settings.clientId,
        maxTokenAge: '1h',
        claims: (payload) => tenantAllowed(tenant, issuerTemplate, payload),
      }),
  });
}
