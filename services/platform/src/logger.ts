import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths that may hold secrets anywhere a log line could carry them: request headers, bodies and our own
 * objects. Censored rather than dropped, so a reader sees that the field was there.
 */
const redactedPaths = [
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
  // Personal data: a log line outlives the erasure of its user (issue 25).
  '*.email',
  'email',
];

export const logFormats = ['auto', 'json', 'pretty'] as const;
/** LOG_FORMAT: `auto` decides by whether standard output is a terminal. */
export type LogFormatSetting = (typeof logFormats)[number];
export type LogFormat = Exclude<LogFormatSetting, 'auto'>;

/** People read a terminal; everything else (a pipe, a file, a log collector) is read by programs. */
export function chooseLogFormat(setting: LogFormatSetting, stdoutIsTerminal: boolean): LogFormat {
  if (setting !== 'auto') return setting;
  return stdoutIsTerminal ? 'pretty' : 'json';
}

export interface CreateLoggerOptions {
  name: string;
  level: LoggerOptions['level'];
  format: LogFormatSetting;
  serializers?: LoggerOptions['serializers'];
  /** Where lines go instead of standard output (a spec reading what was written). */
  destination?: NodeJS.WritableStream;
}

/**
 * Every logger of every service is made here, so redaction holds whatever the format: pino censors the
 * line before it is written, and the pretty printer only reformats what it is given. JSON is written as
 * pino writes it, with nothing in between.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const settings: LoggerOptions = {
    name: options.name,
    level: options.level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    ...(options.serializers ? { serializers: options.serializers } : {}),
  };
  const format = chooseLogFormat(options.format, options.destination ? false : process.stdout.isTTY === true);
  if (format === 'json') return options.destination ? pino(settings, options.destination as DestinationStream) : pino(settings);
  return pino(settings, prettyStream(options.destination));
}

/**
 * pino's usual human-readable output, written synchronously (no worker thread, nothing lost on exit). Loaded
 * only when asked for: a deployment writing JSON never pays for it.
 */
function prettyStream(destination: NodeJS.WritableStream | undefined): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({
    sync: true,
    destination: destination ?? 1,
    // Colour follows the terminal (and NO_COLOR); a spec's sink gets plain text.
    ...(destination ? { colorize: false } : {}),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
}
