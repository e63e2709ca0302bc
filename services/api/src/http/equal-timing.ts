/**
 * Runs `work` and answers no sooner than `minimumMs` after it started, whatever happened, so that the time
 * an answer takes does not tell whether an account exists (the slow path writes and mails, the fast one
 * does nothing). better-auth uses the same floor (500 ms) on send-verification-email.
 */
export async function withMinimumDuration<T>(minimumMs: number, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    const remaining = minimumMs - (performance.now() - started);
    if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
  }
}
