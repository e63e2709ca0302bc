import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configurationTable, loadConfig } from './config/index.ts';
import { configProblems as problems, minimalEnv as base } from './config.test-support.ts';

const applePem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('configuration of social sign-in', () => {
  it('offers no provider and keeps better-auth\'s linking defaults when nothing is set', () => {
    expect(loadConfig(base).social).toEqual({ providers: {}, oidc: [], trustedProviders: [], allowDifferentEmails: false, disableImplicitSignUp: [], disableSignUp: [] });
  });

  it('builds a provider from its client and endpoint overrides', () => {
    const config = loadConfig({
      ...base,
      AUTH_GITHUB_CLIENT_ID: 'gh',
      AUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
      AUTH_GITHUB_TOKEN_URL: 'http://127.0.0.1:9999/token',
      AUTH_GOOGLE_CLIENT_ID: 'g',
      AUTH_GOOGLE_CLIENT_SECRET: 'g-secret',
      AUTH_GOOGLE_JWKS_URL: 'http://127.0.0.1:9999/jwks',
      AUTH_GITLAB_CLIENT_ID: 'gl',
      AUTH_GITLAB_CLIENT_SECRET: 'gl-secret',
      AUTH_GITLAB_ISSUER: 'https://git.example.com',
    });
    expect(config.social.providers.github).toEqual({
      clientId: 'gh',
      clientSecret: 'gh-secret',
      authorizationUrl: null,
      tokenUrl: 'http://127.0.0.1:9999/token',
      userInfoUrl: null,
      jwksUrl: null,
      issuer: null,
    });
    expect(config.social.providers.google).toMatchObject({ jwksUrl: 'http://127.0.0.1:9999/jwks', issuer: null });
    expect(config.social.providers.gitlab).toMatchObject({ issuer: 'https://git.example.com' });
    expect(Object.keys(config.social.providers).sort()).toEqual(['github', 'gitlab', 'google']);
  });

  it("takes Microsoft's tenant and public clients, and Apple's signing key", () => {
    const config = loadConfig({
      ...base,
      AUTH_MICROSOFT_CLIENT_ID: 'ms',
      AUTH_APPLE_CLIENT_ID: 'com.example.web',
      AUTH_APPLE_TEAM_ID: 'TEAM123456',
      AUTH_APPLE_KEY_ID: 'KEY1234567',
      // How one-line environment files carry it.
      AUTH_APPLE_PRIVATE_KEY: applePem.replaceAll('\n', '\\n'),
      AUTH_APPLE_APP_BUNDLE_IDENTIFIER: 'com.example.app',
    });
    expect(config.social.providers.microsoft).toMatchObject({ clientId: 'ms', clientSecret: null, tenantId: 'common' });
    expect(config.social.providers.apple).toMatchObject({
      clientSecret: null,
      teamId: 'TEAM123456',
      keyId: 'KEY1234567',
      privateKey: applePem.trim(),
      appBundleIdentifier: 'com.example.app',
    });
  });

  it('reads each generic OIDC provider from the variables its name makes', () => {
    const config = loadConfig({
      ...base,
      AUTH_OIDC_PROVIDERS: 'corp, partner-idp',
      AUTH_OIDC_CORP_DISCOVERY_URL: 'https://id.corp.example/realms/main',
      AUTH_OIDC_CORP_CLIENT_ID: 'corp',
      AUTH_OIDC_CORP_CLIENT_SECRET: 'corp-secret',
      AUTH_OIDC_PARTNER_IDP_DISCOVERY_URL: 'https://partner.example/.well-known/openid-configuration',
      AUTH_OIDC_PARTNER_IDP_CLIENT_ID: 'partner',
      AUTH_OIDC_PARTNER_IDP_SCOPES: 'openid email groups',
      AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS: 'corp,google',
      AUTH_ACCOUNT_LINKING_ALLOW_DIFFERENT_EMAILS: 'true',
      AUTH_DISABLE_SIGN_UP: '1',
      AUTH_DISABLE_IMPLICIT_SIGN_UP: 'partner-idp',
      AUTH_SOCIAL_DISABLE_SIGN_UP: 'corp, github',
    });
    expect(config.social.oidc).toEqual([
      { id: 'corp', discoveryUrl: 'https://id.corp.example/realms/main/.well-known/openid-configuration', clientId: 'corp', clientSecret: 'corp-secret', scopes: ['openid', 'email', 'profile'] },
      { id: 'partner-idp', discoveryUrl: 'https://partner.example/.well-known/openid-configuration', clientId: 'partner', clientSecret: null, scopes: ['openid', 'email', 'groups'] },
    ]);
    expect(config.social).toMatchObject({ trustedProviders: ['corp', 'google'], allowDifferentEmails: true, disableImplicitSignUp: ['partner-idp'], disableSignUp: ['corp', 'github'] });
    expect(config.disableSignUp).toBe(true);
  });

  it('lists every bad social setting at once, by name', () => {
    const found = problems({
      AUTH_APPLE_PRIVATE_KEY: 'not a key',
      AUTH_GITHUB_TOKEN_URL: 'not a url',
      AUTH_OIDC_PROVIDERS: 'corp,github,Bad_Name',
      AUTH_OIDC_CORP_CLIENT_ID: 'corp',
      AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS: 'gogle',
      AUTH_DISABLE_IMPLICIT_SIGN_UP: 'corp,microsft',
      AUTH_SOCIAL_DISABLE_SIGN_UP: 'githb',
    });
    expect(found).toEqual([
      'AUTH_GITHUB_TOKEN_URL: Invalid URL',
      'AUTH_APPLE_PRIVATE_KEY: must be the EC private key (PKCS#8 PEM, the .p8 file) Apple issued for Sign in with Apple',
      "AUTH_OIDC_PROVIDERS: 'github' is a built-in provider's id",
      "AUTH_OIDC_PROVIDERS: 'Bad_Name' must be lowercase letters, digits and dashes, starting with a letter",
      "AUTH_OIDC_CORP_DISCOVERY_URL: is required for 'corp' in AUTH_OIDC_PROVIDERS",
      "AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS: 'gogle' names no provider (built in or in AUTH_OIDC_PROVIDERS)",
      "AUTH_DISABLE_IMPLICIT_SIGN_UP: 'microsft' names no provider (built in or in AUTH_OIDC_PROVIDERS)",
      "AUTH_SOCIAL_DISABLE_SIGN_UP: 'githb' names no provider (built in or in AUTH_OIDC_PROVIDERS)",
    ]);
  });

  it('refuses a client id without its secret, and a secret without its id', () => {
    expect(
      problems({
        AUTH_DISCORD_CLIENT_ID: 'd',
        AUTH_ZOOM_CLIENT_SECRET: 'z',
        AUTH_APPLE_CLIENT_ID: 'com.example.web',
        AUTH_APPLE_TEAM_ID: 'TEAM123456',
        // Microsoft takes public clients.
        AUTH_MICROSOFT_CLIENT_ID: 'ms',
      }),
    ).toEqual([
      'AUTH_DISCORD_CLIENT_SECRET: is required with AUTH_DISCORD_CLIENT_ID',
      'AUTH_ZOOM_CLIENT_ID: is required with AUTH_ZOOM_CLIENT_SECRET',
      'AUTH_APPLE_CLIENT_SECRET: is required with AUTH_APPLE_CLIENT_ID, unless AUTH_APPLE_TEAM_ID, AUTH_APPLE_KEY_ID and AUTH_APPLE_PRIVATE_KEY sign it',
    ]);
  });

  it('documents each family of per-provider settings as one README row', () => {
    const rows = configurationTable().split('\n');
    expect(rows.filter((row) => row.includes('AUTH_<PROVIDER>_CLIENT_ID'))).toHaveLength(1);
    expect(rows.some((row) => row.startsWith('| `AUTH_GITHUB_CLIENT_ID`'))).toBe(false);
    expect(rows.find((row) => row.includes('AUTH_<PROVIDER>_JWKS_URL'))).toMatch(/for apple, facebook, google, microsoft \|$/);
    expect(rows.some((row) => row.includes('AUTH_OIDC_<NAME>_DISCOVERY_URL'))).toBe(true);
  });
});
