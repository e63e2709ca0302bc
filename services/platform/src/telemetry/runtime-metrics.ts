import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { DatabasePool } from 'slonik';
import type { Redis } from 'ioredis';
import { passwordWorkUnderWay } from '../crypto/password.ts';
import { instruments } from './telemetry.ts';

/** How long one event-loop delay figure covers: the histogram starts afresh after each. */
const EVENT_LOOP_WINDOW_MS = 10_000;

/**
 * The process' own figures, for every service: event-loop delay (perf_hooks, over the last window),
 * observed on collection. Returns a stop function.
 */
export function observeEventLoop(): () => void {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let last = { mean: 0, p99: 0, max: 0 };
  const window = setInterval(() => {
    // Nanoseconds to milliseconds; an empty histogram reports NaN for its mean.
    last = { mean: (histogram.mean || 0) / 1e6, p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 };
    histogram.reset();
  }, EVENT_LOOP_WINDOW_MS);
  window.unref();
  const gauge = instruments((meter) => meter.createObservableGauge('portcullis.event_loop.delay', { unit: 'ms', description: 'Event-loop delay over the last 10 s (perf_hooks monitorEventLoopDelay)' }))();
  const observe = (result: { observe(value: number, attributes: Record<string, string>): void }): void => {
    result.observe(last.mean, { stat: 'mean' });
    result.observe(last.p99, { stat: 'p99' });
    result.observe(last.max, { stat: 'max' });
  };
  gauge.addCallback(observe);
  return () => {
    clearInterval(window);
    histogram.disable();
    gauge.removeCallback(observe);
  };
}

/** Postgres pool use (slonik's pool state), under `pool` (the api's read models, the projector's, …). */
export function observeDatabasePool(pool: Pick<DatabasePool, 'state'>, name: string): void {
  const gauge = instruments((meter) => meter.createObservableGauge('portcullis.db.pool.connections', { description: 'Postgres pool connections by state (acquired, idle, pending) and clients waiting for one' }))();
  gauge.addCallback((result) => {
    const state = pool.state();
    result.observe(state.acquiredConnections, { pool: name, state: 'acquired' });
    result.observe(state.idleConnections, { pool: name, state: 'idle' });
    result.observe(state.pendingConnections, { pool: name, state: 'pending' });
    result.observe(state.waitingClients, { pool: name, state: 'waiting' });
  });
}

/**
 * Redis: whether the client is ready (1) or not (0, with its status), and the commands sent, counted at the
 * client's `sendCommand`, which single commands, pipelines and transactions all go through.
 */
export function observeRedis(redis: Redis, name: string): void {
  const made = instruments((meter) => ({
    up: meter.createObservableGauge('portcullis.redis.up', { description: 'Whether the Redis client is ready (1) or not (0)' }),
    commands: meter.createCounter('portcullis.redis.commands', { description: 'Commands sent to Redis' }),
  }))();
  made.up.addCallback((result) => result.observe(redis.status === 'ready' ? 1 : 0, { client: name, status: redis.status }));
  const send = redis.sendCommand.bind(redis);
  const attributes = { client: name };
  redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    made.commands.add(1, attributes);
    return send(...args);
  });
}

/** argon2 computations running or waiting for a lane in this process (the password-hashing queue). */
export function observePasswordHashing(): void {
  const gauge = instruments((meter) => meter.createObservableGauge('portcullis.password_hashing.queue', { description: 'argon2 computations running or waiting for a lane' }))();
  gauge.addCallback((result) => result.observe(passwordWorkUnderWay()));
}
