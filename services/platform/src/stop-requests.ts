/**
 * Calls `stop` when this service is asked to stop: SIGTERM (an orchestrator, or `npm start` stopping),
 * SIGINT (Ctrl-C), or, when a supervisor started it with an IPC channel (`npm start` does), that channel
 * closing. The channel closes however the supervisor ends, a SIGKILL included, so no service outlives it
 * holding its port and database connections.
 */
export function onStopRequest(stop: (reason: string) => void): void {
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (process.channel) {
    // Listened to only for its end: it must not keep the process alive by itself.
    process.channel.unref();
    process.once('disconnect', () => stop('supervisor gone'));
  }
}
