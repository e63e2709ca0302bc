import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths that may hold secrets anywhere a log line could carry them: request headers, bodies and our own
 * objects. Censored rather than dropped, so a reader sees that the field was there.
 */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'res.headers["set-auth-token"]',
  '*.password',
  '*.newPassword',
  '*.currentPassword',
  '*.token',
  '*.secret',
  'password',
  'token',
];

export function createLogger(options: { name: string; level: LoggerOptions['level'] }): Logger {
  return pino({
    name: options.name,
    level: options.level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
  });
}
