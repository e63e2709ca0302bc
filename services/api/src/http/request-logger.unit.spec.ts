import { Writable } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { deferredRequestLogger } from './request-logger.ts';

function capturedLogger(level: string): { parent: FastifyBaseLogger; lines: Record<string, unknown>[]; childrenBuilt: () => number } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const parent = pino({ level }, sink) as unknown as FastifyBaseLogger;
  let built = 0;
  const child = parent.child.bind(parent);
  parent.child = ((bindings: Record<string, unknown>, options?: Record<string, unknown>) => {
    built += 1;
    return child(bindings, options);
  });
  return { parent, lines, childrenBuilt: () => built };
}

const requestLogger = (parent: FastifyBaseLogger, options: Record<string, unknown> = {}): FastifyBaseLogger =>
  deferredRequestLogger.call({} as FastifyInstance, parent, { reqId: 'req-1' }, options, {} as never);

describe('deferredRequestLogger', () => {
  it('builds no child for lines below the level, and writes enabled ones with the request id bound', () => {
    const { parent, lines, childrenBuilt } = capturedLogger('warn');
    const log = requestLogger(parent);

    log.info({ route: '/get-session' }, 'incoming request');
    log.debug('detail');
    expect(childrenBuilt()).toBe(0);
    expect(lines).toEqual([]);

    log.warn({ position: 7 }, 'projections did not catch up');
    log.error('and again');
    expect(childrenBuilt()).toBe(1);
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ['req-1', 'projections did not catch up'],
      ['req-1', 'and again'],
    ]);
    expect(lines[0]!.position).toBe(7);
  });

  it('answers the level and level checks as the logger it stands for', () => {
    const { parent } = capturedLogger('info');
    const log = requestLogger(parent) as FastifyBaseLogger & { isLevelEnabled(level: string): boolean };
    expect(log.level).toBe('info');
    expect(log.isLevelEnabled('info')).toBe(true);
    expect(log.isLevelEnabled('debug')).toBe(false);
  });

  it('hands a route with a level of its own a real child at once', () => {
    const { parent, lines, childrenBuilt } = capturedLogger('warn');
    const log = requestLogger(parent, { level: 'debug' });
    expect(childrenBuilt()).toBe(1);
    log.debug('route-level detail');
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([['req-1', 'route-level detail']]);
  });
});
