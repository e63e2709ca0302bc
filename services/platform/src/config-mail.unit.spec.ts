import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config/index.ts';
import { configProblems as problems, minimalEnv as base } from './config.test-support.ts';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'config-mail-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let files = 0;

/** A file in a scratch directory, by default one that looks like a CA's PEM (its content is not parsed here). */
function pemFile(content = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'): string {
  const file = path.join(scratch, `file-${(files += 1)}.pem`);
  writeFileSync(file, content);
  return file;
}

describe('configuration of the email lifecycle and the mailer', () => {
  it("defaults to better-auth's behaviour, with mail on and the dev mailbox", () => {
    const config = loadConfig(base);
    expect(config.emailVerification).toEqual({ enabled: true, expiresInSeconds: 3600, required: false, sendOnSignUp: false, autoSignIn: false });
    expect(config.resetPassword).toEqual({ enabled: true, expiresInSeconds: 3600, revokeSessions: false });
    expect(config.changeEmail).toEqual({ enabled: false });
    expect(config.deleteUser).toEqual({ enabled: false, sendVerification: false, expiresInSeconds: 86400 });
    expect(config.mail).toEqual({ smtpUrl: null, from: 'Portcullis <no-reply@localhost>', productName: 'Portcullis', locale: 'en', templatesDir: null });
    expect(config.kafka).toBeNull();
    expect(config.serverApiKey).toBeNull();
    expect(config.mailer).toEqual({ retryWindowSeconds: 86400, retryBaseMs: 2000, retryMaxMs: 300000, concurrency: 4, pollIntervalMs: 1000 });
  });

  it('sends on sign-up when verification is required, unless told otherwise', () => {
    expect(loadConfig({ ...base, AUTH_REQUIRE_EMAIL_VERIFICATION: 'true' }).emailVerification.sendOnSignUp).toBe(true);
    expect(
      loadConfig({ ...base, AUTH_REQUIRE_EMAIL_VERIFICATION: 'true', AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP: 'false' }).emailVerification.sendOnSignUp,
    ).toBe(false);
  });

  it('reads SMTP and Kafka settings', () => {
    const config = loadConfig({ ...base, SMTP_URL: 'smtps://user:pass@mail.example.com:465', KAFKA_BROKERS: 'k1:9092,k2:9092', KAFKA_TOPIC_PREFIX: 'staging.' });
    expect(config.mail.smtpUrl).toBe('smtps://user:pass@mail.example.com:465');
    expect(config.kafka).toEqual({
      brokers: ['k1:9092', 'k2:9092'],
      clientId: 'portcullis',
      topicPrefix: 'staging.',
      mailerGroup: 'portcullis-mailer',
      sessionTimeoutMs: 30000,
      partitions: 6,
      replicationFactor: null,
      ssl: null,
      sasl: null,
    });
  });

  it('reads Kafka topic, TLS and SASL settings', () => {
    const caFile = pemFile();
    const config = loadConfig({
      ...base,
      KAFKA_BROKERS: 'k1:9093',
      KAFKA_TOPIC_PARTITIONS: '12',
      KAFKA_TOPIC_REPLICATION_FACTOR: '3',
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: caFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'portcullis',
      KAFKA_SASL_PASSWORD: 'correct horse',
    });
    expect(config.kafka).toMatchObject({
      partitions: 12,
      replicationFactor: 3,
      ssl: { caFile },
      sasl: { mechanism: 'scram-sha-512', username: 'portcullis', password: 'correct horse' },
    });
    expect(loadConfig({ ...base, KAFKA_BROKERS: 'k1:9093', KAFKA_SSL: '1' }).kafka?.ssl).toEqual({ caFile: null });
  });

  it('takes the SASL password from KAFKA_SASL_PASSWORD_FILE', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kafka-secret-'));
    try {
      const file = path.join(dir, 'password');
      writeFileSync(file, 'from a file\n');
      const config = loadConfig({ ...base, KAFKA_BROKERS: 'k1:9093', KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD_FILE: file });
      expect(config.kafka?.sasl).toEqual({ mechanism: 'plain', username: 'u', password: 'from a file' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses SASL settings that could not log in, and a CA file without TLS or without a certificate', () => {
    const kafka = { KAFKA_BROKERS: 'k1:9093' };
    const caFile = pemFile();
    expect(problems({ ...kafka, KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: 'u' })).toEqual([
      'KAFKA_SASL_MECHANISM: needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD',
    ]);
    expect(problems({ ...kafka, KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toEqual([
      'KAFKA_SASL_MECHANISM: is required when KAFKA_SASL_USERNAME or KAFKA_SASL_PASSWORD is set',
    ]);
    expect(problems({ ...kafka, KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toEqual([
      expect.stringMatching(/^KAFKA_SASL_MECHANISM: /),
    ]);
    expect(problems({ ...kafka, KAFKA_SSL_CA_FILE: caFile })).toEqual(['KAFKA_SSL_CA_FILE: needs KAFKA_SSL=true']);
    for (const unusable of [path.join(path.dirname(caFile), 'missing.pem'), pemFile('not a certificate\n')]) {
      expect(problems({ ...kafka, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: unusable })).toEqual(['KAFKA_SSL_CA_FILE: cannot be read, or holds no PEM certificate']);
    }
    expect(problems({ ...kafka, KAFKA_TOPIC_PARTITIONS: '0' })).toEqual([expect.stringMatching(/^KAFKA_TOPIC_PARTITIONS: /)]);
    expect(problems({ ...kafka, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: caFile, KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toEqual([]);
  });

  it('refuses production without SMTP_URL, which would leave every mail in the dev mailbox', () => {
    expect(problems({ NODE_ENV: 'production' })).toEqual([expect.stringMatching(/^SMTP_URL: is required in production/)]);
    expect(problems({ NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example.com:587' })).toEqual([]);
    for (const env of ['development', 'test']) expect(problems({ NODE_ENV: env }), env).toEqual([]);
  });

  it('lists every bad mail setting at once, by name', () => {
    const found = problems({
      SMTP_URL: 'http://mail.example.com',
      KAFKA_BROKERS: 'k1',
      AUTH_SERVER_API_KEY: 'short',
      AUTH_RESET_PASSWORD_EXPIRES_IN: '0',
      MAILER_RETRY_WINDOW_SECONDS: '-1',
      MAIL_LOCALE: 'fr',
    });
    for (const name of ['SMTP_URL', 'KAFKA_BROKERS', 'AUTH_SERVER_API_KEY', 'AUTH_RESET_PASSWORD_EXPIRES_IN', 'MAILER_RETRY_WINDOW_SECONDS']) {
      expect(found.some((p) => p.startsWith(`${name}:`)), `${name} in ${JSON.stringify(found)}`).toBe(true);
    }
    expect(found).toContain('MAIL_LOCALE: must be a language the mails are shipped in: en, de');
  });

  it('reads the mail language and the templates directory', () => {
    expect(loadConfig({ ...base, MAIL_LOCALE: 'de', MAIL_TEMPLATES_DIR: '/etc/portcullis/mail' }).mail).toMatchObject({ locale: 'de', templatesDir: '/etc/portcullis/mail' });
  });
});
