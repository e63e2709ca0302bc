import { describe, expect, it } from 'vitest';
import { isAcceptedVariable } from './variables.ts';

describe('isAcceptedVariable', () => {
  it('accepts settings, the file twins of secrets, deployment-named providers and the runtime\'s own', () => {
    for (const name of ['DATABASE_URL', 'AUTH_TRUSTED_PROXIES', 'AUTH_SECRET_FILE', 'AUTH_GITHUB_CLIENT_SECRET_FILE', 'AUTH_OIDC_ACME_SSO_CLIENT_ID', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'NODE_OPTIONS']) {
      expect(isAcceptedVariable(name), name).toBe(true);
    }
  });

  it('refuses typos, file twins of settings that are not secret, and parts no OIDC provider has', () => {
    for (const name of ['AUTH_TRUSTED_PROXY', 'BASE_URL_FILE', 'AUTH_OIDC_ACME_CLIENT_KEY', 'OTEL_SERVICE', 'PATH']) {
      expect(isAcceptedVariable(name), name).toBe(false);
    }
  });
});
