import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { mailLocales } from '@portcullis/contracts';
import { flag, lifetime, seconds, section, setting } from './settings.ts';

/** Checked as the configuration loads: a CA file the client cannot use would otherwise fail each connection. */
function holdsPemCertificate(path: string): boolean {
  try {
    return readFileSync(path, 'utf8').includes('-----BEGIN CERTIFICATE-----');
  } catch {
    return false;
  }
}

/** The email lifecycle (verification, reset, change, deletion) and how its mail travels. */
export const mailSettings = section(
  'Email lifecycle and mail',
  {
    AUTH_EMAIL_VERIFICATION_ENABLED: setting(flag(true), 'send-verification-email works (off: `VERIFICATION_EMAIL_NOT_ENABLED`)'),
    AUTH_EMAIL_VERIFICATION_EXPIRES_IN: setting(lifetime(3600), 'verification link lifetime, seconds'),
    AUTH_REQUIRE_EMAIL_VERIFICATION: setting(flag(false), 'sign-in refuses unverified emails (403) and re-sends the link; sign-up opens no session'),
    AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP: setting(
      z.enum(['true', 'false', '1', '0']).optional(),
      'sign-up mails a verification link',
      '= `AUTH_REQUIRE_EMAIL_VERIFICATION`',
    ),
    AUTH_EMAIL_VERIFICATION_AUTO_SIGN_IN: setting(flag(false), 'a used verification link signs the user in'),
    AUTH_RESET_PASSWORD_ENABLED: setting(flag(true), 'password reset by mail'),
    AUTH_RESET_PASSWORD_EXPIRES_IN: setting(lifetime(3600), 'reset link lifetime, seconds'),
    AUTH_RESET_PASSWORD_REVOKE_SESSIONS: setting(flag(false), 'a reset ends every session of the user'),
    AUTH_CHANGE_EMAIL_ENABLED: setting(flag(false), 'change-email works (off: `CHANGE_EMAIL_DISABLED`)'),
    AUTH_DELETE_USER_ENABLED: setting(flag(false), 'delete-user works (off: 404)'),
    AUTH_DELETE_USER_VERIFICATION: setting(flag(false), 'delete-user mails a confirmation link first'),
    AUTH_DELETE_USER_EXPIRES_IN: setting(lifetime(86400), 'deletion link lifetime, seconds'),
    SMTP_URL: setting(
      z
        .string()
        .regex(/^smtps?:\/\/[^/]/, 'must be an smtp:// or smtps:// URL')
        .optional(),
      '`smtp://` or `smtps://` URL (credentials in it) the mailer sends through; required when `NODE_ENV=production`',
      'none (the dev mailbox)',
    ),
    MAIL_FROM: setting(z.string().min(3).default('Portcullis <no-reply@localhost>'), 'sender of every mail'),
    MAIL_PRODUCT_NAME: setting(z.string().min(1).max(100).default('Portcullis'), 'the name the mails speak of'),
    MAIL_LOCALE: setting(
      z.enum(mailLocales, { error: () => `must be a language the mails are shipped in: ${mailLocales.join(', ')}` }).default('en'),
      `the language of the mails: ${mailLocales.map((l) => `\`${l}\``).join(', ')} ([mail](mail.md))`,
    ),
    MAIL_TEMPLATES_DIR: setting(
      z.string().min(1).optional(),
      "a directory whose template files (`<kind>.subject.txt`, `<kind>.text.txt`, `<kind>.html`) replace the shipped ones of `MAIL_LOCALE`; the mailer checks them at start and refuses to start on a bad one ([mail](mail.md))",
      'none (the shipped templates)',
    ),
    KAFKA_BROKERS: setting(
      z
        .string()
        .regex(/^[A-Za-z0-9.-]+:\d+(,[A-Za-z0-9.-]+:\d+)*$/, 'must be host:port[,host:port...]')
        .optional(),
      '`host:port,...`: mail jobs travel over Kafka (relay in the projector, consumer group in the mailer)',
    ),
    KAFKA_CLIENT_ID: setting(z.string().regex(/^[A-Za-z0-9._-]+$/).default('portcullis'), 'Kafka client id'),
    KAFKA_TOPIC_PREFIX: setting(z.string().regex(/^[A-Za-z0-9._-]*$/).default(''), 'a prefix for the Kafka topic names'),
    KAFKA_MAILER_GROUP: setting(z.string().regex(/^[A-Za-z0-9._-]+$/).default('portcullis-mailer'), "the mailer's consumer group"),
    KAFKA_SESSION_TIMEOUT_MS: setting(
      z.coerce.number().int().min(6000).max(1_800_000).default(30_000),
      "how long a mailer may go unheard before the group gives its partitions to the others: the longest a killed mailer's mail waits (within the broker's `group.min.session.timeout.ms` and `group.max.session.timeout.ms`)",
    ),
    KAFKA_TOPIC_PARTITIONS: setting(
      z.coerce.number().int().min(1).max(1000).default(6),
      'partitions of each mail topic the relay creates (an existing topic keeps its own): the most mailers that share one kind of mail',
    ),
    KAFKA_TOPIC_REPLICATION_FACTOR: setting(
      z.coerce.number().int().min(1).max(32).optional(),
      'replicas of each mail topic the relay creates',
      "the broker's `default.replication.factor`",
    ),
    KAFKA_SSL: setting(flag(false), 'talk to the brokers over TLS (certificates checked against the system CAs, or `KAFKA_SSL_CA_FILE`)'),
    KAFKA_SSL_CA_FILE: setting(z.string().min(1).refine(holdsPemCertificate, 'cannot be read, or holds no PEM certificate').optional(), "path of a PEM file of the CA(s) that signed the brokers' certificates; needs `KAFKA_SSL`"),
    KAFKA_SASL_MECHANISM: setting(z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(), 'SASL authentication with the brokers (use with `KAFKA_SSL`: `plain` sends the password as it is)', 'none'),
    KAFKA_SASL_USERNAME: setting(z.string().min(1).optional(), 'SASL user; needs `KAFKA_SASL_MECHANISM`'),
    KAFKA_SASL_PASSWORD: setting(z.string().min(1).optional(), 'SASL password; needs `KAFKA_SASL_MECHANISM`'),
    MAILER_RETRY_WINDOW_SECONDS: setting(
      seconds(86_400),
      'seconds a mail that fails temporarily is retried, from its first attempt, before it is dead-lettered (`0`: never retried): the longest SMTP outage that loses no mail',
    ),
    MAILER_RETRY_BASE_MS: setting(z.coerce.number().int().positive().default(2000), 'backoff after a temporary failure: base · 2^(attempt−1), ±20 %'),
    MAILER_RETRY_MAX_MS: setting(
      z.coerce.number().int().positive().default(5 * 60 * 1000),
      'the longest backoff: during an outage, how long the relay may be back before the earliest waiting mail finds out (and the rest follow)',
    ),
    MAILER_CONCURRENCY: setting(z.coerce.number().int().min(1).max(64).default(4), 'parallel deliveries'),
    MAILER_POLL_INTERVAL_MS: setting(z.coerce.number().int().positive().default(1000), 'how often an idle mailer looks for due retries'),
    MAILER_METRICS_PORT: setting(
      z.coerce.number().int().min(0).max(65535).default(9465),
      "the mailer's own port for `/metrics`, `/healthz` and `/readyz` (on `HOST`); `0` picks a free one",
    ),
  },
  (c) => ({
    emailVerification: {
      enabled: c.AUTH_EMAIL_VERIFICATION_ENABLED,
      expiresInSeconds: c.AUTH_EMAIL_VERIFICATION_EXPIRES_IN,
      /** Sign-in refuses unverified emails (403) and re-sends the mail. */
      required: c.AUTH_REQUIRE_EMAIL_VERIFICATION,
      // better-auth: sendOnSignUp defaults to requireEmailVerification.
      sendOnSignUp:
        c.AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP === undefined
          ? c.AUTH_REQUIRE_EMAIL_VERIFICATION
          : ['true', '1'].includes(c.AUTH_EMAIL_VERIFICATION_SEND_ON_SIGN_UP),
      autoSignIn: c.AUTH_EMAIL_VERIFICATION_AUTO_SIGN_IN,
    },
    resetPassword: {
      enabled: c.AUTH_RESET_PASSWORD_ENABLED,
      expiresInSeconds: c.AUTH_RESET_PASSWORD_EXPIRES_IN,
      revokeSessions: c.AUTH_RESET_PASSWORD_REVOKE_SESSIONS,
    },
    changeEmail: { enabled: c.AUTH_CHANGE_EMAIL_ENABLED },
    deleteUser: {
      enabled: c.AUTH_DELETE_USER_ENABLED,
      sendVerification: c.AUTH_DELETE_USER_VERIFICATION,
      expiresInSeconds: c.AUTH_DELETE_USER_EXPIRES_IN,
    },
    mail: {
      smtpUrl: c.SMTP_URL ?? null,
      from: c.MAIL_FROM,
      productName: c.MAIL_PRODUCT_NAME,
      locale: c.MAIL_LOCALE,
      templatesDir: c.MAIL_TEMPLATES_DIR ?? null,
    },
    kafka: c.KAFKA_BROKERS
      ? {
          brokers: c.KAFKA_BROKERS.split(','),
          clientId: c.KAFKA_CLIENT_ID,
          topicPrefix: c.KAFKA_TOPIC_PREFIX,
          mailerGroup: c.KAFKA_MAILER_GROUP,
          sessionTimeoutMs: c.KAFKA_SESSION_TIMEOUT_MS,
          partitions: c.KAFKA_TOPIC_PARTITIONS,
          replicationFactor: c.KAFKA_TOPIC_REPLICATION_FACTOR ?? null,
          ssl: c.KAFKA_SSL ? { caFile: c.KAFKA_SSL_CA_FILE ?? null } : null,
          sasl:
            c.KAFKA_SASL_MECHANISM && c.KAFKA_SASL_USERNAME && c.KAFKA_SASL_PASSWORD
              ? { mechanism: c.KAFKA_SASL_MECHANISM, username: c.KAFKA_SASL_USERNAME, password: c.KAFKA_SASL_PASSWORD }
              : null,
        }
      : null,
    mailer: {
      retryWindowSeconds: c.MAILER_RETRY_WINDOW_SECONDS,
      retryBaseMs: c.MAILER_RETRY_BASE_MS,
      retryMaxMs: c.MAILER_RETRY_MAX_MS,
      concurrency: c.MAILER_CONCURRENCY,
      pollIntervalMs: c.MAILER_POLL_INTERVAL_MS,
    },
    mailerMetricsPort: c.MAILER_METRICS_PORT,
  }),
);
