import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configurationTable, ConfigError, loadConfig } from './config/index.ts';
import { secretFileVariables } from './config/secret-files.ts';
import { configProblems as problems, minimalEnv } from './config.test-support.ts';

const folder = mkdtempSync(path.join(tmpdir(), 'portcullis-secret-files-'));
let written = 0;

/** A file holding `content`, as a mounted Docker or Kubernetes secret would. */
function secretFile(content: string): string {
  const file = path.join(folder, `secret-${++written}`);
  writeFileSync(file, content, { mode: 0o600 });
  return file;
}

afterAll(() => rmSync(folder, { recursive: true, force: true }));

const SECRET = 'a-secret-read-from-a-file-0123456789abcdef';
const { AUTH_SECRET: _secret, ...withoutSecret } = minimalEnv;

describe('settings read from *_FILE variables', () => {
  it('reads each from its file, without the trailing line break', () => {
    const signingKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const config = loadConfig({
      AUTH_SECRET_FILE: secretFile(`${SECRET}\n`),
      DATABASE_URL_FILE: secretFile('postgres://app:pa55@db.internal:5432/portcullis\r\n'),
      REDIS_URL_FILE: secretFile('redis://:pa55@cache.internal:6379\n'),
      SMTP_URL_FILE: secretFile('smtps://user:pa55@mail.example.com:465'),
      AUTH_SERVER_API_KEY_FILE: secretFile(`${'k'.repeat(40)}\n\n`),
      AUTH_CAPTCHA_PROVIDER: 'cloudflare-turnstile',
      AUTH_CAPTCHA_SECRET_KEY_FILE: secretFile('captcha-secret\n'),
      AUDIT_SIGNING_KEY_FILE: secretFile(signingKey),
      AUTH_GITHUB_CLIENT_ID: 'gh',
      AUTH_GITHUB_CLIENT_SECRET_FILE: secretFile('gh-secret\n'),
      AUTH_OIDC_PROVIDERS: 'corp-sso',
      AUTH_OIDC_CORP_SSO_DISCOVERY_URL: 'https://sso.example.com',
      AUTH_OIDC_CORP_SSO_CLIENT_ID: 'corp',
      AUTH_OIDC_CORP_SSO_CLIENT_SECRET_FILE: secretFile('corp-secret\n'),
    });
    expect(config.secret).toBe(SECRET);
    expect(config.databaseUrl).toBe('postgres://app:pa55@db.internal:5432/portcullis');
    expect(config.mail.smtpUrl).toBe('smtps://user:pa55@mail.example.com:465');
    expect(config.serverApiKey).toBe('k'.repeat(40));
    expect(config.captcha?.secretKey).toBe('captcha-secret');
    expect(config.audit.signingKey?.asymmetricKeyType).toBe('ed25519');
    expect(config.social.providers.github?.clientSecret).toBe('gh-secret');
    expect(config.social.oidc[0]?.clientSecret).toBe('corp-secret');
  });

  it("reads Apple's private key, a PEM of several lines, from its .p8 file", () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const config = loadConfig({
      ...minimalEnv,
      AUTH_APPLE_CLIENT_ID: 'com.example.web',
      AUTH_APPLE_TEAM_ID: 'TEAM',
      AUTH_APPLE_KEY_ID: 'KEY',
      AUTH_APPLE_PRIVATE_KEY_FILE: secretFile(pem),
    });
    expect(config.social.providers.apple?.privateKey).toBe(pem.trim());
  });

  it('refuses a setting given both ways, naming both variables', () => {
    expect(problems({ AUTH_SECRET_FILE: secretFile(SECRET) })).toEqual(['AUTH_SECRET_FILE: and AUTH_SECRET are both set; set one of them']);
  });

  it('names the variable and the path of a file that cannot be read or is empty, never a value', () => {
    const missing = path.join(folder, 'not-there');
    const empty = secretFile('\n');
    const found = problems({ DATABASE_URL_FILE: missing, SMTP_URL_FILE: folder, AUTH_SERVER_API_KEY_FILE: empty, DATABASE_URL: '' });
    expect(found).toEqual([
      `DATABASE_URL_FILE: cannot read ${missing} (ENOENT)`,
      `SMTP_URL_FILE: cannot read ${folder} (EISDIR)`,
      `AUTH_SERVER_API_KEY_FILE: ${empty} is empty`,
    ]);
  });

  it("judges a file's content as the setting's own value, without repeating it", () => {
    const tooShort = 'short-secret-from-a-file';
    let refusal: unknown;
    try {
      loadConfig({ ...withoutSecret, NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example.com', AUTH_SECRET_FILE: secretFile(tooShort) });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as ConfigError).problems).toEqual(['AUTH_SECRET: must be at least 32 characters']);
    expect((refusal as ConfigError).message).not.toContain(tooShort);
  });

  it('leaves other *_FILE variables alone: only secrets come from files', () => {
    expect(loadConfig({ ...minimalEnv, LOG_LEVEL_FILE: path.join(folder, 'not-there') }).logLevel).toBe('info');
  });

  it('lists settings the configuration declares, each shown with its _FILE variant in the table', () => {
    const table = configurationTable();
    for (const name of secretFileVariables) {
      const row = /^AUTH_[A-Z]+_CLIENT_SECRET$/.test(name) ? 'AUTH_<PROVIDER>_CLIENT_SECRET' : name;
      expect(table, name).toContain(`| \`${row}\` or \`${row}_FILE\` |`);
    }
  });
});
