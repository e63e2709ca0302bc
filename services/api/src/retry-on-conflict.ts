import { DomainError } from '@portcullis/contracts';
import { WrongExpectedVersionError } from '@portcullis/platform';

/**
 * Runs load-decide-append again when another writer got to a stream first; the second attempt decides on
 * the newer state, after a short random wait so that racing writers spread out. A conflict that persists
 * is answered as one (409), never as a failure of the server.
 */
export async function withRetryOnConflict<T>(attempt: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      if (i >= attempts) throw new DomainError('CONFLICT', { cause: error });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 * 2 ** i)));
    }
  }
}
