/**
 * Waits `ms`, or less when `signal` aborts: a background loop's pause between rounds, which a stop must
 * cut short. It resolves either way (a stop is not an error for the loop), and leaves no listener behind.
 */
export function pauseUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
