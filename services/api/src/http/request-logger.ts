import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type PinoLike = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * `request.log` that builds its pino child (the request id bound in) only when a line at an enabled level is
 * written. fastify builds one for every request, and most requests write nothing at the deployed level: on a
 * cached get-session the child alone was about 3% of the api's CPU.
 */
class DeferredRequestLogger {
  private built: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: PinoLike,
    private readonly bindings: Record<string, unknown>,
  ) {}

  get level(): string {
    return this.built?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Record<string, unknown>, options?: Record<string, unknown>): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }

  isLevelEnabled(level: string): boolean {
    return (this.built as PinoLike | null)?.isLevelEnabled(level) ?? this.parent.isLevelEnabled(level);
  }

  private write(level: LevelName, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it: pino's overloads take no plain spread
    (this.logger()[level] as (...a: unknown[]) => void)(...args);
  }

  private logger(): FastifyBaseLogger {
    return (this.built ??= this.parent.child(this.bindings));
  }
}

/** fastify's `childLoggerFactory`: a deferred child, unless the route asks for a level or serializers of its own. */
export const deferredRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = function (logger, bindings, options) {
  if (Object.keys(options).length > 0) return logger.child(bindings, options);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it (see the class)
  return new DeferredRequestLogger(logger as PinoLike, bindings) as unknown as FastifyBaseLogger;
};
