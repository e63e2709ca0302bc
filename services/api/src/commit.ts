import { projectionsConcernedWith } from '@portcullis/contracts';
import { WrongExpectedVersionError, type StreamWrite } from '@portcullis/platform';
import type { ApiContext } from './context.ts';

/**
 * Appends atomically, then waits until the projections the api reads from, those the appended events
 * concern, have applied the append, so the caller's next request sees its own write. `unchanged` are
 * streams the append only requires at a version (see `unchangedStream`); with nothing to write, nothing
 * is checked either.
 */
export async function commit(ctx: ApiContext, writes: readonly StreamWrite[], unchanged: readonly StreamWrite[] = []): Promise<number | null> {
  const nonEmpty = writes.filter((w) => w.events.length > 0);
  if (nonEmpty.length === 0) return null;
  const { position } = await ctx.store.append(unchanged.length > 0 ? [...nonEmpty, ...unchanged] : nonEmpty);
  const types = new Set(nonEmpty.flatMap((w) => w.events.map((e) => e.type)));
  await ctx.waiter.waitFor(position, projectionsConcernedWith(types, ctx.waiter.projections));
  return position;
}

/**
 * Runs load-decide-append again when another writer got to a stream first; the second attempt decides on
 * the newer state. Bounded, because persistent conflict means a hot stream, which is a bug to surface.
 */
export async function withRetryOnConflict<T>(attempt: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError) || i >= attempts) throw error;
    }
  }
}
